"""The MCP tools: the reference's 14 memory tools over the same services as REST.

Each tool is a pydantic model of its arguments (which gives its JSON Schema), the
scope it needs, and an async handler that returns a JSON-able result. A tool needs the
same scope as its REST twin (``memory_export`` needs ``export``, as
``GET /api/memories/export`` does): which surface a key comes through never widens
what it may do. None of the tools offers what REST keeps for the owner (hard delete,
``authored_by``).
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...domain.types import MEMORY_TYPES, STATUSES
from ...errors import NotFound
from ...memory.ingest import IncomingMessage
from ...memory.writes import MemoryDraft
from ...runtime import Runtime
from ...store.glossary import GlossaryStore, distinct_aliases
from ...store.precious import PreciousStore
from ..auth import EXPORT, MEMORY_READ, MEMORY_WRITE, Principal
from ..deps import now
from ..schemas import FactKey, GlossaryTerm, Id, MemoryContent, Namespace, Score, ShortText, Tag
from ..views import recall_view, write_view

MemoryType = Literal[MEMORY_TYPES]  # type: ignore[valid-type]
Status = Literal[STATUSES]  # type: ignore[valid-type]


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Search(Arguments):
    query: Annotated[str, Field(min_length=1, max_length=10_000, description="What to look for, in the user's words.")]
    namespace: Namespace = "default"
    k: Annotated[int, Field(ge=1, le=100, description="How many memories to return.")] = 10
    min_score: Annotated[Score, Field(description="Relevance floor, 0–1.")] = 0.15
    types: Annotated[list[MemoryType], Field(max_length=10, description="Only these memory types.")] = []


class Recall(Search):
    k: Annotated[int, Field(ge=1, le=100, description="How many memories to return.")] = 3


class List(Arguments):
    namespace: Namespace = "default"
    type: MemoryType | None = None
    status: Status = "active"
    limit: Annotated[int, Field(ge=1, le=200)] = 50
    cursor: Annotated[str | None, Field(max_length=500, description="next_cursor from the previous page.")] = None


class ById(Arguments):
    id: Annotated[Id, Field(description="The memory id.")]


class Scope(Arguments):
    namespace: Namespace = "default"


class Diary(Arguments):
    date: Annotated[
        datetime.date | None, Field(description="YYYY-MM-DD; omit for today's and yesterday's entries.")
    ] = None
    namespace: Namespace = "default"


class Message(Arguments):
    role: Literal["system", "user", "assistant", "tool"]
    content: Annotated[str, Field(max_length=200_000)]
    id: Id | None = None
    created_at: Annotated[str | None, Field(max_length=40, description="ISO-8601 time the message was said.")] = None


class Ingest(Arguments):
    messages: Annotated[list[Message], Field(min_length=1, max_length=1000)]
    namespace: Namespace = "default"
    conversation_id: Id | None = None


class Pin(Arguments):
    content: Annotated[str, Field(min_length=1, max_length=50_000, description="The exact words to keep.")]
    note: Annotated[str | None, Field(max_length=2000)] = None
    namespace: Namespace = "default"


class GlossarySet(Arguments):
    term: GlossaryTerm
    aliases: Annotated[list[GlossaryTerm], Field(max_length=50)] = []
    definition: Annotated[str, Field(max_length=5000)] = ""
    namespace: Namespace = "default"


class Fields(Arguments):
    # Free text, as on REST: an unknown type is stored as 'note' and the answer's notes say so.
    type: Annotated[
        ShortText | None, Field(description=f"One of {', '.join(MEMORY_TYPES)}; anything else is stored as 'note'.")
    ] = None
    importance: Score | None = None
    confidence: Score | None = None
    tags: Annotated[list[Tag], Field(max_length=32)] | None = None
    pinned: bool | None = None


class Upsert(Fields):
    fact_key: Annotated[FactKey, Field(description="A stable key for the fact, e.g. 'user.coffee.preference'.")]
    content: MemoryContent
    namespace: Namespace = "default"


class Supersede(Fields):
    old_id: Annotated[Id, Field(description="The memory the new one replaces.")]
    content: MemoryContent
    fact_key: FactKey | None = None
    namespace: Namespace = "default"


Handler = Callable[[Runtime, Principal, Any], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: type[Arguments]
    scope: str
    handler: Handler

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema()


async def _search(runtime: Runtime, _: Principal, a: Search) -> dict[str, Any]:
    result = await runtime.recall.run(a.query, namespace=a.namespace, k=a.k, min_score=a.min_score, types=a.types)
    return recall_view(result, prompt=False)


async def _recall(runtime: Runtime, _: Principal, a: Recall) -> dict[str, Any]:
    result = await runtime.recall.run(
        a.query, namespace=a.namespace, k=a.k, min_score=a.min_score, types=a.types, account=True
    )
    return recall_view(result, prompt=True)


async def _list(runtime: Runtime, _: Principal, a: List) -> dict[str, Any]:
    memories, cursor = await runtime.writer.store.page(
        a.namespace, types=[a.type] if a.type else [], statuses=[a.status], limit=a.limit, cursor=a.cursor
    )
    return {"memories": [m.as_dict() for m in memories], "next_cursor": cursor}


async def _export(runtime: Runtime, _: Principal, a: Scope) -> dict[str, Any]:
    return await runtime.snapshots.export(a.namespace)


async def _get(runtime: Runtime, _: Principal, a: ById) -> dict[str, Any]:
    memory = await runtime.writer.store.get(a.id)
    if memory is None:
        raise NotFound(f"memory {a.id} not found")
    return {"memory": memory.as_dict(), "relations": await runtime.writer.store.relations(a.id)}


async def _delete(runtime: Runtime, principal: Principal, a: ById) -> dict[str, Any]:
    return write_view(await runtime.writer.delete(a.id, principal.actor))


async def _archive(runtime: Runtime, principal: Principal, a: ById) -> dict[str, Any]:
    return write_view(await runtime.writer.archive(a.id, principal.actor))


async def _ingest(runtime: Runtime, _: Principal, a: Ingest) -> dict[str, Any]:
    messages = [IncomingMessage(role=m.role, content=m.content, id=m.id, created_at=m.created_at) for m in a.messages]
    outcomes = await runtime.ingestor.ingest(a.namespace, messages, conversation_id=a.conversation_id, source="mcp")
    stored = sum(not o.duplicate for o in outcomes)
    return {"stored": stored, "duplicates": len(outcomes) - stored}


async def _boot(runtime: Runtime, _: Principal, a: Scope) -> dict[str, Any]:
    return await runtime.boot.package(a.namespace)


async def _diary(runtime: Runtime, _: Principal, a: Diary) -> dict[str, Any]:
    if a.date is None:
        return {"diaries": await runtime.boot.recent_diary(a.namespace)}
    entry = await runtime.boot.diary(a.namespace, a.date.isoformat())
    if entry is None:
        raise NotFound(f"no diary for {a.date.isoformat()}")
    return {"diary": entry}


async def _pin(runtime: Runtime, _: Principal, a: Pin) -> dict[str, Any]:
    return {"precious": await PreciousStore(runtime.db).add(a.namespace, a.content, a.note, "mcp", now(runtime))}


async def _glossary(runtime: Runtime, _: Principal, a: GlossarySet) -> dict[str, Any]:
    entry, created = await GlossaryStore(runtime.db).set(
        a.namespace, a.term, distinct_aliases(a.term, a.aliases), a.definition, now(runtime)
    )
    return {"entry": entry, "created": created}


def _draft(a: Fields, **extra: Any) -> MemoryDraft:
    return MemoryDraft(
        **a.model_dump(include={"type", "importance", "confidence", "tags", "pinned"}, exclude_none=True),
        source="mcp",
        **extra,
    )


async def _upsert(runtime: Runtime, principal: Principal, a: Upsert) -> dict[str, Any]:
    draft = _draft(a, content=a.content, fact_key=a.fact_key)
    return write_view(await runtime.writer.upsert(a.namespace, draft, principal.actor))


async def _supersede(runtime: Runtime, principal: Principal, a: Supersede) -> dict[str, Any]:
    draft = _draft(a, content=a.content, fact_key=a.fact_key)
    return write_view(await runtime.writer.supersede(a.namespace, a.old_id, draft, principal.actor))


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "memory_search",
            "Search long-term memories by meaning and words. Use it to look something up; "
            "unlike memory_recall it does not count as using the memories.",
            Search,
            MEMORY_READ,
            _search,
        ),
        Tool(
            "memory_recall",
            "Recall the few memories relevant to the user's current message, with a ready "
            "<memories> block to put in context. Use it once per user turn.",
            Recall,
            MEMORY_READ,
            _recall,
        ),
        Tool(
            "memory_list",
            "List memories, newest first, by type and status; page with cursor.",
            List,
            MEMORY_READ,
            _list,
        ),
        Tool("memory_get", "Read one memory by id, with its relations.", ById, MEMORY_READ, _get),
        Tool(
            "memory_export",
            "Export everything in a namespace (memories, history, precious, glossary, diary, "
            "messages) as one JSON document.",
            Scope,
            EXPORT,
            _export,
        ),
        Tool(
            "memory_boot",
            "The boot package for a new conversation: recent diary impressions, precious words, "
            "glossary, today's messages, counts by type. Use it at the start of a session.",
            Scope,
            MEMORY_READ,
            _boot,
        ),
        Tool(
            "diary_get",
            "Read the diary: one day (date) or, without a date, today's and yesterday's.",
            Diary,
            MEMORY_READ,
            _diary,
        ),
        Tool(
            "memory_upsert",
            "Save a lasting fact, preference, boundary or decision under a stable fact_key; "
            "the same key updates the memory instead of duplicating it.",
            Upsert,
            MEMORY_WRITE,
            _upsert,
        ),
        Tool(
            "memory_supersede",
            "Replace a memory that is no longer true with a new version; the old one is kept as history.",
            Supersede,
            MEMORY_WRITE,
            _supersede,
        ),
        Tool(
            "memory_archive",
            "Archive a memory that no longer matters (kept, but never recalled).",
            ById,
            MEMORY_WRITE,
            _archive,
        ),
        Tool(
            "memory_delete",
            "Delete a memory (it stops being recalled; the owner can purge it).",
            ById,
            MEMORY_WRITE,
            _delete,
        ),
        Tool(
            "memory_ingest",
            "Store raw chat messages (they become memories in the nightly dream). Sending the same "
            "messages again stores nothing twice.",
            Ingest,
            MEMORY_WRITE,
            _ingest,
        ),
        Tool(
            "memory_pin",
            "Keep the user's exact words as a precious memory (append-only, never edited).",
            Pin,
            MEMORY_WRITE,
            _pin,
        ),
        Tool(
            "glossary_set",
            "Define the user's own term (with aliases), so it is understood when it comes up.",
            GlossarySet,
            MEMORY_WRITE,
            _glossary,
        ),
    )
}

# Tools of older versions, and what replaces them.
RETIRED = {
    "memory_create": "memory_create was removed: use memory_upsert with a fact_key",
    "digest_get": "digest_get was removed: use diary_get",
    "digest_set": "digest_set was removed: the nightly dream writes the diary; read it with diary_get",
}
