"""Clients of remote model APIs over ``httpx``: Workers AI's REST API, OpenAI-compatible
``/embeddings`` and Cohere/Jina/vLLM/llama.cpp/TEI-style ``/rerank`` endpoints; and the
``HttpClient`` port's plain GETs (the GitHub contents API).

``httpx`` works both in the local server and inside a Python Worker, so these adapters
run in either runtime. The model clients never set timeouts of their own: the ``httpx.AsyncClient``
handed to them decides, and a timeout surfaces as a ``ModelAPIError`` like any other
failure.
"""

from __future__ import annotations

from ..model_io import ModelAPIError

__all__ = ["ModelAPIError"]
