"""/v1/todos: her own list: add, done, abandon, the next one, stats."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from ..application import todos
from ..application.fields import PageLimit
from ..application.principal import Principal
from ..application.todos import TodoAnswer, TodoClose, TodoNext, TodoPage, TodoScope, TodoStats, TodoWrite
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["todos"], route_class=JsonRoute)


@router.post("/v1/todos", status_code=201)
async def add_todo(
    body: TodoWrite, runtime: RuntimeDep, principal: Annotated[Principal, allowed(todos.add_todo)]
) -> TodoAnswer:
    return await todos.add_todo(runtime, principal, body)


@router.get("/v1/todos")
async def list_todos(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(todos.list_todos)],
    namespace: NamespaceQuery = "default",
    status: Annotated[Literal["open", "done", "abandoned"], Query(description="Default open.")] = "open",
    limit: Annotated[PageLimit, Query()] = 50,
) -> TodoPage:
    return await todos.list_todos(runtime, principal, todos.TodoQuery(namespace=namespace, status=status, limit=limit))


@router.get("/v1/todos/next")
async def next_todo(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(todos.next_todo)],
    namespace: NamespaceQuery = "default",
) -> TodoNext:
    return await todos.next_todo(runtime, principal, TodoScope(namespace=namespace))


@router.get("/v1/todos/stats")
async def todo_stats(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(todos.todo_stats)],
    namespace: NamespaceQuery = "default",
) -> TodoStats:
    return await todos.todo_stats(runtime, principal, TodoScope(namespace=namespace))


@router.post("/v1/todos/{todo_id}/done")
async def todo_done(
    todo_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(todos.close_todo)]
) -> TodoAnswer:
    return await todos.close_todo(runtime, principal, TodoClose(id=todo_id, status="done"))


@router.post("/v1/todos/{todo_id}/abandon")
async def todo_abandon(
    todo_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(todos.close_todo)]
) -> TodoAnswer:
    return await todos.close_todo(runtime, principal, TodoClose(id=todo_id, status="abandoned"))
