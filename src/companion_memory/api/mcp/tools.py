"""The MCP tools: the reference's 14 memory tools, plan_list and plan_update, memory_share
and share_list, context_expand, the health report (memory_health, in the reference's
style) with its scan for messages no memory cites (memory_unanchored), the mood timeline
(mood_log, mood_recent), her night dreams (night_dreams_recent), her own todos (todo_*),
the people in the owner's life (person_*), what was said (conversation_search in Letta's
shape, conversation_get, conversation_forget) and her persona knobs (persona_get,
persona_tune, persona_revert), over the same services as REST.

Each tool is a use case under an MCP name: its arguments are the use case's input, strict
(``arguments.py``), which gives its JSON Schema; its scope and its answer are the use
case's. A tool needs the same scope as its REST twin (``memory_export`` needs ``export``,
as ``GET /api/memories/export`` does): which surface a key comes through never widens
what it may do. None of the tools offers what REST keeps for the owner (hard delete,
``authored_by``, deciding a share), except conversation_forget, persona_tune and
persona_revert, which need the owner's scope as their REST twins do: only the owner's key
sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from ...application import (
    boot,
    context,
    conversations,
    doctor,
    glossary,
    ingest,
    memories,
    moods,
    night_dreams,
    people,
    persona,
    plans,
    precious,
    recall,
    shares,
    snapshot,
    todos,
)
from ...application.fields import Day, Namespace, SearchText, ShortText, TypeFilter
from ...application.principal import Principal
from ...application.use_case import Input, UseCase
from ...domain.layers import Layer
from ...domain.mood import MOOD_LABELS
from ...domain.types import STATUSES
from ...runtime import Runtime
from .arguments import Arguments, arguments

# What a tool's arguments ask for: the use case to run and its input.
Translation = Callable[[Any], tuple[UseCase[Any, Any], Input]]


@dataclass(frozen=True)
class Tool:
    """A tool is a use case (or, for diary_get, one of two) under an MCP name: its
    arguments (strict, and without what REST keeps for the owner), translated into the
    use case's input. Scope and answer are the use case's."""

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


def tool(
    name: str,
    description: str,
    case: UseCase[Any, Any],
    *,
    without: Collection[str] = (),
    fixed: Mapping[str, Any] | None = None,
    reshape: Callable[[Any], dict[str, Any]] | None = None,
    **fields: Any,
) -> Tool:
    """The tool that runs ``case`` on its arguments: the input's fields (``fields`` adding
    or replacing some) less ``without`` and the ``fixed`` values the tool sets itself.
    ``reshape`` gives the input's values for the tool's own fields; the input ignores
    those fields, as it ignores any argument it has no field for."""
    offered = arguments(case.input, without=(*without, *(fixed or {})), **fields)

    def translate(given: Arguments) -> tuple[UseCase[Any, Any], Input]:
        values = {**given.model_dump(), **(reshape(given) if reshape else {}), **(fixed or {})}
        return case, case.input.model_validate(values)

    return Tool(name, description, offered, (case,), translate)


# A tool's writes say they came through MCP, as REST's say what the caller names.
BY_MCP = {"source": "mcp"}
# What only the owner may give on REST, and what an automatic writer gives with a memory.
NOT_OFFERED = ("source_message_ids", "evidence", "authored_by")
# A search or a recall over MCP says what to look for; its count and floor are the tools' own.
QUERY = (Annotated[SearchText, Field(description="What to look for, in the user's words.")], ...)
# REST's other name for k, and the turns a chat gateway holds: a tool's caller has neither.
PLAIN = ("top_k", "in_prompt")
Status = Annotated[ShortText, Field(json_schema_extra={"enum": list(STATUSES)})]
# A message as a chat client has it; the model and metadata are REST's, for the hooks that relay turns.
MESSAGE = arguments(ingest.IngestMessage, without=("model", "metadata"))


def _one(value: Any) -> list[Any]:
    return [] if value is None else [value]


def _diary(a: Any) -> tuple[UseCase[Any, Any], Input]:
    if a.date is None:
        return boot.recent_diary, boot.Scope(namespace=a.namespace)
    return boot.diary, boot.DiaryDay(namespace=a.namespace, date=a.date)


TOOLS: dict[str, Tool] = {
    each.name: each
    for each in (
        tool(
            "memory_search",
            "Search long-term memories, and what was said in past conversations, by meaning and words. "
            "Use it to look something up; unlike memory_recall it does not count as using them.",
            recall.search,
            without=(*PLAIN, "include_prompt", "filter"),
            query=QUERY,
            k=(recall.Hits, 10),
            min_score=(recall.MinScore, 0.15),
        ),
        tool(
            "memory_recall",
            "Recall the few memories (and things said before) relevant to the user's current message, "
            "with a ready <memories> block to put in context. Use it once per user turn.",
            recall.recall,
            without=PLAIN,
            fixed={"include_prompt": True},
            query=QUERY,
            k=(recall.Hits, 3),
            min_score=(recall.MinScore, 0.15),
        ),
        tool(
            "conversation_search",
            "Search what was said in past conversations (the user's messages and your replies) by meaning "
            "and words, optionally by role, date range (start_date, end_date) and conversation; the turns "
            "most relevant first, each with when it was said.",
            conversations.search,
        ),
        tool(
            "memory_list",
            "List memories, newest first, by type and status; page with cursor.",
            memories.list_memories,
            without=("types", "statuses", "layers"),
            type=(TypeFilter | None, None),
            status=(Status, "active"),
            layer=(Annotated[Layer | None, Field(description="Only memories in this layer.")], None),
            reshape=lambda a: {"types": _one(a.type), "statuses": [a.status], "layers": _one(a.layer)},
        ),
        tool(
            "memory_get",
            "Read one memory by id, with its relations and history.",
            memories.get_memory,
        ),
        tool(
            "memory_export",
            "Export everything in a namespace (memories, history, precious, glossary, diary, "
            "messages) as one JSON document.",
            snapshot.export,
            # One namespace at a time: the whole database is REST's, for the owner.
            namespace=(Namespace, "default"),
        ),
        tool(
            "memory_boot",
            "The boot package for a new conversation: recent diary impressions, precious words, "
            "glossary, today's messages, counts by type. Use it at the start of a session.",
            boot.boot,
        ),
        Tool(
            "diary_get",
            "Read the diary: one day (date) or, without a date, today's and yesterday's.",
            arguments(
                boot.DiaryDay,
                date=(Day | None, Field(None, description="The day; omit for today's and yesterday's entries.")),
            ),
            (boot.diary, boot.recent_diary),
            _diary,
        ),
        tool(
            "memory_upsert",
            "Save a lasting fact, preference, boundary or decision under a stable fact_key; "
            "the same key updates the memory instead of duplicating it.",
            memories.upsert_memory,
            without=NOT_OFFERED,
            fixed=BY_MCP,
            # Required here: a tool's schema is all a model reads before it calls.
            fact_key=(memories.UpsertKey, ...),
        ),
        tool(
            "memory_supersede",
            "Replace a memory that is no longer true with a new version; the old one is kept as history.",
            memories.supersede_memory,
            without=NOT_OFFERED,
            fixed=BY_MCP,
        ),
        tool(
            "memory_archive",
            "Archive a memory that no longer matters (kept, but never recalled).",
            memories.archive_memory,
        ),
        tool(
            "memory_delete",
            "Delete a memory (it stops being recalled; the owner can purge it).",
            memories.delete_memory,
            without=("hard",),
        ),
        tool(
            "memory_ingest",
            "Store raw chat messages (they become memories in the nightly dream). Sending the same "
            "messages again stores nothing twice: for good when each has an id or created_at, "
            "else within 10 minutes (later, the same words are a new message).",
            ingest.ingest,
            fixed=BY_MCP,
            # Each message strict too; the list's bounds and description are the input's.
            messages=(list[MESSAGE], ingest.IngestRequest.model_fields["messages"]),  # type: ignore[valid-type]
        ),
        tool(
            "memory_pin",
            "Keep the user's exact words as a precious memory (append-only, never edited).",
            precious.add_precious,
            fixed=BY_MCP,
        ),
        tool(
            "plan_list",
            "List plans (default the open ones), the soonest end first. A plan is a memory of type "
            "'plan' written with memory_upsert and valid_to or valid_days; it stops being recalled "
            "when it is done, abandoned or past its end.",
            plans.list_plans,
            without=("statuses",),
            status=(plans.PlanStatus, "active"),
            reshape=lambda a: {"statuses": [a.status]},
        ),
        tool(
            "plan_update",
            "Mark an open plan done or abandoned.",
            plans.update_plan,
        ),
        tool(
            "context_expand",
            "Read back, word for word, the turns of a long chat that were folded into a summary "
            "(the summary names its fold_id).",
            context.expand,
        ),
        tool(
            "memory_share",
            "Propose a memory for another namespace (e.g. from a bot's own into 'default'). The owner "
            "approves or rejects it; only once approved is it recalled there, with its own namespace shown.",
            shares.propose_share,
        ),
        tool(
            "share_list",
            "List shared memories (default the open ones: proposed and approved), out of or into a namespace.",
            shares.list_shares,
            without=("statuses",),
            status=(
                shares.ShareStatus | None,
                Field(None, description="Default: the open ones (proposed and approved)."),
            ),
            reshape=lambda a: {"statuses": _one(a.status)},
        ),
        tool(
            "memory_health",
            "The memory's health report: each check (layers, types, evidence coverage, duplicates, "
            "long-term and instant shares, memories unused for 90 days, plans past their end, open "
            "contradictions, the vector index, backlogs, the nightly job, the database) ok, warn or "
            "fail with a number.",
            doctor.report,
        ),
        tool(
            "memory_unanchored",
            "The user's messages older than a day that no memory cites, newest first: what the "
            "nightly dream may have missed. Page with cursor.",
            doctor.unanchored,
        ),
        tool(
            "mood_log",
            f"Log a mood on the timeline: hers (whose companion, the default) or the owner's as she perceives "
            f"it (whose owner). Labels: {', '.join(MOOD_LABELS)}. Moods fade; they are never recalled as memories.",
            moods.log_mood,
            fixed=BY_MCP,
        ),
        tool(
            "mood_recent",
            "The mood timeline of the last days (default 7), newest first, with its distribution.",
            moods.recent_moods,
        ),
        tool(
            "night_dreams_recent",
            "Her night dreams of the last nights (default 7), the newest first: each dreamt after the nightly job "
            "from a few memories, with its mood and the ids of those memories. Dreams, not facts about the user.",
            night_dreams.recent_night_dreams,
        ),
        tool(
            "todo_add",
            "Add a todo to her own list (not the owner's plans): text, priority 1–5, an optional due day.",
            todos.add_todo,
            fixed=BY_MCP,
        ),
        tool(
            "todo_done",
            "Mark one of her open todos done.",
            todos.close_todo,
            fixed={"status": "done"},
        ),
        tool(
            "todo_abandon",
            "Give up one of her open todos.",
            todos.close_todo,
            fixed={"status": "abandoned"},
        ),
        tool(
            "todo_next",
            f"Pick the next todo: {todos.NEXT_RULE}.",
            todos.next_todo,
        ),
        tool(
            "todo_list",
            "Her todos by status: open ones (the default) in the order they come next, closed ones the latest first.",
            todos.list_todos,
        ),
        tool(
            "todo_stats",
            "Her todo counts (open, done, abandoned, done in the last 7 days, overdue), the next one, and a "
            "short summary for a prompt.",
            todos.todo_stats,
        ),
        tool(
            "person_upsert",
            "Register a person in the owner's life (name, aliases, relation to the owner, notes), or change "
            "the one already called by that name. Recall finds what was said of them by any of their names.",
            people.upsert_person,
            fixed=BY_MCP,
        ),
        tool(
            "person_get",
            "Read one person (names, relation, notes, familiarity) and the memories about them.",
            people.get_person,
        ),
        tool(
            "person_list",
            "List the people in the owner's life, the most familiar first; query finds the ones a text names.",
            people.list_people,
        ),
        tool(
            "person_merge",
            "Propose that two people are one (e.g. 'Ana' and 'my sister'). The owner approves or rejects it; "
            "approved, the other's names become aliases and their memories move to the person who stays.",
            people.propose_merge,
            fixed=BY_MCP,
        ),
        tool(
            "conversation_get",
            "Read the turns around a message in its conversation, in the order they were said "
            "(before and after it): the context of a conversation_search hit.",
            conversations.get_turns,
        ),
        tool(
            "conversation_forget",
            "Forget what was said, for good: one turn (message_id), a conversation (conversation_id), or "
            "everything said from since until until (of one conversation with conversation_id). The owner "
            "key only.",
            conversations.forget,
        ),
        tool(
            "persona_get",
            "Her persona knobs (tsundere, playfulness, initiative, softness, snark, mood_swing; each 0–1 around "
            "a baseline) and their summary: in what character she speaks, not memory.",
            persona.get_persona,
        ),
        tool(
            "persona_tune",
            f"Move one persona knob by a small step, with a reason; {persona.BRAKES}. A held tune says which brake "
            "and by how much. The owner key only.",
            persona.tune_persona,
        ),
        tool(
            "persona_revert",
            "Put one persona knob, or all six, back to the baseline, with a reason; never braked. The owner key only.",
            persona.revert_persona,
        ),
        tool(
            "glossary_set",
            "Define the user's own term (with aliases), so it is understood when it comes up.",
            glossary.set_glossary,
        ),
    )
}

# Tools of older versions, and what replaces them.
RETIRED = {
    "memory_create": "memory_create was removed: use memory_upsert with a fact_key",
    "digest_get": "digest_get was removed: use diary_get",
    "digest_set": "digest_set was removed: the nightly dream writes the diary; read it with diary_get",
}
