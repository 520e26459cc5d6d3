"""HTTP surfaces: the REST memory API (and, later, chat, MCP and the admin panel)."""
