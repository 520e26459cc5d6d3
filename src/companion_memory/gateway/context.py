"""Context assembly: what the companion is told, as one ``<memories>`` block of sections
under a token budget (CONTEXT_BUDGET_TOKENS; tokens as domain/tokens.py counts them).

- **What I remember**: in a chat turn, the memories recalled for the message (most
  relevant first) and the glossary terms it used; in the boot package, the permanent
  ones (who the user is, what they forbade, what is pinned), then the people in the
  user's life, each with a familiarity word.
- **What we are doing**: open plans, the soonest end first, then her own open todos in
  the order they come next.
- **Impressions**: yesterday, the newest week, the newest month; in a chat turn, also the
  older weeks its hits are from (gateway/weeks.py).
- **Shared with me**: memories shared into this namespace from another.

Each section has a cap, its share of the budget (``SECTIONS``), so one long section
cannot starve the others; what the sections leave unused then goes, in section order, to
those that had more to say. Lines are ranked: a section keeps its first lines and cuts
the rest. A line may have a shorter form, taken when the whole does not fit. The report
says, per section, its cap, the tokens it used and what it kept and cut.

An episode recalled (what was said, memory/episode_recall.py) says when and who:
``3. [said 2023-05-08 by you] I went to a support group yesterday…`` ("by you": the
user; "by me": the companion, whose memories these are; the speaker's name when the
client gave one). Where it cannot be read alone,
the turn next to it comes along, as long as the budget has room for both: a short reply
with the turn it answers, a question with the turn that answered it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..clock import local_date, parse_iso
from ..domain.episode import Episode
from ..domain.glossary import Term
from ..domain.memory import Memory
from ..domain.person import Person, familiarity_word
from ..domain.tokens import text_tokens
from ..memory.plans import Plans
from ..memory.recall.hits import Hit, RecallResult
from ..memory.todos import Todos, todo_text
from ..ports import Clock, Database
from ..store.memories import MemoryStore
from ..store.shares import ShareStore
from .ladder import Ladder, clip
from .weeks import WeekBlocks

# (name, title, share of the budget)
SECTIONS: tuple[tuple[str, str, float], ...] = (
    ("remember", "What I remember (most relevant first):", 0.45),
    ("doing", "What we are doing:", 0.2),
    ("impressions", "Impressions:", 0.2),
    ("shared", "Shared with me (from other namespaces):", 0.15),
)
# Lines read for the sections that are not ranked by a query.
PLANS_SHOWN = 10
TODOS_SHOWN = 5
PERMANENT_SHOWN = 20
SHARED_SHOWN = 10
# An episode is shown up to this many characters, a turn beside it up to the second.
EPISODE_SHOWN_CHARS = 600
NEIGHBOUR_SHOWN_CHARS = 200
# A turn this short (in tokens) is a reply that needs the turn it answers.
SHORT_TURN_TOKENS = 16
# Who said it, as the label says it (after "by") and as a sentence starts with it.
# The sections of the block that do not depend on the message, by name.
Standing = dict[str, list[str]]

_BY = {"user": "you", "assistant": "me", "system": "the system", "tool": "a tool"}
_SUBJECT = {"user": "you", "assistant": "I", "system": "the system", "tool": "a tool"}
_QUESTION_ENDS = ("?", "？")


@dataclass(frozen=True)
class Line:
    """A line of a section, with the shorter form it falls back to when it does not fit."""

    text: str
    short: str


@dataclass
class SectionReport:
    cap: int
    tokens: int = 0
    kept: int = 0
    cut: int = 0


@dataclass
class Assembled:
    text: str
    sections: dict[str, SectionReport]


def assemble(content: Mapping[str, Sequence[str | Line]], budget: int) -> Assembled:
    """The block of the sections' lines that fit, and what each kept and cut. Empty when
    no section has a line, so that nothing is injected."""
    reports = {name: SectionReport(cap=int(budget * share)) for name, _, share in SECTIONS}
    titles = {name: title for name, title, _ in SECTIONS}
    kept: dict[str, list[str]] = {name: [] for name in reports}

    def fill(name: str, room: int) -> int:
        """Lines of ``name`` taken while they fit in ``room`` more tokens; the tokens used."""
        lines, report, used = content.get(name, ()), reports[name], 0
        for line in lines[len(kept[name]) :]:
            title = 0 if kept[name] else text_tokens(titles[name])
            forms = (line.text, line.short) if isinstance(line, Line) else (line,)
            fitting = next((f for f in forms if used + title + text_tokens(f) <= room), None)
            if fitting is None:
                break
            kept[name].append(fitting)
            used += title + text_tokens(fitting)
        report.tokens += used
        return used

    spent = sum(fill(name, reports[name].cap) for name in reports)
    for name in reports:
        spent += fill(name, budget - spent)
    for name, report in reports.items():
        report.kept = len(kept[name])
        report.cut = len(content.get(name, ())) - report.kept
    body = [line for name in reports if kept[name] for line in (titles[name], *kept[name])]
    return Assembled("\n".join(["<memories>", *body, "</memories>"]) if body else "", reports)


def hit_line(number: int, hit: Hit, time_zone: str, shown: frozenset[str] = frozenset()) -> str | Line:
    """The line of a recalled hit; for an episode, with the turn beside it that makes it
    readable (unless that turn is a hit of its own, among ``shown``)."""
    if hit.episode is not None:
        return episode_line(number, hit.episode, [e for e in hit.thread if e.id not in shown], time_zone)
    memory = hit.memory
    note = "".join(
        f' (this contradicts an older memory, "{claim}"; the user has not yet said which one stands)'
        for claim in hit.contradicted_claims
    )
    # A shared memory was written about another context (a bot's): the model should know.
    origin = f", shared from {memory.namespace}" if hit.share_id else ""
    return f"{number}. {_label(memory, origin, time_zone)} {memory.content}{note}"


def episode_line(number: int, episode: Episode, thread: Sequence[Episode], time_zone: str) -> Line:
    """``N. [said <day> by <who>] <what>``, and the turn before it when it is a short reply,
    or the turn after it when it is a question (``thread``: the turns just before and after)."""
    line = (
        f"{number}. [said {stored_day(episode.created_at, time_zone)} by {episode.speaker or _BY.get(episode.role, episode.role)}] "
        f"{_cut(episode.content, EPISODE_SHOWN_CHARS)}"
    )
    question = episode.content.rstrip().endswith(_QUESTION_ENDS)
    short = text_tokens(episode.content) <= SHORT_TURN_TOKENS
    beside: list[str] = []
    for turn in thread:
        who, said = turn.speaker or _SUBJECT.get(turn.role, turn.role), _cut(turn.content, NEIGHBOUR_SHOWN_CHARS)
        earlier = (turn.created_at, turn.id) < (episode.created_at, episode.id)
        if earlier and short and not question:
            beside.append(f'   (before it, {who} said: "{said}")')
        elif not earlier and question:
            beside.append(f'   (then {who} said: "{said}")')
    return Line("\n".join([line, *beside]), line)


def _cut(text: str, limit: int) -> str:
    return clip(" ".join(text.split()), limit)


def memory_line(memory: Memory, time_zone: str) -> str:
    return f"- {_label(memory, '', time_zone)} {memory.content}"


def _label(memory: Memory, origin: str, time_zone: str) -> str:
    until = f", until {memory.valid_to}" if memory.valid_to else ""
    return f"[{memory.type}, {stored_day(memory.updated_at, time_zone)}{until}{origin}]"


def hit_day(hit: Hit, time_zone: str) -> str:
    """The day a hit's line shows: when an episode was said, when a memory was last written."""
    return stored_day(hit.episode.created_at if hit.episode is not None else hit.memory.updated_at, time_zone)


