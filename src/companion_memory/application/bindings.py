"""Namespace bindings: a key bound to namespaces reads and writes there only.

The one place they are checked: every use case's input passes through
:meth:`Confinement.check` (``UseCase.__call__``), after the scope check. The input's
fields say what they name (``fields.InNamespace``: a namespace; ``fields.RowOf``: the id of
a row, which lives in one namespace), and the use case's scope says what it does there:
read (memory:read, export, debug), write (memory:write), or both (chat: it recalls, then
stores the turn). A row shared into a namespace the key may read is read through the
share, as recall there shows it; changing it takes its own namespace. Unbound keys (all
of them by default, the owner's always) pass without a query.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ..domain.scopes import CHAT, DEBUG, EXPORT, MEMORY_READ, MEMORY_WRITE
from ..errors import PermissionDenied
from ..ports import Database
from ..store.places import PlaceStore, Table
from .fields import InNamespace, RowOf
from .principal import Principal

Access = Literal["read", "write"]
# What a use case of each scope does in the namespaces its input names. The owner's
# scope needs no entry (the owner's key is never bound), nor the guide dog's (no memory).
ACCESS: dict[str, tuple[Access, ...]] = {
    MEMORY_READ: ("read",),
    EXPORT: ("read",),
    DEBUG: ("read",),
    MEMORY_WRITE: ("write",),
    CHAT: ("read", "write"),
}
_ROW_NAMES: dict[Table, str] = {
    "memories": "memory",
    "glossary": "glossary entry",
    "people": "person",
    "precious": "precious item",
    "todos": "todo",
    "context_folds": "fold",
    "memory_shares": "share",
    "episodes": "message",
    "messages": "message",
}


@dataclass(frozen=True)
class Confinement:
    """What an input model names: its namespace fields, its row fields, and the namespaces
    its use case acts in whatever the input (``Input.acts_in``: the chat's)."""

    namespaces: tuple[tuple[str, InNamespace], ...]
    rows: tuple[tuple[str, RowOf], ...]
    fixed: tuple[str, ...]

    @classmethod
    def of(cls, model: type[BaseModel]) -> Confinement:
        namespaces: list[tuple[str, InNamespace]] = []
        rows: list[tuple[str, RowOf]] = []
        for name, field in model.model_fields.items():
            mark = next(_marks([*field.metadata, field.annotation]), None)
            if isinstance(mark, InNamespace):
                namespaces.append((name, mark))
            elif isinstance(mark, RowOf):
                rows.append((name, mark))
        return cls(tuple(namespaces), tuple(rows), tuple(getattr(model, "acts_in", ())))

    async def check(self, db: Database, principal: Principal, scope: str, arguments: BaseModel) -> None:
        """PermissionDenied, naming the namespace, for the first one the caller may not
        read or write as the use case would."""
        accesses = ACCESS.get(scope, ())
        if not principal.bound or not accesses:
            return
        places = PlaceStore(db)
        missing = False
        for field, row in self.rows:
            row_id = getattr(arguments, field)
            home = None if row_id is None else await places.home(row.table, row_id)
            if home is None:
                missing = missing or row_id is not None
                continue  # the use case says there is no such row
            for access in accesses:
                if not await _may(principal, access, places, row.table, row_id, home):
                    raise PermissionDenied(
                        f"{_ROW_NAMES[row.table]} {row_id} is in namespace {home!r}, which the "
                        f"{principal.profile} key may not {access} ({principal.binding(access)})",
                        details={"namespace": home},
                    )
        for field, mark in self.namespaces:
            if mark.unless_row and not missing:
                continue
            value = getattr(arguments, field)
            for namespace in value if isinstance(value, list) else [value]:
                for access in accesses:
                    _check(principal, access, namespace)
        for namespace in self.fixed:
            for access in accesses:
                _check(principal, access, namespace)


async def _may(principal: Principal, access: Access, places: PlaceStore, table: Table, row_id: str, home: str) -> bool:
    if access == "write":
        return principal.writable(home)
    if principal.readable(home):
        return True
    return any(principal.readable(namespace) for namespace in await places.seen_in(table, row_id))


def _check(principal: Principal, access: Access, namespace: str | None) -> None:
    if namespace is None:  # "every namespace", as export and the share list take it
        raise PermissionDenied(
            f"the {principal.profile} key is bound to namespaces ({principal.binding(access)}): name one",
            details={"namespace": None},
        )
    if not (principal.writable(namespace) if access == "write" else principal.readable(namespace)):
        raise PermissionDenied(
            f"the {principal.profile} key may not {access} namespace {namespace!r} ({principal.binding(access)})",
            details={"namespace": namespace},
        )


def _marks(hints: list[Any]) -> Iterator[Any]:
    """Every marker in these annotations, however deep (``Namespace | None``, ``list[Namespace]``)."""
    for hint in hints:
        if isinstance(hint, InNamespace | RowOf):
            yield hint
        else:
            yield from _marks(list(typing.get_args(hint)))
