"""In-memory fakes of the Cloudflare bindings, shaped like the real ones."""
