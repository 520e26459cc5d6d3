"""SQL for her own todos."""

from __future__ import annotations

import uuid

from ..domain.todo import TODO_FIELDS, Todo
from ..ports import Database
from .sql import placeholders
from .stored_values import readable

_SELECT = f"SELECT {', '.join(TODO_FIELDS)} FROM todos"


class TodoStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self, namespace: str, text: str, priority: int, due: str | None, note: str | None, source: str, at: str
    ) -> Todo:
        todo = Todo(
            id=str(uuid.uuid4()),
            namespace=namespace,
            text=text,
            priority=priority,
            due=due,
            note=note,
            source=source,
            created_at=at,
            updated_at=at,
        )
        await self.db.run(
            f"INSERT INTO todos ({', '.join(TODO_FIELDS)}) VALUES ({placeholders(len(TODO_FIELDS))})",
            tuple(getattr(todo, c) for c in TODO_FIELDS),
        )
        return todo

    async def get(self, todo_id: str) -> Todo | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (todo_id,))
        return Todo(**row) if row else None

    async def by_status(self, namespace: str, status: str, limit: int) -> list[Todo]:
        """Open ones oldest first (the caller orders them by the next-one rule); closed
        ones the most recently closed first."""
        order = "created_at, id" if status == "open" else "closed_at DESC, id DESC"
        rows = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND status = ? ORDER BY {order} LIMIT ?", (namespace, status, limit)
        )
        return [Todo(**row) for row in readable("todos", rows)]

    async def close(self, todo_id: str, status: str, at: str) -> bool:
        """Done or abandoned, when it is still open; says whether it was."""
        result = await self.db.run(
            "UPDATE todos SET status = ?, closed_at = ?, updated_at = ? WHERE id = ? AND status = 'open'",
            (status, at, at, todo_id),
        )
        return result.changes > 0

    async def counts(self, namespace: str, done_since: str) -> dict[str, int]:
        """How many are open, done and abandoned, and how many were done since ``done_since``."""
        rows = await self.db.all(
            "SELECT status, COUNT(*) AS n, SUM(CASE WHEN status = 'done' AND closed_at >= ? THEN 1 ELSE 0 END) AS recent "
            "FROM todos WHERE namespace = ? GROUP BY status",
            (done_since, namespace),
        )
        counts = {"open": 0, "done": 0, "abandoned": 0, "done_recently": 0}
        for row in rows:
            counts[row["status"]] = int(row["n"])
            counts["done_recently"] += int(row["recent"] or 0)
        return counts
