"""The domain's records, as the services return them."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Evidence(BaseModel):
    """A verbatim quote from a source message that backs a memory."""

    quote: str = Field(min_length=1, max_length=2000)
    message_id: str | None = Field(default=None, max_length=200)


class Memory(BaseModel):
    id: str
    namespace: str
    type: str
    content: str
    fact_key: str | None = None
    importance: float = 0.5
    confidence: float = 0.8
    status: str = "active"
    version_status: str = "current"
    superseded_by: str | None = None
    pinned: bool = False
    tags: list[str] = Field(default_factory=list)
    source: str = "api"
    source_message_ids: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    authored_by: str | None = None
    seen_count: int = 1
    recall_count: int = 0
    last_injected_at: str | None = None
    last_seen_at: str | None = None
    created_at: str
    updated_at: str
