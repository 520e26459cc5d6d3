"""Her own todos (not the owner's plans): add, done, abandon, the next one, and stats."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..domain.scopes import MEMORY_READ, MEMORY_WRITE
from ..domain.todo import Todo
from ..memory.todos import DEFAULT_PRIORITY, TODO_STATUSES, TodoOverview
from ..runtime import Runtime
from .fields import CutPrivate, Day, HasWords, Namespace, PageLimit, ShortText, TodoRef
from .principal import Principal
from .use_case import Input, Output, use_case

NEXT_RULE = "due today or overdue first, then the highest priority, then the earliest due day, then the oldest"


class TodoRecord(BaseModel):
    id: str
    namespace: str
    text: str
    priority: int = Field(description="1 whenever … 5 urgent.")
    due: str | None = Field(description="The day it is due (YYYY-MM-DD), if any.")
    status: str = Field(description="open, done or abandoned.")
    note: str | None
    source: str
    created_at: str
    updated_at: str
    closed_at: str | None = Field(description="When it was done or abandoned.")

    @classmethod
    def of(cls, todo: Todo) -> TodoRecord:
        return cls.model_validate(todo, from_attributes=True)


class TodoWrite(Input):
    namespace: Namespace = "default"
    text: Annotated[str, Field(min_length=1, max_length=500, description="What she means to do."), HasWords]
    priority: Annotated[int, Field(ge=1, le=5, description="1 whenever … 5 urgent.")] = DEFAULT_PRIORITY
    due: Annotated[Day | None, Field(description="The day it is due, optional.")] = None
    note: Annotated[str, Field(max_length=2000), CutPrivate] | None = None
    source: ShortText = "api"


class TodoClose(Input):
    id: Annotated[TodoRef, Field(description="The todo's id.")]
    status: Annotated[Literal["done", "abandoned"], Field(description="What became of it.")]


class TodoQuery(Input):
    namespace: Namespace = "default"
    status: Annotated[
        Literal["open", "done", "abandoned"],
        Field(description=f"One of {', '.join(TODO_STATUSES)}; open ones come in the order they are next."),
    ] = "open"
    limit: PageLimit = 50


class TodoScope(Input):
    namespace: Namespace = "default"


class TodoAnswer(Output):
    todo: TodoRecord


class TodoPage(Output):
    todos: list[TodoRecord]
    count: int


class TodoNext(Output):
    todo: TodoRecord | None = Field(description=f"The next one: {NEXT_RULE}; null when none is open.")


class TodoStats(Output):
    open: int
    done: int
    abandoned: int
    done_last_7_days: int
    overdue: int = Field(description="Open ones past their due day.")
    next: TodoRecord | None = Field(description=f"The next one: {NEXT_RULE}.")
    summary: str = Field(description="A few lines for a prompt; empty when there is nothing to say.")

    @classmethod
    def of(cls, overview: TodoOverview) -> TodoStats:
        return cls.model_validate(overview, from_attributes=True)


@use_case("todos.add", MEMORY_WRITE)
async def add_todo(runtime: Runtime, _: Principal, write: TodoWrite) -> TodoAnswer:
    """Add a todo to her list."""
    todo = await runtime.todos.add(write.namespace, write.text, write.priority, write.due, write.note, write.source)
    return TodoAnswer(todo=TodoRecord.of(todo))


@use_case("todos.close", MEMORY_WRITE)
async def close_todo(runtime: Runtime, _: Principal, close: TodoClose) -> TodoAnswer:
    """Mark an open todo done or abandoned."""
    return TodoAnswer(todo=TodoRecord.of(await runtime.todos.close(close.id, close.status)))


@use_case("todos.list", MEMORY_READ)
async def list_todos(runtime: Runtime, _: Principal, query: TodoQuery) -> TodoPage:
    """Her todos by status: open ones in the order they come next, closed ones the latest first."""
    todos = await runtime.todos.listed(query.namespace, query.status, query.limit)
    return TodoPage(todos=[TodoRecord.of(t) for t in todos], count=len(todos))


@use_case("todos.next", MEMORY_READ)
async def next_todo(runtime: Runtime, _: Principal, scope: TodoScope) -> TodoNext:
    """The todo to do next."""
    return TodoNext.model_validate({"todo": await runtime.todos.next(scope.namespace)}, from_attributes=True)


@use_case("todos.stats", MEMORY_READ)
async def todo_stats(runtime: Runtime, _: Principal, scope: TodoScope) -> TodoStats:
    """Open, done and abandoned counts, done in the last 7 days, overdue, the next one, a prompt summary."""
    return TodoStats.of(await runtime.todos.stats(scope.namespace))
