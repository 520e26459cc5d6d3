"""Where the MCP endpoint answers. Its routes, the OAuth resource metadata published for
each of them, the audience a token is good at and the URL the hook installers write all
read these, so a path added here is served, advertised and accepted alike."""

from __future__ import annotations

from typing import Literal, get_args

McpPath = Literal["/mcp", "/memory-mcp"]
# The first is the one the server names when it names one (the default token audience).
MCP_PATHS: tuple[McpPath, ...] = get_args(McpPath)
