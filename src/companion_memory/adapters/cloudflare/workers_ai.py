"""The Embedder and Reranker ports on the Worker's Workers AI binding (``env.AI``); what
the models are sent and how their answers are read is in ``adapters/workers_ai_format.py``.

A binding that returns the REST API's envelope (``{"result": {...}, "success": true,
"errors": [], ...}``) unchanged is accepted too.
"""

from __future__ import annotations

from typing import Any

from ..workers_ai_format import MAX_BATCH, WorkersAIEmbedderCore, WorkersAIError, WorkersAIRerankerCore
from . import ffi


def _unwrap_envelope(answer: Any, model: str) -> Any:
    if isinstance(answer, dict) and "result" in answer and "success" in answer:
        if answer["success"] is False:
            raise WorkersAIError(f"{model}: {answer.get('errors')}")
        return answer["result"]
    return answer


class BindingTransport:
    """Runs models on the Worker's Workers AI binding (``env.AI``)."""

    def __init__(self, binding: Any) -> None:
        self._binding = binding

    async def run(self, model: str, inputs: dict[str, Any]) -> Any:
        try:
            answer = ffi.to_py(await self._binding.run(model, ffi.to_js(inputs)))
        except Exception as error:  # broad on purpose: whatever the binding throws becomes the port's error
            raise WorkersAIError(f"{model}: {error}") from error
        return _unwrap_envelope(answer, model)


class WorkersAIEmbedder(WorkersAIEmbedderCore):
    """Implements ``ports.Embedder`` on a Workers AI binding (``self.env.AI``)."""

    def __init__(self, binding: Any, model: str, *, dimensions: int, batch_size: int = MAX_BATCH) -> None:
        super().__init__(BindingTransport(binding), model, dimensions=dimensions, batch_size=batch_size)


class WorkersAIReranker(WorkersAIRerankerCore):
    """Implements ``ports.Reranker`` on a Workers AI binding (``self.env.AI``)."""

    def __init__(self, binding: Any, model: str) -> None:
        super().__init__(BindingTransport(binding), model)
