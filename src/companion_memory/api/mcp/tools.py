"""The MCP tools: the reference's 14 memory tools, plan_list and plan_update, memory_share
and share_list, context_expand, the health report (memory_health, in the reference's
style) with its scan for messages no memory cites (memory_unanchored), the mood timeline
(mood_log, mood_recent), her own todos (todo_*), the people in the owner's life
(person_*) and what was said (conversation_search in Letta's shape, conversation_get,
conversation_forget), over the same services as REST.

Each tool is a pydantic model of its arguments (which gives its JSON Schema), the
scope it needs, and an async handler that returns a JSON-able result. A tool needs the
same scope as its REST twin (``memory_export`` needs ``export``, as
``GET /api/memories/export`` does): which surface a key comes through never widens
what it may do. None of the tools offers what REST keeps for the owner (hard delete,
``authored_by``, deciding a share), except conversation_forget, which needs the owner's
scope as its REST twins do: only the owner's key sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...application import (
    boot,
    context,
    conversations,
    doctor,
    glossary,
    ingest,
    memories,
    moods,
    people,
    plans,
    precious,
    recall,
    shares,
    snapshot,
    todos,
)
from ...application.fields import (
    Day,
    ExtraNamespaces,
    FactKey,
    GlossaryTerm,
    Id,
    LayerChoice,
    MemoryContent,
    Moment,
    Namespace,
    Score,
    ShortText,
    SpeakerName,
    Tag,
    TypeFilter,
    ValidDays,
    ValidTo,
)
from ...application.principal import Principal
from ...application.use_case import Input, Nothing, UseCase
from ...domain.layers import Layer
from ...domain.types import MEMORY_TYPES, PLAN_STATUSES, STATUSES
from ...memory.moods import MOOD_LABELS
from ...memory.sharing import SHARE_STATUSES
from ...runtime import Runtime

Status = Annotated[ShortText, Field(json_schema_extra={"enum": list(STATUSES)})]


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Search(Arguments):
    query: Annotated[str, Field(min_length=1, max_length=10_000, description="What to look for, in the user's words.")]
    namespace: Namespace = "default"
    namespaces: ExtraNamespaces
    k: Annotated[int, Field(ge=1, le=100, description="How many memories to return.")] = 10
    min_score: Annotated[Score, Field(description="Relevance floor, 0–1.")] = 0.15
    types: Annotated[
        list[TypeFilter],
        Field(default_factory=list, max_length=10, description="Only these memory types (then no episodes)."),
    ]
    conversation_id: Annotated[
        Id | None, Field(description="The conversation in your context (a session id): its turns are not returned.")
    ] = None


class ConversationSearch(Arguments, conversations.ConversationQuery):
    """conversation_search's input, strict as every tool's arguments are."""

    model_config = ConfigDict(extra="forbid")


class Recall(Search):
    k: Annotated[int, Field(ge=1, le=100, description="How many memories to return.")] = 3


class List(Arguments):
    namespace: Namespace = "default"
    type: TypeFilter | None = None
    status: Status = "active"
    layer: Annotated[Layer | None, Field(description="Only memories in this layer.")] = None
    limit: Annotated[int, Field(ge=1, le=200)] = 50
    cursor: Annotated[str | None, Field(max_length=500, description="next_cursor from the previous page.")] = None


class ById(Arguments):
    id: Annotated[Id, Field(description="The memory id.")]


class Scope(Arguments):
    namespace: Namespace = "default"


class Diary(Arguments):
    date: Annotated[Day | None, Field(description="The day; omit for today's and yesterday's entries.")] = None
    namespace: Namespace = "default"


class Message(Arguments):
    role: Literal["system", "user", "assistant", "tool"]
    content: Annotated[str, Field(max_length=200_000)]
    id: Id | None = None
    created_at: Annotated[Moment | None, Field(description=ingest.SAID_AT)] = None
    name: Annotated[SpeakerName | None, Field(description="Who said it, when more than two people talk.")] = None


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
    aliases: Annotated[list[GlossaryTerm], Field(default_factory=list, max_length=50)]
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
    valid_to: ValidTo | None = None
    valid_days: ValidDays | None = None
    layer: LayerChoice | None = None


class Upsert(Fields):
    fact_key: Annotated[FactKey, Field(description="A stable key for the fact, e.g. 'user.coffee.preference'.")]
    content: MemoryContent
    namespace: Namespace = "default"


class Supersede(Fields):
    old_id: Annotated[Id, Field(description="The memory the new one replaces.")]
    content: MemoryContent
    fact_key: FactKey | None = None
    namespace: Namespace = "default"


class FoldArguments(Arguments):
    fold_id: Annotated[Id, Field(description="The fold named in the summary that replaced the turns.")]


class PlanList(Arguments):
    namespace: Namespace = "default"
    status: Annotated[ShortText, Field(json_schema_extra={"enum": list(PLAN_STATUSES)})] = "active"
    limit: Annotated[int, Field(ge=1, le=200)] = 50


class NoArguments(Arguments):
    """The tool takes none."""


class Unanchored(Arguments):
    namespace: Namespace = "default"
    limit: Annotated[int, Field(ge=1, le=100)] = 50
    cursor: Annotated[str | None, Field(max_length=500, description="next_cursor from the previous page.")] = None


class PlanSet(Arguments):
    id: Annotated[Id, Field(description="The plan's memory id.")]
    status: Annotated[Literal["done", "abandoned"], Field(description="What became of the plan.")]


class Share(Arguments):
    memory_id: Annotated[Id, Field(description="The memory to share; it stays in its own namespace.")]
    target_namespace: Annotated[Namespace, Field(description="Where it should be recalled too, e.g. 'default'.")]
    note: Annotated[str | None, Field(max_length=2000, description="Why it is worth sharing, for the owner.")] = None


class ShareList(Arguments):
    namespace: Annotated[Namespace | None, Field(description="Only shares out of or into this namespace.")] = None
    status: Annotated[ShortText, Field(json_schema_extra={"enum": list(SHARE_STATUSES)})] | None = Field(
        None, description="Default: the open ones (proposed and approved)."
    )
    limit: Annotated[int, Field(ge=1, le=200)] = 50


class MoodLog(Arguments):
    label: moods.MoodLabel
    whose: moods.Whose = "companion"
    reason: Annotated[str, Field(max_length=500, description="Why, in a few words.")] = ""
    intensity: Annotated[Score, Field(description="0 barely, 1 overwhelming.")] = 0.5
    felt_at: Annotated[Moment | None, Field(description=moods.FELT_AT)] = None
    namespace: Namespace = "default"


class MoodRecent(Arguments):
    days: Annotated[int, Field(ge=1, le=90, description="The last this many local days, today included.")] = 7
    whose: moods.Whose | None = None
    limit: Annotated[int, Field(ge=1, le=500)] = 200
    namespace: Namespace = "default"


class TodoAdd(Arguments):
    text: Annotated[str, Field(min_length=1, max_length=500, description="What she means to do.")]
    priority: Annotated[int, Field(ge=1, le=5, description="1 whenever … 5 urgent.")] = 3
    due: Annotated[Day | None, Field(description="The day it is due, optional.")] = None
    note: Annotated[str | None, Field(max_length=2000)] = None
    namespace: Namespace = "default"


class TodoId(Arguments):
    id: Annotated[Id, Field(description="The todo's id.")]


class TodoList(Arguments):
    status: Literal["open", "done", "abandoned"] = "open"
    limit: Annotated[int, Field(ge=1, le=200)] = 50
    namespace: Namespace = "default"


class PersonUpsert(Arguments):
    name: people.PersonName
    aliases: Annotated[
        list[people.PersonName] | None,
        Field(max_length=20, description="Other names she goes by ('my sister', '安娜'); given, they replace hers."),
    ] = None
    relation: Annotated[str | None, Field(max_length=100, description="Who she is to the owner: sister, friend…")] = (
        None
    )
    notes: Annotated[str | None, Field(max_length=4000)] = None
    namespace: Namespace = "default"


class PersonById(Arguments):
    id: Annotated[Id, Field(description="The person's id.")]


class PersonList(Arguments):
    query: Annotated[
        str | None, Field(max_length=200, description="Only the people this text names, or whose names start with it.")
    ] = None
    limit: Annotated[int, Field(ge=1, le=500)] = 100
    namespace: Namespace = "default"


class PersonMerge(Arguments):
    person_id: Annotated[Id, Field(description="The person who stays.")]
    other_id: Annotated[Id, Field(description="The person who is the same as her (her names become aliases).")]
    reason: Annotated[str, Field(max_length=500)] = ""
    namespace: Namespace = "default"


class ConversationGet(Arguments, conversations.Window):
    """conversation_get's input, strict as every tool's arguments are."""

    model_config = ConfigDict(extra="forbid")


class ConversationForget(Arguments, conversations.Forget):
    """conversation_forget's input, strict as every tool's arguments are."""

    model_config = ConfigDict(extra="forbid")


# What a tool's arguments ask for: the use case to run and its input.
Translation = Callable[[Any], tuple[UseCase[Any, Any], Input]]


@dataclass(frozen=True)
class Tool:
    """A tool is a use case (or, for diary_get, one of two) under MCP's names: its own
    argument model (strict, and without what REST keeps for the owner), translated into
    the use case's input. Scope and answer are the use case's."""

    name: str
    description: str
    arguments: type[Arguments]
    use_cases: tuple[UseCase[Any, Any], ...]
    translate: Translation

    @property
    def scope(self) -> str:
        return self.use_cases[0].scope

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema()

    @property
    def output_schema(self) -> dict[str, Any]:
        schemas = [case.output.model_json_schema(mode="serialization") for case in self.use_cases]
        if len(schemas) == 1:
            return schemas[0]
        # MCP asks for an object schema at the root: one of the answers, their
        # definitions merged.
        definitions = {name: d for schema in schemas for name, d in schema.pop("$defs", {}).items()}
        return {"type": "object", "anyOf": schemas, "$defs": definitions}

    async def call(self, runtime: Runtime, principal: Principal, arguments: Arguments) -> BaseModel:
        case, given = self.translate(arguments)
        answer: BaseModel = await case(runtime, principal, given)
        return answer


def _fields(a: Fields) -> dict[str, Any]:
    return {
        **a.model_dump(
            include={"type", "importance", "confidence", "tags", "pinned", "valid_to", "valid_days", "layer"},
            exclude_none=True,
        ),
        "source": "mcp",
    }


def _list(a: List) -> tuple[UseCase[Any, Any], Input]:
    query = memories.MemoryQuery(
        namespace=a.namespace,
        types=[a.type] if a.type else [],
        statuses=[a.status],
        layers=[a.layer] if a.layer else [],
        limit=a.limit,
        cursor=a.cursor,
    )
    return memories.list_memories, query


def _diary(a: Diary) -> tuple[UseCase[Any, Any], Input]:
    if a.date is None:
        return boot.recent_diary, boot.Scope(namespace=a.namespace)
    return boot.diary, boot.DiaryDay(namespace=a.namespace, date=a.date)


def _upsert(a: Upsert) -> tuple[UseCase[Any, Any], Input]:
    return memories.upsert_memory, memories.MemoryUpsert(
        **_fields(a), namespace=a.namespace, content=a.content, fact_key=a.fact_key
    )


def _supersede(a: Supersede) -> tuple[UseCase[Any, Any], Input]:
    return memories.supersede_memory, memories.MemorySupersede(
        **_fields(a), namespace=a.namespace, content=a.content, fact_key=a.fact_key, old_id=a.old_id
    )


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "memory_search",
            "Search long-term memories, and what was said in past conversations, by meaning and words. "
            "Use it to look something up; unlike memory_recall it does not count as using them.",
            Search,
            (recall.search,),
            lambda a: (recall.search, recall.SearchQuery(**a.model_dump())),
        ),
        Tool(
            "memory_recall",
            "Recall the few memories (and things said before) relevant to the user's current message, "
            "with a ready <memories> block to put in context. Use it once per user turn.",
            Recall,
            (recall.recall,),
            lambda a: (recall.recall, recall.RecallQuery(**a.model_dump(), include_prompt=True)),
        ),
        Tool(
            "conversation_search",
            "Search what was said in past conversations (the user's messages and your replies) by meaning "
            "and words, optionally by role, date range (start_date, end_date) and conversation; the turns "
            "most relevant first, each with when it was said.",
            ConversationSearch,
            (conversations.search,),
            lambda a: (conversations.search, conversations.ConversationQuery(**a.model_dump())),
        ),
        Tool(
            "memory_list",
            "List memories, newest first, by type and status; page with cursor.",
            List,
            (memories.list_memories,),
            _list,
        ),
        Tool(
            "memory_get",
            "Read one memory by id, with its relations and history.",
            ById,
            (memories.get_memory,),
            lambda a: (memories.get_memory, memories.MemoryId(id=a.id)),
        ),
        Tool(
            "memory_export",
            "Export everything in a namespace (memories, history, precious, glossary, diary, "
            "messages) as one JSON document.",
            Scope,
            (snapshot.export,),
            lambda a: (snapshot.export, snapshot.ExportScope(namespace=a.namespace)),
        ),
        Tool(
            "memory_boot",
            "The boot package for a new conversation: recent diary impressions, precious words, "
            "glossary, today's messages, counts by type. Use it at the start of a session.",
            Scope,
            (boot.boot,),
            lambda a: (boot.boot, boot.Scope(namespace=a.namespace)),
        ),
        Tool(
            "diary_get",
            "Read the diary: one day (date) or, without a date, today's and yesterday's.",
            Diary,
            (boot.diary, boot.recent_diary),
            _diary,
        ),
        Tool(
            "memory_upsert",
            "Save a lasting fact, preference, boundary or decision under a stable fact_key; "
            "the same key updates the memory instead of duplicating it.",
            Upsert,
            (memories.upsert_memory,),
            _upsert,
        ),
        Tool(
            "memory_supersede",
            "Replace a memory that is no longer true with a new version; the old one is kept as history.",
            Supersede,
            (memories.supersede_memory,),
            _supersede,
        ),
        Tool(
            "memory_archive",
            "Archive a memory that no longer matters (kept, but never recalled).",
            ById,
            (memories.archive_memory,),
            lambda a: (memories.archive_memory, memories.MemoryId(id=a.id)),
        ),
        Tool(
            "memory_delete",
            "Delete a memory (it stops being recalled; the owner can purge it).",
            ById,
            (memories.delete_memory,),
            lambda a: (memories.delete_memory, memories.MemoryDelete(id=a.id)),
        ),
        Tool(
            "memory_ingest",
            "Store raw chat messages (they become memories in the nightly dream). Sending the same "
            "messages again stores nothing twice: for good when each has an id or created_at, "
            "else within 10 minutes (later, the same words are a new message).",
            Ingest,
            (ingest.ingest,),
            lambda a: (ingest.ingest, ingest.IngestRequest(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "memory_pin",
            "Keep the user's exact words as a precious memory (append-only, never edited).",
            Pin,
            (precious.add_precious,),
            lambda a: (precious.add_precious, precious.PreciousWrite(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "plan_list",
            "List plans (default the open ones), the soonest end first. A plan is a memory of type "
            "'plan' written with memory_upsert and valid_to or valid_days; it stops being recalled "
            "when it is done, abandoned or past its end.",
            PlanList,
            (plans.list_plans,),
            lambda a: (plans.list_plans, plans.PlanQuery(namespace=a.namespace, statuses=[a.status], limit=a.limit)),
        ),
        Tool(
            "plan_update",
            "Mark an open plan done or abandoned.",
            PlanSet,
            (plans.update_plan,),
            lambda a: (plans.update_plan, plans.PlanUpdate(id=a.id, status=a.status)),
        ),
        Tool(
            "context_expand",
            "Read back, word for word, the turns of a long chat that were folded into a summary "
            "(the summary names its fold_id).",
            FoldArguments,
            (context.expand,),
            lambda a: (context.expand, context.FoldId(fold_id=a.fold_id)),
        ),
        Tool(
            "memory_share",
            "Propose a memory for another namespace (e.g. from a bot's own into 'default'). The owner "
            "approves or rejects it; only once approved is it recalled there, with its own namespace shown.",
            Share,
            (shares.propose_share,),
            lambda a: (shares.propose_share, shares.ShareProposal(**a.model_dump())),
        ),
        Tool(
            "share_list",
            "List shared memories (default the open ones: proposed and approved), out of or into a namespace.",
            ShareList,
            (shares.list_shares,),
            lambda a: (
                shares.list_shares,
                shares.ShareQuery(namespace=a.namespace, statuses=[a.status] if a.status else [], limit=a.limit),
            ),
        ),
        Tool(
            "memory_health",
            "The memory's health report: each check (layers, types, evidence coverage, duplicates, "
            "long-term and instant shares, memories unused for 90 days, plans past their end, open "
            "contradictions, the vector index, backlogs, the nightly job, the database) ok, warn or "
            "fail with a number.",
            NoArguments,
            (doctor.report,),
            lambda _: (doctor.report, Nothing()),
        ),
        Tool(
            "memory_unanchored",
            "The user's messages older than a day that no memory cites, newest first: what the "
            "nightly dream may have missed. Page with cursor.",
            Unanchored,
            (doctor.unanchored,),
            lambda a: (doctor.unanchored, doctor.UnanchoredQuery(**a.model_dump())),
        ),
        Tool(
            "mood_log",
            f"Log a mood on the timeline: hers (whose companion, the default) or the owner's as she perceives "
            f"it (whose owner). Labels: {', '.join(MOOD_LABELS)}. Moods fade; they are never recalled as memories.",
            MoodLog,
            (moods.log_mood,),
            lambda a: (moods.log_mood, moods.MoodWrite(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "mood_recent",
            "The mood timeline of the last days (default 7), newest first, with its distribution.",
            MoodRecent,
            (moods.recent_moods,),
            lambda a: (moods.recent_moods, moods.MoodQuery(**a.model_dump())),
        ),
        Tool(
            "todo_add",
            "Add a todo to her own list (not the owner's plans): text, priority 1–5, an optional due day.",
            TodoAdd,
            (todos.add_todo,),
            lambda a: (todos.add_todo, todos.TodoWrite(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "todo_done",
            "Mark one of her open todos done.",
            TodoId,
            (todos.close_todo,),
            lambda a: (todos.close_todo, todos.TodoClose(id=a.id, status="done")),
        ),
        Tool(
            "todo_abandon",
            "Give up one of her open todos.",
            TodoId,
            (todos.close_todo,),
            lambda a: (todos.close_todo, todos.TodoClose(id=a.id, status="abandoned")),
        ),
        Tool(
            "todo_next",
            f"Pick the next todo: {todos.NEXT_RULE}.",
            Scope,
            (todos.next_todo,),
            lambda a: (todos.next_todo, todos.TodoScope(namespace=a.namespace)),
        ),
        Tool(
            "todo_list",
            "Her todos by status: open ones (the default) in the order they come next, closed ones the latest first.",
            TodoList,
            (todos.list_todos,),
            lambda a: (todos.list_todos, todos.TodoQuery(**a.model_dump())),
        ),
        Tool(
            "todo_stats",
            "Her todo counts (open, done, abandoned, done in the last 7 days, overdue), the next one, and a "
            "short summary for a prompt.",
            Scope,
            (todos.todo_stats,),
            lambda a: (todos.todo_stats, todos.TodoScope(namespace=a.namespace)),
        ),
        Tool(
            "person_upsert",
            "Register a person in the owner's life (name, aliases, relation to the owner, notes), or change "
            "the one already called by that name. Recall finds what was said of her by any of her names.",
            PersonUpsert,
            (people.upsert_person,),
            lambda a: (people.upsert_person, people.PersonWrite(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "person_get",
            "Read one person (names, relation, notes, familiarity) and the memories about her.",
            PersonById,
            (people.get_person,),
            lambda a: (people.get_person, people.PersonId(id=a.id)),
        ),
        Tool(
            "person_list",
            "List the people in the owner's life, the most familiar first; query finds the ones a text names.",
            PersonList,
            (people.list_people,),
            lambda a: (people.list_people, people.PersonQuery(**a.model_dump())),
        ),
        Tool(
            "person_merge",
            "Propose that two people are one (e.g. 'Ana' and 'my sister'). The owner approves or rejects it; "
            "approved, the other's names become aliases and her memories move to the person who stays.",
            PersonMerge,
            (people.propose_merge,),
            lambda a: (people.propose_merge, people.MergeProposal(**a.model_dump(), source="mcp")),
        ),
        Tool(
            "conversation_get",
            "Read the turns around a message in its conversation, in the order they were said "
            "(before and after it): the context of a conversation_search hit.",
            ConversationGet,
            (conversations.get_turns,),
            lambda a: (conversations.get_turns, conversations.Window(**a.model_dump())),
        ),
        Tool(
            "conversation_forget",
            "Forget what was said, for good: one turn (message_id), a conversation (conversation_id), or "
            "everything said from since until until (of one conversation with conversation_id). The owner "
            "key only.",
            ConversationForget,
            (conversations.forget,),
            lambda a: (conversations.forget, conversations.Forget(**a.model_dump())),
        ),
        Tool(
            "glossary_set",
            "Define the user's own term (with aliases), so it is understood when it comes up.",
            GlossarySet,
            (glossary.set_glossary,),
            lambda a: (glossary.set_glossary, glossary.GlossaryWrite(**a.model_dump())),
        ),
    )
}

# Tools of older versions, and what replaces them.
RETIRED = {
    "memory_create": "memory_create was removed: use memory_upsert with a fact_key",
    "digest_get": "digest_get was removed: use diary_get",
    "digest_set": "digest_set was removed: the nightly dream writes the diary; read it with diary_get",
}
