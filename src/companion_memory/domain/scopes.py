"""The scopes: the one currency of authorization. A key, an OAuth token and the system
itself hold a set of them (``application/principal.py``), and every use case names one."""

CHAT = "chat"
MEMORY_READ = "memory:read"
MEMORY_WRITE = "memory:write"
EXPORT = "export"
DEBUG = "debug"
OWNER = "owner"
GUIDE_DOG = "guide_dog"
# An OAuth client's protocol steps (discovery, registration, authorization, tokens,
# revocation): taken before it holds any credential, so every caller may.
OAUTH_CLIENT = "oauth:client"
