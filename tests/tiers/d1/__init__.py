"""The real D1 engine (workerd's, in Miniflare) and the pinned wrangler."""
