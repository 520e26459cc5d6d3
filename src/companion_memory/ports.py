"""The ports: what the domain services need from a runtime.

Each port is a ``typing.Protocol``. Adapters in ``adapters/local`` (sqlite3, numpy,
a bundled embedder) and ``adapters/cloudflare`` (D1, Vectorize, Workers AI) implement
them; services only ever see these types.

Each port names the errors it raises (the ``InfrastructureError`` branch of
``errors.py``): its adapters translate whatever their library throws into those, so a
service that can do without a dependency catches exactly them. A ``ValueError`` or
``TypeError`` means arguments no implementation would take (a bug in the caller).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO, Literal, Protocol

# The errors the ports raise (see each port's docstring), re-exported for the adapters.
from .domain.usage import ChatUsage as ChatUsage
from .errors import BackupError as BackupError
from .errors import ConstraintError as ConstraintError
from .errors import DatabaseError as DatabaseError
from .errors import HttpUnanswered as HttpUnanswered
from .errors import InfrastructureError as InfrastructureError
from .errors import ModelError as ModelError
from .errors import TaskQueueError as TaskQueueError
from .errors import UpstreamError as UpstreamError
from .errors import VectorIndexError as VectorIndexError

# D1 refuses statements with more bound parameters than this; every adapter enforces
# it so that SQL which passes locally also passes in production.
MAX_BOUND_PARAMETERS = 100

SqlValue = str | int | float | bytes | None


def check_parameter_count(params: Sequence[SqlValue]) -> None:
    if len(params) > MAX_BOUND_PARAMETERS:
        raise DatabaseError(f"statement binds {len(params)} parameters; D1 allows at most {MAX_BOUND_PARAMETERS}")


@dataclass(frozen=True)
class Statement:
    sql: str
    params: tuple[SqlValue, ...] = ()


@dataclass(frozen=True)
class QueryResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    changes: int = 0
    last_row_id: int | None = None


@dataclass(frozen=True)
class StorageCheck:
    """What the database says of its own health: the check it could run (``integrity_check``
    on a SQLite file; ``quick_check`` on D1, which refuses the other), the problems it
    found (none: healthy), and its size in bytes where it can tell, else why not."""

    check: str
    problems: tuple[str, ...]
    size_bytes: int | None
    size_note: str | None = None


class Database(Protocol):
    """A SQLite-dialect database with D1's shape: single statements and atomic batches.

    There are no interactive transactions: a multi-statement write that must be atomic
    goes through ``batch``, which applies all statements or none.

    Raises ``DatabaseError`` when a statement fails (``ConstraintError`` when a
    constraint refused a write; too many bound parameters is a ``DatabaseError`` too).
    """

    async def all(self, sql: str, params: Sequence[SqlValue] = ()) -> list[dict[str, Any]]: ...

    async def first(self, sql: str, params: Sequence[SqlValue] = ()) -> dict[str, Any] | None: ...

    async def run(self, sql: str, params: Sequence[SqlValue] = ()) -> QueryResult: ...

    async def batch(self, statements: Sequence[Statement]) -> list[QueryResult]: ...

    async def storage_check(self) -> StorageCheck:
        """Check the file's structure and measure it, as far as this engine allows."""
        ...


VectorFilterValue = str | int | float | bool | Mapping[str, Any]
# Vectorize answers at most this many matches (with returnMetadata "indexed"); the local
# index answers as many, so both runtimes rank the same candidates.
VECTOR_QUERY_MAX_TOP_K = 100


