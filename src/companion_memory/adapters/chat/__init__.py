"""``ports.ChatModel`` adapters over HTTP (``httpx``, so they run locally and in the
Worker): ``openai_compatible`` for any ``/chat/completions`` endpoint, ``anthropic`` for
the Messages API. The Worker's ``AI`` binding has its own in
``adapters/cloudflare/workers_ai_chat.py``.

What they share: ``sse`` (parsing what providers stream, framing what we stream),
``completion`` (the OpenAI objects they build), ``usage`` (OpenAI usage both ways) and
``upstream`` (provider failures as ``UpstreamError``).
"""
