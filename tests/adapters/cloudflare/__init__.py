"""The Cloudflare adapters over fakes of the Worker's bindings."""