def stored_day(stamp: str, time_zone: str) -> str:
    """The day a stored UTC time falls on in DREAM_TIME_ZONE, as the boot package's date and
    the panel's days are; a time that does not parse shows as stored."""
    try:
        return local_date(parse_iso(stamp), time_zone).isoformat()
    except ValueError:
        return stamp[:10]


def people_lines(people: Sequence[Person]) -> list[str]:
    """``- Ana (sister; also 安娜): close``, the most familiar first."""
    if not people:
        return []
    lines = ["People in the user's life (the most familiar first):"]
    for person in people:
        about = [person.relation] if person.relation else []
        about += [f"also {', '.join(person.aliases)}"] if person.aliases else []
        shown = f" ({'; '.join(about)})" if about else ""
        lines.append(f"- {person.name}{shown}: {familiarity_word(person.familiarity)}")
    return lines


def glossary_lines(entries: Sequence[Term]) -> list[str]:
    if not entries:
        return []
    lines = ["Glossary (the user's own words):"]
    for entry in entries:
        aliases = f" (also: {', '.join(entry.aliases)})" if entry.aliases else ""
        definition = f": {entry.definition}" if entry.definition else ""
        lines.append(f"- {entry.term}{aliases}{definition}")
    return lines


class ContextAssembler:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        budget: int,
        time_zone: str,
        plans: Plans,
        todos: Todos,
        ladder: Ladder,
        weeks: WeekBlocks,
    ) -> None:
        self.db = db
        self.clock = clock
        self.budget = budget
        self.time_zone = time_zone
        self.plans = plans
        self.todos = todos
        self.ladder = ladder
        self.weeks = weeks
        self.memories = MemoryStore(db)

    async def for_turn(self, namespace: str, result: RecallResult, standing: Standing | None = None) -> Assembled:
        """The block for one chat turn: what recall found, and the rest of the context
        (``standing``, when the caller read it beside recall)."""
        own = [h for h in result.hits if not h.share_id]
        shared = [h for h in result.hits if h.share_id]
        shown = frozenset(h.memory.id for h in result.hits)
        remember: list[str | Line] = [hit_line(n, h, self.time_zone, shown) for n, h in enumerate(own, start=1)]
        standing = standing if standing is not None else await self.standing(namespace)
        # After the ladder: its lines come first when the section is short of room. Own
        # hits only: a shared memory's week is in another namespace's diary.
        weeks = await self.weeks.for_hits(namespace, [(n, hit_day(h, self.time_zone)) for n, h in enumerate(own, 1)])
        return assemble(
            {
                "remember": [*remember, *glossary_lines(result.glossary_hits)],
                "shared": [hit_line(n, h, self.time_zone) for n, h in enumerate(shared, start=1)],
                **standing,
                "impressions": [*standing["impressions"], *weeks],
            },
            self.budget,
        )

    async def for_boot(self, namespace: str, people: Sequence[Person]) -> Assembled:
        """The block for a new conversation: no message yet, so what always matters, and
        who the people in the owner's life are."""
        permanent, _ = await self.memories.page(namespace, layers=("permanent",), limit=PERMANENT_SHOWN)
        permanent.sort(key=lambda m: m.importance, reverse=True)
        approved = await ShareStore(self.db).approved_into([namespace], SHARED_SHOWN)
        shared = await self.memories.get_many([s.memory_id for s in approved])
        return assemble(
            {
                "remember": [*(memory_line(m, self.time_zone) for m in permanent), *people_lines(people)],
                "shared": [f"{memory_line(m, self.time_zone)} (shared from {m.namespace})" for m in shared],
                **await self.standing(namespace),
            },
            self.budget,
        )

    async def standing(self, namespace: str) -> Standing:
        """The sections that do not depend on the message: plans, todos and impressions."""
        plans, todos, ladder = await asyncio.gather(
            self.plans.upcoming(namespace, PLANS_SHOWN),
            self.todos.listed(namespace, "open", TODOS_SHOWN),
            self.ladder.read(namespace),
        )
        today = self.todos.today()
        return {
            "doing": [memory_line(p, self.time_zone) for p in plans]
            + [f"- [her todo] {todo_text(t, today)}" for t in todos],
            "impressions": ladder.text.splitlines()[1:],
        }
