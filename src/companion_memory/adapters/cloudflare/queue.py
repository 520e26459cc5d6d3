"""``ports.TaskQueue`` over a Cloudflare Queue producer binding (``env.TASKS``), and the
consumer side: the messages of a ``queue()`` delivery as ``ports.QueueMessage``.

Bodies go out as JS objects (``contentType`` "json", the default), at most
``MAX_BATCH`` per ``sendBatch``; delays are clamped to what Queues accepts (0–12 h).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ...ports import TaskQueueError
from . import ffi

MAX_BATCH = 100
MAX_DELAY_SECONDS = 12 * 3600


def _delay(seconds: int) -> int:
    return max(0, min(int(seconds), MAX_DELAY_SECONDS))


async def _sent(method: Callable[..., Awaitable[Any]], *args: Any) -> None:
    try:
        await method(*args)
    except Exception as error:  # broad on purpose: whatever the binding throws becomes the port's error
        message = str(error).removeprefix("Error: ") or "no detail"
        raise TaskQueueError(f"Queue: {type(error).__name__}: {message}") from error


class CloudflareQueue:
    def __init__(self, binding: Any) -> None:
        self._binding = binding

    async def send(self, body: Mapping[str, Any], *, delay_seconds: int = 0) -> None:
        options = {"delaySeconds": _delay(delay_seconds)} if delay_seconds else {}
        await _sent(self._binding.send, ffi.to_js(dict(body)), ffi.to_js(options))

    async def send_batch(self, bodies: Sequence[Mapping[str, Any]], *, delay_seconds: int = 0) -> None:
        options = {"delaySeconds": _delay(delay_seconds)} if delay_seconds else {}
        for start in range(0, len(bodies), MAX_BATCH):
            requests = [{"body": dict(body)} for body in bodies[start : start + MAX_BATCH]]
            await _sent(self._binding.sendBatch, ffi.to_js(requests), ffi.to_js(options))

    async def stats(self) -> None:
        # The producer binding has no way to read the backlog (the dashboard shows it).
        return None


class WorkerMessage:
    """A message of the batch the runtime hands to ``Default.queue``."""

    def __init__(self, message: Any) -> None:
        self._message = message
        self.id = str(message.id)
        self.body = ffi.to_py(message.body)
        self.attempts = int(ffi.to_py(message.attempts) or 1)

    def ack(self) -> None:
        self._message.ack()

    def retry(self, delay_seconds: int = 0) -> None:
        if delay_seconds:
            self._message.retry(ffi.to_js({"delaySeconds": _delay(delay_seconds)}))
        else:
            self._message.retry()


def batch_messages(batch: Any) -> list[WorkerMessage]:
    return [WorkerMessage(message) for message in batch.messages]
