"""Bounded fuzzing of the REST operations (schemathesis) and of the MCP tools."""
