"""Runtime adapters: ``local`` for one machine, ``cloudflare`` for the Worker."""
