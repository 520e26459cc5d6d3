"""Raw chat messages in, each stored once; the nightly dream reads them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..domain.scopes import MEMORY_WRITE
from ..memory.ingest import IncomingMessage
from ..runtime import Runtime
from .fields import TIME_FORMAT, Id, Moment, Namespace, ShortText, SpeakerName
from .principal import Principal
from .use_case import Input, Output, use_case

SAID_AT = f"When it was said, {TIME_FORMAT} (without an offset: UTC); default now."


class ContentPart(Input):
    type: ShortText
    text: str | None = None


class IngestMessage(Input):
    role: Literal["system", "user", "assistant", "tool"]
    content: Annotated[str, Field(max_length=200_000)] | Annotated[list[ContentPart], Field(max_length=100)]
    id: Id | None = None
    created_at: Annotated[Moment | None, Field(description=SAID_AT)] = None
    model: ShortText | None = None
    metadata: dict[str, Any] | None = None
    name: Annotated[
        SpeakerName | None, Field(description="Who said it (OpenAI's name): kept with its episode, which names them.")
    ] = None

    def incoming(self) -> IncomingMessage:
        # OpenAI-style content parts become their text; other parts are noted, not kept.
        content = (
            self.content
            if isinstance(self.content, str)
            else "\n".join(p.text if p.type == "text" and p.text else f"[{p.type}]" for p in self.content)
        )
        return IncomingMessage(
            role=self.role,
            content=content,
            id=self.id,
            created_at=self.created_at,
            model=self.model,
            metadata=self.metadata,
            name=self.name or None,
        )


class IngestRequest(Input):
    namespace: Namespace = "default"
    conversation_id: Id | None = None
    source: ShortText = "ingest"
    messages: Annotated[list[IngestMessage], Field(min_length=1, max_length=1000)]


class IngestedMessage(Output):
    id: str
    duplicate: bool


class IngestAnswer(Output):
    stored: int
    duplicates: int
    messages: list[IngestedMessage]


@use_case("messages.ingest", MEMORY_WRITE)
async def ingest(runtime: Runtime, _: Principal, request: IngestRequest) -> IngestAnswer:
    """Idempotent: a message already stored (same client id; or same conversation, role,
    content, timestamp and rank in its request; without an id or a timestamp, only within
    10 minutes of storing it) is reported as a duplicate, not stored again."""
    outcomes = await runtime.ingestor.ingest(
        request.namespace,
        [m.incoming() for m in request.messages],
        conversation_id=request.conversation_id,
        source=request.source,
    )
    stored = sum(not o.duplicate for o in outcomes)
    return IngestAnswer(
        stored=stored,
        duplicates=len(outcomes) - stored,
        messages=[IngestedMessage(id=o.id, duplicate=o.duplicate) for o in outcomes],
    )