@dataclass(frozen=True)
class VectorRecord:
    id: str
    values: Sequence[float]
    metadata: Mapping[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorMatch:
    id: str
    score: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


class VectorIndex(Protocol):
    """A mirror of the memories' embeddings, shaped like Vectorize.

    ``filter`` follows Vectorize's metadata filter: ``{"namespace": "default",
    "status": {"$in": ["active"]}}`` with ``$eq``, ``$ne``, ``$in``, ``$nin``, ``$lt``,
    ``$lte``, ``$gt`` and ``$gte``. ``query`` answers at most ``VECTOR_QUERY_MAX_TOP_K``
    matches, best first.

    Raises ``VectorIndexError`` when the index fails or refuses an operation;
    ``ValueError`` for a record, filter or vector it can never take (one of another
    width included: the local index's ``DimensionMismatch`` is both).
    """

    dimensions: int

    async def upsert(self, records: Sequence[VectorRecord]) -> None: ...

    async def query(
        self, vector: Sequence[float], *, top_k: int, filter: Mapping[str, VectorFilterValue] | None = None
    ) -> list[VectorMatch]: ...

    async def get(self, ids: Sequence[str]) -> list[VectorRecord]: ...

    async def delete(self, ids: Sequence[str]) -> None: ...

    async def count(self) -> int: ...


EmbeddingKind = Literal["query", "passage"]


# Cosine similarity as most embedders spread it: unrelated texts near 0, paraphrases near 1.
PLAIN_SIMILARITY = (0.0, 1.0)


class Embedder(Protocol):
    """Turns text into unit-length vectors; ``kind`` selects query or passage mode.

    ``similarity_range`` is (unrelated, near-identical) cosine for this model. Recall maps
    cosines onto 0–1 through it, so that score floors such as RECALL_MIN_SCORE mean the
    same with every model: some (e5) put even unrelated texts at 0.75.

    Raises ``ModelError`` when the model fails, cannot be reached, times out or answers
    something unusable; ``ValueError`` for an empty text, which no model takes.
    """

    model: str
    dimensions: int
    similarity_range: tuple[float, float]

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


@dataclass(frozen=True)
class RerankScore:
    index: int  # position in the documents passed in
    score: float  # relevance in [0, 1], higher is better


class Reranker(Protocol):
    """Scores documents against a query with a cross-encoder (bge-reranker-base or a
    configured endpoint).

    Raises ``ModelError`` when the model fails, cannot be reached, times out or answers
    something unusable (recall then keeps the fused order); ``ValueError`` for an empty
    query or document."""

    model: str

    async def rerank(self, query: str, documents: Sequence[str]) -> list[RerankScore]: ...


class TaskQueue(Protocol):
    """Work to do later, delivered at least once: the Worker's Queue binding, or a
    durable table locally. Bodies are small JSON objects (see ``memory.tasks``).

    Raises ``InfrastructureError`` when a task cannot be queued: ``TaskQueueError``
    from the Queue binding, ``DatabaseError`` from the table."""

    async def send(self, body: Mapping[str, Any], *, delay_seconds: int = 0) -> None: ...

    async def send_batch(self, bodies: Sequence[Mapping[str, Any]], *, delay_seconds: int = 0) -> None: ...

    async def stats(self) -> dict[str, int] | None:
        """Tasks waiting and set aside, where the queue can tell (the Worker's cannot)."""
        ...


class QueueMessage(Protocol):
    """One delivered task. The consumer settles it with ``ack`` (done) or ``retry``
    (deliver again later); ``attempts`` counts deliveries, starting at 1."""

    id: str
    body: Any
    attempts: int

    def ack(self) -> None: ...

    def retry(self, delay_seconds: int = 0) -> None: ...


@dataclass(frozen=True)
class ChatCall:
    """One upstream chat call. ``body`` is the client's OpenAI-format request as sent
    (messages, tools, sampling options); ``model`` is the provider's own model name.
    ``memory_patch`` is the recalled ``<memories>`` text ("" for none): each adapter
    appends it to the current user turn, after every cache breakpoint of its format."""

    model: str
    body: Mapping[str, Any]
    memory_patch: str = ""


class ChatModel(Protocol):
    """A chat provider behind one wire format, speaking OpenAI chat completions to us.

    Raises ``UpstreamError`` for every failure, with the status to answer the client
    with: the provider refused (its 4xx), failed (502), timed out (504), or sent
    something that is not a chat answer (502); also mid-stream, from ``stream``."""

    provider: str

    async def complete(self, call: ChatCall) -> tuple[dict[str, Any], ChatUsage]:
        """A ``chat.completion`` object and the usage it reports."""
        ...

    def stream(self, call: ChatCall) -> AsyncIterator[dict[str, Any]]:
        """``chat.completion.chunk`` objects as they arrive; the last one carries
        ``usage`` (and no choices) whatever the client asked for."""
        ...


@dataclass(frozen=True)
class Route:
    """Where a model label goes: its chat model and the name its provider knows."""

    chat_model: ChatModel
    model: str
    label: str  # the configured name, as logged


class ChatRouter(Protocol):
    """Reads model labels; ``adapters/chat/routing.py`` is the one reader."""

    def resolve(self, requested: str, body: Mapping[str, Any], *, vision: bool = False) -> str:
        """The configured label a request's ``model`` means (the public name stands for
        CHAT_MODEL, or VISION_MODEL for an image)."""
        ...

    def route(self, label: str) -> Route:
        """Raises ``UpstreamError`` (503) when the label's provider is not configured."""
        ...


@dataclass(frozen=True)
class HttpResponse:
    status: int
    # Names lower-cased, so a lookup need not know how the server spelled them.
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class BackupStore(Protocol):
    """Where a copy of the memory (an export document) is kept before a repair changes
    anything: a file in the local data directory. The Worker has none (D1's Time Travel
    restores the database to any minute of the last 30 days).

    Raises ``BackupError`` when the copy cannot be written."""

    async def save(self, name: str, text: str) -> str:
        """Keep ``text`` under ``name``; answers where it went (a path)."""
        ...


class UploadStore(Protocol):
    """The bytes of a file uploaded in parts, kept until the job that reads them ends:
    a file in the local data directory, or rows of the database on the Worker, which has
    no file system and reads an upload back into memory (hence ``max_bytes``)."""

    max_bytes: int

    async def put(self, upload: str, start: int, data: bytes) -> None:
        """Keep ``data`` at byte ``start`` of the upload; the same part again replaces it."""
        ...

    async def open(self, upload: str) -> BinaryIO:
        """The upload as a seekable binary file, its parts in order; the caller closes it."""
        ...

    async def remove(self, upload: str) -> None: ...

    async def open_local(self, path: str) -> BinaryIO:
        """A file of this machine that a job names instead of an upload (the CLI's);
        ``OSError`` where there is none (the Worker)."""
        ...


class HttpClient(Protocol):
    """Plain HTTP GETs to services that are not model providers (the GitHub contents API,
    Client ID Metadata Documents). Redirects are answers too: the caller decides whether
    to follow one."""

    async def get(
        self, url: str, *, headers: Mapping[str, str], timeout_seconds: float, max_bytes: int | None = None
    ) -> HttpResponse:
        """Any status is an answer; ``HttpUnanswered`` when there is none within
        ``timeout_seconds`` (the whole exchange), or its body is longer than ``max_bytes``."""
        ...
