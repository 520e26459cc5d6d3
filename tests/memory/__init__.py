"""The memory services (``memory/``), through their use cases, on each database."""
