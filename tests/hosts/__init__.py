"""What runs the service (``hosts/``, ``src/entry.py``, ``scripts/``): the local server, the command line,
the hook installers, the Worker entry and its deploy script."""
