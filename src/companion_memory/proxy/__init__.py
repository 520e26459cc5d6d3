"""The chat gateway: routing, memory injection, provider adapters, streaming."""
