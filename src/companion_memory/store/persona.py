"""SQL for her persona knobs: the changes, from which each knob's value is read."""

from __future__ import annotations

from ..domain.persona import PERSONA_CHANGE_FIELDS, PersonaChange
from ..ports import Database
from .sql import placeholders
from .stored_values import readable

_SELECT = f"SELECT {', '.join(PERSONA_CHANGE_FIELDS)} FROM persona_changes"
_WRITTEN = PERSONA_CHANGE_FIELDS[1:]  # the id is the database's


class PersonaStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def latest(self, namespace: str) -> tuple[dict[str, PersonaChange], dict[str, PersonaChange]]:
        """Per knob, its latest change and its latest tune (knobs never changed are absent)."""
        rows = await self.db.all(
            f"{_SELECT} WHERE id IN ("
            "SELECT MAX(id) FROM persona_changes WHERE namespace = ? GROUP BY knob "
            "UNION SELECT MAX(id) FROM persona_changes WHERE namespace = ? AND kind = 'tune' GROUP BY knob"
            ") ORDER BY id",
            (namespace, namespace),
        )
        changes = [PersonaChange(**row) for row in readable("persona_changes", rows)]
        return {c.knob: c for c in changes}, {c.knob: c for c in changes if c.kind == "tune"}

    async def append(self, change: PersonaChange, after: int) -> bool:
        """``change`` as the knob's next, written only while its latest change is still
        ``after`` (0: none), so that of two tunes read at the same moment one is written;
        says whether it was."""
        values = tuple(getattr(change, c) for c in _WRITTEN)
        written = await self.db.run(
            f"INSERT INTO persona_changes ({', '.join(_WRITTEN)}) SELECT {placeholders(len(_WRITTEN))} "
            "WHERE COALESCE((SELECT MAX(id) FROM persona_changes WHERE namespace = ? AND knob = ?), 0) = ?",
            (*values, change.namespace, change.knob, after),
        )
        return written.changes > 0

    async def history(self, namespace: str, knob: str | None, limit: int) -> list[PersonaChange]:
        """The changes, the newest first; of one knob, or of all."""
        where, params = "namespace = ?", [namespace]
        if knob:
            where += " AND knob = ?"
            params.append(knob)
        rows = await self.db.all(f"{_SELECT} WHERE {where} ORDER BY id DESC LIMIT ?", (*params, limit))
        return [PersonaChange(**row) for row in readable("persona_changes", rows)]
