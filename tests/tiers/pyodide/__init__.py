"""The Worker's Python in real Pyodide on Miniflare's bindings."""
