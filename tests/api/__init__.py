"""The surfaces (``api/``): REST, MCP, the OpenAI-compatible chat, the admin views, the OpenAPI document."""
