"""A fake of a Cloudflare Queue: the producer binding (``env.TASKS``) and the consumer's
``MessageBatch``, as a Python Worker sees them through Pyodide.

Producer (``Queue``): ``send(body, {contentType?, delaySeconds?})`` and
``sendBatch([{body, contentType?, delaySeconds?}], {delaySeconds?})``, both promises of
nothing. Checked as Queues does: a body must be structured-cloneable (here: JSON for the
default ``json`` content type), at most 128 KB per message; a batch holds at most 100
messages and 256 KB; ``delaySeconds`` is an integer from 0 to 43200 (12 hours). Bodies
are stored as copies, so the producer cannot change a message after sending it.

Consumer: ``deliver(handler)`` hands due messages (up to ``max_batch_size``) to
``handler(batch)`` as a ``MessageBatch`` with ``queue``, ``messages``, ``ackAll()``,
``retryAll(options?)``; each ``Message`` has ``id``, ``timestamp``, ``body`` (a JsProxy),
``attempts`` (1 on the first delivery), ``ack()`` and ``retry({delaySeconds?})``. As in
Queues: when the handler returns, messages it did not settle are acked; when it throws,
they are retried; a message retried more than ``max_retries`` times is moved to
``dead_letters``. Time is the fake's own ``now`` (seconds), moved with ``advance``.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.d1 import UNDEFINED, FakeJsException, FakeJsProxy

MAX_MESSAGE_BYTES = 128_000
MAX_BATCH_MESSAGES = 100
MAX_BATCH_BYTES = 256_000
MAX_DELAY_SECONDS = 43_200


def _plain(value: Any) -> Any:
    return value.to_py() if isinstance(value, FakeJsProxy) else value


def _options(value: Any) -> dict[str, Any]:
    """An options argument: omitted (undefined) or an object."""
    value = _plain(value)
    if value is UNDEFINED or value is None:
        return {}
    if not isinstance(value, dict):
        raise FakeJsException(f"TypeError: options must be an object, got {value!r}")
    return value


def _delay(options: dict[str, Any]) -> int:
    delay = options.get("delaySeconds", 0)
    if not isinstance(delay, int) or isinstance(delay, bool) or not 0 <= delay <= MAX_DELAY_SECONDS:
        raise FakeJsException(f"Invalid delaySeconds: {delay!r}; must be an integer between 0 and {MAX_DELAY_SECONDS}")
    return delay


def _encoded_size(body: Any) -> int:
    try:
        return len(json.dumps(body, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as error:
        raise FakeJsException(f"DataCloneError: the message body could not be serialized ({error})") from None


@dataclass
class StoredMessage:
    id: str
    body: Any
    timestamp: float
    available_at: float
    attempts: int = 0


@dataclass
class FakeMessage:
    _stored: StoredMessage
    # "jsproxy": the body as a JsProxy (``.to_py()``); "python": already converted, as
    # recent Python Workers SDKs hand it over.
    result_style: str = "jsproxy"
    outcome: tuple[str, int] | None = field(default=None)

    @property
    def id(self) -> str:
        return self._stored.id

    @property
    def timestamp(self) -> float:
        return self._stored.timestamp

    @property
    def body(self) -> Any:
        body = copy.deepcopy(self._stored.body)
        return FakeJsProxy(body) if self.result_style == "jsproxy" and isinstance(body, (dict, list)) else body

    @property
    def attempts(self) -> int:
        return self._stored.attempts

    def ack(self) -> None:
        self.outcome = ("ack", 0)

    def retry(self, options: Any = UNDEFINED) -> None:
        self.outcome = ("retry", _delay(_options(options)))


@dataclass
class FakeMessageBatch:
    queue: str
    messages: list[FakeMessage]

    def ackAll(self) -> None:
        for message in self.messages:
            message.ack()

    def retryAll(self, options: Any = UNDEFINED) -> None:
        for message in self.messages:
            message.retry(options)


class FakeQueue:
    def __init__(
        self,
        name: str = "companion-memory",
        *,
        max_batch_size: int = 10,
        max_retries: int = 5,
        result_style: str = "jsproxy",
    ) -> None:
        self.name = name
        self.result_style = result_style
        self.max_batch_size = max_batch_size
        self.max_retries = max_retries
        self.now = 1_700_000_000.0
        self.pending: list[StoredMessage] = []
        self.dead_letters: list[StoredMessage] = []
        self.sent: list[tuple[Any, int]] = []  # (body, delay) of every accepted message
        self._ids = itertools.count(1)

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def _accept(self, body: Any, delay: int) -> None:
        body = _plain(body)
        if body is None or body is UNDEFINED:
            raise FakeJsException("TypeError: a queue message needs a body")
        if _encoded_size(body) > MAX_MESSAGE_BYTES:
            raise FakeJsException(f"Queue send failed: message too large (max {MAX_MESSAGE_BYTES} bytes)")
        stored = StoredMessage(f"msg-{next(self._ids)}", copy.deepcopy(body), self.now, self.now + delay)
        self.pending.append(stored)
        self.sent.append((copy.deepcopy(body), delay))

    async def send(self, body: Any, options: Any = UNDEFINED) -> None:
        self._accept(body, _delay(_options(options)))

    async def sendBatch(self, messages: Any, options: Any = UNDEFINED) -> None:
        requests = _plain(messages)
        batch_delay = _delay(_options(options))
        if not isinstance(requests, list) or not all(isinstance(r, dict) and "body" in r for r in requests):
            raise FakeJsException("TypeError: sendBatch() expects an array of {body, contentType?, delaySeconds?}")
        if len(requests) > MAX_BATCH_MESSAGES:
            raise FakeJsException(
                f"Queue sendBatch failed: batch has {len(requests)} messages (max {MAX_BATCH_MESSAGES})"
            )
        if sum(_encoded_size(r["body"]) for r in requests) > MAX_BATCH_BYTES:
            raise FakeJsException(f"Queue sendBatch failed: batch too large (max {MAX_BATCH_BYTES} bytes)")
        for request in requests:
            self._accept(request["body"], _delay(request) if "delaySeconds" in request else batch_delay)

    def due(self) -> list[StoredMessage]:
        return [m for m in self.pending if m.available_at <= self.now]

    async def deliver(self, handler: Callable[[FakeMessageBatch], Awaitable[None]]) -> int:
        """One consumer invocation over the due messages; returns how many were delivered."""
        chosen = sorted(self.due(), key=lambda m: (m.available_at, m.id))[: self.max_batch_size]
        if not chosen:
            return 0
        for stored in chosen:
            stored.attempts += 1
        batch = FakeMessageBatch(self.name, [FakeMessage(stored, self.result_style) for stored in chosen])
        try:
            await handler(batch)
            default = ("ack", 0)
        except Exception:  # noqa: BLE001 - a handler that throws gets its batch retried, as the binding does
            default = ("retry", 0)
        for message in batch.messages:
            verdict, delay = message.outcome or default
            stored = message._stored
            if verdict == "ack":
                self.pending.remove(stored)
            elif stored.attempts > self.max_retries:
                self.pending.remove(stored)
                self.dead_letters.append(stored)
            else:
                stored.available_at = self.now + delay
        return len(chosen)
