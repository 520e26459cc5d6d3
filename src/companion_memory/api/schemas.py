"""Request models shared by the REST routes: every field bounded, every name checked."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..domain.types import RELATIONS

Namespace = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}$"),
    Field(description="Letters, digits and . _ : - ; at most 64 characters."),
]
MemoryContent = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
FactKey = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(max_length=100)]
Tag = Annotated[str, StringConstraints(max_length=64)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Score = Annotated[float, Field(ge=0, le=1)]


class Request(BaseModel):
    # Clients send fields we do not know (other tools, newer versions); ignore them.
    model_config = ConfigDict(extra="ignore")


class EvidenceIn(Request):
    """A verbatim quote from a source message that backs a memory."""

    quote: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    message_id: Annotated[str, StringConstraints(max_length=200)] | None = None


class MemoryFields(Request):
    type: ShortText | None = None
    fact_key: FactKey | None = None
    importance: Score | None = None
    confidence: Score | None = None
    tags: Annotated[list[Tag], Field(max_length=32)] | None = None
    pinned: bool | None = None
    source: ShortText | None = None
    source_message_ids: Annotated[list[Id], Field(max_length=200)] | None = None
    evidence: Annotated[list[EvidenceIn], Field(max_length=50)] | None = None
    authored_by: ShortText | None = None


class MemoryWrite(MemoryFields):
    namespace: Namespace = "default"
    content: MemoryContent


def _fact_key_required(schema: dict[str, Any]) -> None:
    schema["required"] = [*schema.get("required", []), "fact_key"]
    schema["properties"]["fact_key"] = {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "title": "Fact Key",
        "description": "The stable key the memory is upserted on, e.g. 'user.coffee.preference'.",
    }


class MemoryUpsert(MemoryWrite):
    """POST /v1/memories: ``fact_key`` is required, and the document says so. The model
    itself lets a missing one through, so that the route can say why it is needed
    (a 400 ``missing_fact_key``) rather than a bare "field required"."""

    model_config = ConfigDict(json_schema_extra=_fact_key_required)


class MemoryPatch(MemoryFields):
    content: MemoryContent | None = None
    status: Literal["active", "archived"] | None = None


class RelationWrite(Request):
    target_id: Id
    # The document lists the kinds; the service names them in its 400 for any other.
    relation: Annotated[ShortText, Field(json_schema_extra={"enum": [r for r in RELATIONS if r != "supersedes"]})]
    weight: Annotated[float, Field(gt=0, le=1)] = 1.0


class PreciousWrite(Request):
    namespace: Namespace = "default"
    content: Annotated[str, StringConstraints(min_length=1, max_length=50_000)]
    note: Annotated[str, StringConstraints(max_length=2_000)] | None = None
    source: ShortText = "api"


GlossaryTerm = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class GlossaryWrite(Request):
    namespace: Namespace = "default"
    term: GlossaryTerm
    aliases: Annotated[list[GlossaryTerm], Field(max_length=50)] = []
    definition: Annotated[str, StringConstraints(max_length=5_000)] = ""


class GlossaryPatch(Request):
    term: GlossaryTerm | None = None
    aliases: Annotated[list[GlossaryTerm], Field(max_length=50)] | None = None
    definition: Annotated[str, StringConstraints(max_length=5_000)] | None = None


class ContentPart(Request):
    type: ShortText
    text: str | None = None


class IngestMessage(Request):
    role: Literal["system", "user", "assistant", "tool"]
    content: Annotated[str, StringConstraints(max_length=200_000)] | Annotated[list[ContentPart], Field(max_length=100)]
    id: Id | None = None
    created_at: (
        Annotated[str, StringConstraints(max_length=40), Field(json_schema_extra={"format": "date-time"})] | None
    ) = None
    model: ShortText | None = None
    metadata: dict[str, Any] | None = None

    def text(self) -> str:
        """OpenAI-style content parts become their text; other parts are noted, not kept."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text if p.type == "text" and p.text else f"[{p.type}]" for p in self.content)


class IngestRequest(Request):
    namespace: Namespace = "default"
    conversation_id: Id | None = None
    source: ShortText = "ingest"
    messages: Annotated[list[IngestMessage], Field(min_length=1, max_length=1000)]


class CachePut(Request):
    value: Any
    ttl_seconds: Annotated[int, Field(ge=1, le=365 * 24 * 3600)] | None = None
