"""The OAuth 2.1 authorization server of ``/mcp``: client registration and metadata
documents, authorization requests and codes with PKCE, tokens and their revocation, the
owner's connected apps. Runtime-free, like the services."""
