"""Clients of remote model APIs over ``httpx``: Workers AI's REST API, OpenAI-compatible
``/embeddings`` and Cohere/Jina/vLLM/llama.cpp/TEI-style ``/rerank`` endpoints.

``httpx`` works both in the local server and inside a Python Worker, so these adapters
run in either runtime. They never set timeouts of their own: the ``httpx.AsyncClient``
handed to them decides, and a timeout surfaces as a ``ModelAPIError`` like any other
failure.
"""

from __future__ import annotations


class ModelAPIError(Exception):
    """A model API refused a call, could not be reached, or answered something unusable.

    ``status`` is the HTTP status when there was a response, else ``None``.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
