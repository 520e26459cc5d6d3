"""What starts the service on this machine: the command line, the local server (uvicorn,
its nightly schedule and queue consumer) and the coding-agent hook installers. The
Worker's host is ``src/entry.py``."""
