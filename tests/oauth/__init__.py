"""The OAuth 2.1 server for remote MCP clients (``oauth/``)."""
