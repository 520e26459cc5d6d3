"""Where the MCP endpoint and the admin panel answer. The MCP routes, the OAuth resource
metadata published for each of them, the audience a token is good at and the URL the
hook installers write all read ``MCP_PATHS``, so a path added here is served, advertised
and accepted alike; the API, the local server and the Worker's static assets read
``PANEL_PREFIXES``."""

from __future__ import annotations

from typing import Literal, get_args

McpPath = Literal["/mcp", "/memory-mcp"]
# The first is the one the server names when it names one (the default token audience).
MCP_PATHS: tuple[McpPath, ...] = get_args(McpPath)

# Where the admin panel is served (by the local server, or the Worker's static assets).
PANEL_PREFIXES = ("/admin", "/memory-admin")
