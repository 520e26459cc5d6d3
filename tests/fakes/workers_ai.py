"""A fake of the Workers AI binding (``env.AI``) for the text-embedding models, the
reranker and chat (text-generation) models.

``await run(model, inputs, options=None)`` follows the models' published schemas:

- ``{"text": str | [str, ...], "truncate_inputs"?: bool}`` → ``{"shape": [n, d], "data":
  [[...], ...], "pooling": ...}``; at most 100 strings (``"maxItems": 100``), none empty
  (``"minLength": 1``).
- bge-m3 only: ``{"contexts": [{"text"}...]}`` → ``{"response": [[...]], "shape", "pooling"}``
  (embeddings of the contexts) and ``{"query", "contexts"}`` → ``{"response": [{"id", "score"}]}``
  (contexts ranked by similarity to the query).
- ``@cf/baai/bge-reranker-base``: ``{"query", "contexts": [{"text"}...], "top_k"?}`` →
  ``{"response": [{"id", "score"}]}``, best first, cut to ``top_k`` rows (all rows when
  ``top_k`` is absent: the real default is undocumented); ``query`` and ``contexts``
  required, texts ``"minLength": 1``, ``top_k`` ``"minimum": 1``.

Input that fails the schema raises what the binding raises: workerd's
``InferenceUpstreamError`` named after the service's error (``AiError``) with
``"<internalCode>: <description>"``, i.e. ``AiError: 5006: Error: oneOf at '/' not met, ...``
(the exact validator detail after the code is modelled, not copied). An unknown model
raises ``AiError: 5007: No such model ...``.

- text generation: ``{"messages": [{role, content}...], "max_tokens"?, "temperature"?, ...,
  "stream"?}``. Classic models answer ``{"response": str, "usage"}``; newer ones (here
  gpt-oss) an OpenAI chat completion. With ``stream: true`` the answer is a
  ``ReadableStream`` of SSE bytes: ``data: {"response": "<piece>"}`` events (or OpenAI
  chunks), a last event carrying ``usage``, then ``data: [DONE]``. The reply is the next
  of ``chat_replies``, else the last user message echoed. ``chat_failures`` holds errors
  to raise on the next chat runs (e.g. ``AiError: 3040: Capacity temporarily exceeded``).

Vectors are deterministic: a hashed bag of words (each lower-cased word adds ±1 to one of
``d`` buckets chosen by BLAKE2b), normalised to unit length, so texts sharing words are
close and the same text always gives the same vector. Reranker scores are deterministic
too: the share of the query's words that the context contains, in [0, 1].
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from typing import Any, Literal

from tests.fakes.d1 import FakeJsException, FakeJsProxy, _wrap

ResultStyle = Literal["jsproxy", "python"]

MAX_TEXTS = 100
# model -> (dimensions, pooling reported)
EMBEDDING_MODELS: dict[str, tuple[int, str]] = {
    "@cf/baai/bge-m3": (1024, "cls"),
    "@cf/baai/bge-small-en-v1.5": (384, "mean"),
    "@cf/baai/bge-base-en-v1.5": (768, "mean"),
    "@cf/baai/bge-large-en-v1.5": (1024, "mean"),
}
RERANKER_MODELS = frozenset({"@cf/baai/bge-reranker-base"})
# model -> answer shape
CHAT_MODELS: dict[str, Literal["classic", "openai"]] = {
    "@cf/meta/llama-3.3-70b-instruct-fp8-fast": "classic",
    "@cf/google/gemma-4-26b-a4b-it": "classic",
    "@cf/openai/gpt-oss-120b": "openai",
}
_ROLES = ("system", "user", "assistant", "tool", "developer")
_WORD = re.compile(r"\w+", re.UNICODE)


def _schema_error(detail: str) -> FakeJsException:
    return FakeJsException(f"5006: Error: oneOf at '/' not met, 0 matches: {detail}", name="AiError")


def hashed_embedding(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    words = _WORD.findall(text.lower()) or [text]
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimensions
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:  # every word cancelled out; fall back to the whole text
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dimensions] = 1.0
        norm = 1.0
    return [v / norm for v in vector]


class FakeWorkersAI:
    """The fake ``env.AI``. ``calls`` records ``(model, inputs)`` for every ``run``."""

    def __init__(self, *, result_style: ResultStyle = "jsproxy") -> None:
        self.result_style = result_style
        self.calls: list[tuple[str, Any]] = []
        self.chat_replies: list[str] = []
        self.chat_failures: list[FakeJsException] = []

    async def run(self, model: str, inputs: Any, options: Any = None) -> Any:
        inputs = inputs.to_py() if isinstance(inputs, FakeJsProxy) else copy.deepcopy(inputs)
        self.calls.append((model, inputs))
        if model not in EMBEDDING_MODELS and model not in RERANKER_MODELS and model not in CHAT_MODELS:
            raise FakeJsException(f"5007: No such model {model} or task", name="AiError")
        if not isinstance(inputs, dict):
            raise _schema_error("Type mismatch of '/', 'array' not in 'object'")
        if model in CHAT_MODELS:
            if self.chat_failures:
                raise self.chat_failures.pop(0)
            return self._chat(model, inputs)
        if model in RERANKER_MODELS:
            return self._out(self._rerank(inputs))
        dimensions, pooling = EMBEDDING_MODELS[model]
        if "text" in inputs:
            texts = self._texts(inputs["text"])
            vectors = [hashed_embedding(t, dimensions) for t in texts]
            return self._out({"shape": [len(vectors), dimensions], "data": vectors, "pooling": pooling})
        if model == "@cf/baai/bge-m3" and "contexts" in inputs:
            return self._out(self._contexts(inputs, dimensions, pooling))
        raise _schema_error("required properties at '/' are 'text'")

    def _texts(self, text: Any) -> list[str]:
        if isinstance(text, str):
            if not text:
                raise _schema_error("String at '/text' is shorter than minLength 1")
            return [text]
        if not isinstance(text, list):
            raise _schema_error("Type mismatch of '/text', 'object' not in 'string' or 'array'")
        if len(text) > MAX_TEXTS:
            raise _schema_error(f"Array at '/text' has {len(text)} items, more than maxItems {MAX_TEXTS}")
        for index, item in enumerate(text):
            if not isinstance(item, str):
                raise _schema_error(f"Type mismatch of '/text/{index}', not 'string'")
            if not item:
                raise _schema_error(f"String at '/text/{index}' is shorter than minLength 1")
        return list(text)

    def _contexts(self, inputs: dict[str, Any], dimensions: int, pooling: str) -> dict[str, Any]:
        contexts = inputs["contexts"]
        if not isinstance(contexts, list) or not all(
            isinstance(c, dict) and isinstance(c.get("text"), str) and c["text"] for c in contexts
        ):
            raise _schema_error("'/contexts' must be an array of {text} with non-empty text")
        vectors = [hashed_embedding(c["text"], dimensions) for c in contexts]
        query = inputs.get("query")
        if query is None:
            return {"response": vectors, "shape": [len(vectors), dimensions], "pooling": pooling}
        if not isinstance(query, str) or not query:
            raise _schema_error("String at '/query' is shorter than minLength 1")
        q = hashed_embedding(query, dimensions)
        scores = [sum(a * b for a, b in zip(q, v, strict=False)) for v in vectors]
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
        return {"response": [{"id": i, "score": scores[i]} for i in ranked]}

    def _rerank(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query, contexts, top_k = inputs.get("query"), inputs.get("contexts"), inputs.get("top_k")
        if not isinstance(query, str) or not isinstance(contexts, list):
            raise _schema_error("required properties at '/' are 'query', 'contexts'")
        if not query:
            raise _schema_error("String at '/query' is shorter than minLength 1")
        for index, context in enumerate(contexts):
            if not isinstance(context, dict) or not isinstance(context.get("text"), str) or not context["text"]:
                raise _schema_error(f"'/contexts/{index}' must be {{text}} with a string of minLength 1")
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise _schema_error("Value at '/top_k' must be an integer of minimum 1")
        query_words = set(_WORD.findall(query.lower())) or {query.lower()}
        scores = [len(query_words & set(_WORD.findall(c["text"].lower()))) / len(query_words) for c in contexts]
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[: top_k or len(scores)]
        return {"response": [{"id": i, "score": scores[i]} for i in ranked]}

    def _chat(self, model: str, inputs: dict[str, Any]) -> Any:
        messages = inputs.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _schema_error("required properties at '/' are 'messages' (or 'prompt')")
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in _ROLES:
                raise _schema_error(f"'/messages/{index}/role' must be one of {', '.join(_ROLES)}")
            if not isinstance(message.get("content"), (str, list)):
                raise _schema_error(f"'/messages/{index}/content' must be a string or an array")
        max_tokens = inputs.get("max_tokens")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise _schema_error("Value at '/max_tokens' must be an integer of minimum 1")
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        text = (
            self.chat_replies.pop(0) if self.chat_replies else (last_user if isinstance(last_user, str) else "(image)")
        )
        prompt_tokens = sum(len(str(m["content"]).split()) for m in messages)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        }
        shape = CHAT_MODELS[model]
        if not inputs.get("stream"):
            if shape == "classic":
                return self._out({"response": text, "usage": usage})
            return self._out(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": usage,
                }
            )
        pieces = [text[i : i + 5] for i in range(0, len(text), 5)]
        if shape == "classic":
            events = [{"response": piece, "p": "abc"} for piece in pieces] + [{"response": "", "usage": usage}]
        else:
            events = [
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                for piece in pieces
            ]
            events.append(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": usage,
                }
            )
        body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
        # Delivered in uneven pieces, so events are split across reads as on the wire.
        return FakeReadableStream([body[i : i + 37] for i in range(0, len(body), 37)])

    def _out(self, value: Any) -> Any:
        if self.result_style == "jsproxy":
            return _wrap(value)
        return copy.deepcopy(value)


class FakeReadableStream:
    """A JS ``ReadableStream`` of bytes: ``getReader().read()`` → ``{done, value}``."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)
        self.cancelled = False

    def getReader(self) -> FakeReadableStream:
        return self

    async def read(self) -> Any:
        if self.cancelled or not self._chunks:
            return FakeJsProxy({"done": True})
        return _StreamChunk(self._chunks.pop(0))

    async def cancel(self) -> None:
        self.cancelled = True


class _StreamChunk:
    done = False

    def __init__(self, data: bytes) -> None:
        self.value = _Bytes(data)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def to_bytes(self) -> bytes:
        return self._data
