"""companion-memory: a long-term memory service for AI chat clients and agents."""

__version__ = "0.1.0"
