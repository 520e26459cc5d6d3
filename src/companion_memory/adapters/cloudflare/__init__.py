"""Adapters over the Cloudflare Worker bindings (D1, Vectorize, Workers AI, Queues)."""
