"""The errors this service raises on purpose: one family, rooted in ``CompanionError``.

Two branches, by whose problem it is:

- ``ServiceError``: the request cannot be served as asked (bad input, a missing or
  protected row, a key without the scope). The caller can fix it; each surface answers
  it with its own convention (a 4xx on HTTP, a tool error in MCP).
- ``InfrastructureError``: something the service depends on failed (the database, the
  vector index, a model). Not the caller's fault. Each port in ``ports.py`` names the
  ones it raises, and its adapters translate whatever their library throws into them, so
  that a service can degrade where it can do without the dependency (recall answers
  from the words alone when the embedder or the index is down) by catching exactly these.

``RpcError`` (``api/mcp/jsonrpc.py``) is the JSON-RPC edge's own member: a protocol
error carrying a JSON-RPC code. Anything outside the family is a bug.

Pure Python on purpose: the domain and the stores import it.
"""

from __future__ import annotations

from typing import Any


class CompanionError(Exception):
    """The root of the family. ``message`` is the text meant for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---------------------------------------------------------------- the caller's side


class ServiceError(CompanionError):
    """The request cannot be served as asked; ``code`` names why, ``details`` say more."""

    code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code
        self.details = details or {}


class InvalidInput(ServiceError):
    code = "invalid_request"


class UnreadableHistory(InvalidInput):
    """A chat-history export that cannot be imported as it is: another format, broken
    JSON, not UTF-8, a zip bomb. The message names the file and where in it (a line, or
    a JSON path such as ``conversations.json[12].mapping.abc.message.create_time``)."""

    code = "unreadable_history"


class NotFound(ServiceError):
    code = "not_found"


class Conflict(ServiceError):
    code = "conflict"


class SensitiveContent(ServiceError):
    code = "sensitive_content"


class PermissionDenied(ServiceError):
    code = "forbidden"


class Unauthenticated(ServiceError):
    code = "unauthorized"


class OAuthError(ServiceError):
    """An OAuth protocol refusal (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009): ``code`` is
    the OAuth ``error`` value (``invalid_grant``, ``invalid_target``...) and ``status``
    the HTTP status the OAuth endpoints answer it with. The message comes first, as for
    every ``ServiceError``."""

    code = "invalid_request"

    def __init__(self, message: str, *, code: str, status: int = 400) -> None:
        super().__init__(message, code=code)
        self.status = status


class RedirectableOAuthError(OAuthError):
    """A refusal of an authorization request whose client and redirect URI are known good:
    it goes back to the client at ``location`` (its redirect URI with ``error``, ``state``
    and ``iss``, RFC 6749 §4.1.2.1) instead of being shown to the person in the browser."""

    def __init__(self, message: str, *, code: str, location: str) -> None:
        super().__init__(message, code=code)
        self.location = location


# ---------------------------------------------------------------- the dependencies' side


class InfrastructureError(CompanionError):
    """A dependency of the service failed: the database, the vector index, a model."""


class DatabaseError(InfrastructureError):
    """A statement failed in the database (``ports.Database``)."""


class ConstraintError(DatabaseError):
    """A UNIQUE, CHECK or NOT NULL constraint refused the write."""


class VectorIndexError(InfrastructureError):
    """The vector index (``ports.VectorIndex``) failed or refused an operation."""


class ModelError(InfrastructureError):
    """An embedding or rerank model (``ports.Embedder``, ``ports.Reranker``) failed or
    answered something unusable. Over an API it is a ``ModelAPIError``
    (``adapters/model_io.py``), which also keeps the status the provider answered."""


class BackupError(InfrastructureError):
    """A backup (``ports.BackupStore``) could not be written."""


class TaskQueueError(InfrastructureError):
    """The task queue (``ports.TaskQueue``) could not take a task. A queue kept in the
    database fails with ``DatabaseError`` instead."""


class HttpUnanswered(InfrastructureError):
    """An HTTP GET (``ports.HttpClient``) got no answer (no connection, a timeout, a broken
    transfer, a body over the limit); the message starts with the failure's kind, e.g.
    ``ConnectTimeout: timed out``. Any status is an answer, and no error."""


class UpstreamError(InfrastructureError):
    """A chat provider (``ports.ChatModel``) failed, or none is configured for a model.

    ``status`` is the HTTP status to answer the client with (a provider's own 4xx passes
    through; anything else is a 502, a 504 for a timeout, a 503 when nothing is
    configured) and ``code`` the error code in the answer.
    """

    def __init__(self, message: str, *, status: int = 502, code: str = "upstream_error") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
