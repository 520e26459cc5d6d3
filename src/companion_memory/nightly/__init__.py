"""The nightly jobs (the dream, consolidation, layers, rollups and their summaries) and the sources they read. Runtime-free."""
