"""Her own todos: which one comes next, and a few lines about them for a prompt.

The next one is chosen by one rule, so she, an agent and the owner's panel agree:
1. what is due today or overdue first (it cannot wait),
2. then the highest priority (5 urgent … 1 whenever),
3. then the earliest due day (a todo without one after those with one),
4. then the oldest, then the id (so the order never depends on the database).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from ..clock import iso, local_date, read_day
from ..domain.todo import Todo
from ..errors import Conflict, NotFound
from ..ports import Clock, Database
from ..store.todos import TodoStore
from .config import MemoryConfig

DEFAULT_PRIORITY = 3
TODO_STATUSES = ("open", "done", "abandoned")
# The prompt summary: at most this many todos, each cut to TODO_LINE_CHARS, the whole
# capped at SUMMARY_CHARS, so a long list never crowds the prompt.
SUMMARY_TODOS = 3
TODO_LINE_CHARS = 60
SUMMARY_CHARS = 300
# Open todos read to order them; a list longer than this is not a todo list any more.
OPEN_LIMIT = 1000


def is_due(todo: Todo, today: date) -> bool:
    return bool(todo.due) and str(todo.due) <= today.isoformat()


def next_first(todo: Todo, today: date) -> tuple[bool, int, str, str, str]:
    """The sort key of the rule above: sorting open todos by it puts the next one first."""
    return (
        not is_due(todo, today),
        -int(todo.priority),
        todo.due or "9999-99-99",
        todo.created_at,
        todo.id,
    )


def in_order(todos: Iterable[Todo], today: date) -> list[Todo]:
    return sorted(todos, key=lambda todo: next_first(todo, today))


def pick_next(todos: Iterable[Todo], today: date) -> Todo | None:
    """The open todo to do next, by the module's rule; None when none is open."""
    open_ = [t for t in todos if t.status == "open"]
    return min(open_, key=lambda todo: next_first(todo, today)) if open_ else None


def todo_text(todo: Todo, today: date) -> str:
    """One todo for a prompt: its text cut to TODO_LINE_CHARS, its due day and a high priority."""
    text = " ".join(str(todo.text).split())
    if len(text) > TODO_LINE_CHARS:
        text = text[: TODO_LINE_CHARS - 1].rstrip() + "…"
    marks = [f"due {todo.due}" + (" overdue" if str(todo.due) < today.isoformat() else "")] if todo.due else []
    if int(todo.priority) >= 4:
        marks.append(f"priority {todo.priority}")
    return text + (f" ({', '.join(marks)})" if marks else "")


def todo_summary(open_todos: Sequence[Todo], done_this_week: int, today: date) -> str:
    """A few lines for a prompt: how many are open, the next ones in the rule's order, and
    what she finished in the last seven days; "" when there is nothing to say. At most
    SUMMARY_TODOS todos and SUMMARY_CHARS characters."""
    if not open_todos and not done_this_week:
        return ""
    header = f"[Her todos] {len(open_todos)} open, {done_this_week} done in the last 7 days"
    lines = [header]
    for todo in in_order(open_todos, today)[:SUMMARY_TODOS]:
        line = f"- {todo_text(todo, today)}"
        if sum(len(kept) + 1 for kept in lines) + len(line) > SUMMARY_CHARS:
            break
        lines.append(line)
    hidden = len(open_todos) - (len(lines) - 1)
    if hidden > 0 and sum(len(kept) + 1 for kept in lines) + 12 <= SUMMARY_CHARS:
        lines.append(f"- …{hidden} more")
    return "\n".join(lines)


@dataclass(frozen=True)
class TodoOverview:
    """Counts by status, done in the last 7 days, overdue, the next one and the prompt summary."""

    open: int
    done: int
    abandoned: int
    done_last_7_days: int
    overdue: int
    next: Todo | None
    summary: str


class Todos:
    """Her list in one namespace: add, close, the next one, and counts."""

    def __init__(self, db: Database, clock: Clock, config: MemoryConfig) -> None:
        self.store = TodoStore(db)
        self.clock = clock
        self.config = config

    def today(self) -> date:
        return local_date(self.clock.now(), self.config.dream_time_zone)

    async def add(
        self, namespace: str, text: str, priority: int, due: date | None, note: str | None, source: str
    ) -> Todo:
        at = iso(self.clock.now())
        day = read_day(due, "due") if due else None
        return await self.store.add(namespace, text, priority, day, note, source, at)

    async def close(self, todo_id: str, status: str) -> Todo:
        """Done or abandoned; only an open todo can be closed."""
        todo = await self.store.get(todo_id)
        if todo is None:
            raise NotFound(f"todo {todo_id} not found")
        if not await self.store.close(todo_id, status, iso(self.clock.now())):
            raise Conflict(f"todo {todo_id} is already {todo.status}", code="not_open")
        return await self.store.get(todo_id) or todo

    async def listed(self, namespace: str, status: str, limit: int) -> list[Todo]:
        """Open ones in the order they come next; closed ones the most recent first."""
        if status != "open":
            return await self.store.by_status(namespace, status, limit)
        return in_order(await self.store.by_status(namespace, "open", OPEN_LIMIT), self.today())[:limit]

    async def next(self, namespace: str) -> Todo | None:
        return pick_next(await self.store.by_status(namespace, "open", OPEN_LIMIT), self.today())

    async def stats(self, namespace: str) -> TodoOverview:
        today = self.today()
        open_todos = await self.store.by_status(namespace, "open", OPEN_LIMIT)
        counts = await self.store.counts(namespace, iso(self.clock.now() - timedelta(days=7)))
        return TodoOverview(
            open=counts["open"],
            done=counts["done"],
            abandoned=counts["abandoned"],
            done_last_7_days=counts["done_recently"],
            overdue=sum(1 for t in open_todos if t.due and t.due < today.isoformat()),
            next=pick_next(open_todos, today),
            summary=todo_summary(open_todos, counts["done_recently"], today),
        )
