"""The nightly jobs (``nightly/``): the dream, rollups, layers, consolidation and their sources."""
