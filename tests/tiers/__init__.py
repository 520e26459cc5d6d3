"""The engine tiers: the real D1 engine and wrangler, real Pyodide, headless Chromium, the real
coding-agent CLIs, and the fuzzers."""
