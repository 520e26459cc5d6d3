"""The admin panel and the API's page in headless Chromium against the real local server."""
