"""SQL for people: the registry, which memories are about whom, and the proposals that
wait for the owner."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..domain.person import PERSON_FIELDS, PROPOSAL_FIELDS, Person, PersonProposal
from ..ports import Database, Statement
from .sql import chunks, from_json, placeholders, to_json
from .stored_values import readable

_PEOPLE = f"SELECT {', '.join(PERSON_FIELDS)} FROM people"
_PROPOSALS = f"SELECT {', '.join(PROPOSAL_FIELDS)} FROM person_proposals"
# A namespace's registry is read whole (to resolve names); more people than this is no
# circle of acquaintance any more.
REGISTRY_LIMIT = 1000


def _person(row: dict[str, Any]) -> Person:
    return Person(**{**row, "aliases": from_json(row["aliases"], [])})


def _proposal(row: dict[str, Any]) -> PersonProposal:
    return PersonProposal(
        **{**row, "aliases": from_json(row["aliases"], []), "evidence": from_json(row["evidence"], [])}
    )


def _stored(name: str, value: Any) -> Any:
    return to_json(value, what=name) if name in ("aliases", "evidence") else value


class PersonStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(person: Person) -> Statement:
        return Statement(
            f"INSERT INTO people ({', '.join(PERSON_FIELDS)}) VALUES ({placeholders(len(PERSON_FIELDS))})",
            tuple(_stored(c, getattr(person, c)) for c in PERSON_FIELDS),
        )

    @staticmethod
    def update(person: Person, fields: Iterable[str]) -> Statement:
        """Write these fields of ``person`` only: the others may have changed since it
        was read (a mention counted by the dream while the owner renames the person)."""
        names = [f for f in PERSON_FIELDS if f in set(fields)]
        return Statement(
            f"UPDATE people SET {', '.join(f'{f} = ?' for f in names)} WHERE id = ?",
            (*(_stored(f, getattr(person, f)) for f in names), person.id),
        )

    async def get(self, person_id: str) -> Person | None:
        row = await self.db.first(f"{_PEOPLE} WHERE id = ?", (person_id,))
        return _person(row) if row else None

    async def active(self, namespace: str, limit: int = REGISTRY_LIMIT) -> list[Person]:
        rows = await self.db.all(
            f"{_PEOPLE} WHERE namespace = ? AND status = 'active' ORDER BY name, id LIMIT ?", (namespace, limit)
        )
        return [_person(r) for r in readable("people", rows)]

    async def namespaces(self) -> list[str]:
        rows = await self.db.all("SELECT DISTINCT namespace FROM people WHERE status = 'active' ORDER BY namespace")
        return [r["namespace"] for r in rows]

    # -- memories about a person ---------------------------------------------

    @staticmethod
    def link(person_id: str, memory_ids: Sequence[str], at: str) -> list[Statement]:
        return [
            Statement(
                "INSERT OR IGNORE INTO person_memories (person_id, memory_id, created_at) VALUES (?, ?, ?)",
                (person_id, memory_id, at),
            )
            for memory_id in memory_ids
        ]

    async def memory_ids(self, person_id: str, limit: int) -> list[str]:
        rows = await self.db.all(
            "SELECT memory_id FROM person_memories WHERE person_id = ? ORDER BY created_at DESC, memory_id LIMIT ?",
            (person_id, limit),
        )
        return [r["memory_id"] for r in rows]

    async def memory_counts(self, person_ids: Sequence[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for part in chunks(person_ids):
            rows = await self.db.all(
                "SELECT pm.person_id AS person_id, COUNT(*) AS n FROM person_memories pm "
                "JOIN memories m ON m.id = pm.memory_id AND m.status = 'active' "
                f"WHERE pm.person_id IN ({placeholders(len(part))}) GROUP BY pm.person_id",
                tuple(part),
            )
            counts.update({r["person_id"]: int(r["n"]) for r in rows})
        return counts

    async def links(self, person_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(person_id, memory_id) of these people's memories."""
        found: list[tuple[str, str]] = []
        for part in chunks(person_ids):
            rows = await self.db.all(
                f"SELECT person_id, memory_id FROM person_memories WHERE person_id IN ({placeholders(len(part))}) "
                "ORDER BY person_id, memory_id",
                tuple(part),
            )
            found += [(r["person_id"], r["memory_id"]) for r in rows]
        return found

    @staticmethod
    def repoint(loser_id: str, survivor_id: str, at: str) -> list[Statement]:
        """The loser's memories become the survivor's (a memory about both stays once), and
        the loser's row points at the survivor."""
        return [
            Statement(
                "INSERT OR IGNORE INTO person_memories (person_id, memory_id, created_at) "
                "SELECT ?, memory_id, created_at FROM person_memories WHERE person_id = ?",
                (survivor_id, loser_id),
            ),
            Statement("DELETE FROM person_memories WHERE person_id = ?", (loser_id,)),
            Statement(
                "UPDATE people SET status = 'merged', merged_into = ?, updated_at = ? WHERE id = ?",
                (survivor_id, at, loser_id),
            ),
            # Anyone merged into the loser earlier now points at the survivor too.
            Statement("UPDATE people SET merged_into = ? WHERE merged_into = ?", (survivor_id, loser_id)),
        ]

    # -- proposals ------------------------------------------------------------

    @staticmethod
    def propose(proposal: PersonProposal) -> Statement:
        """A pending proposal; the same one (same key) waiting already makes this a no-op."""
        return Statement(
            f"INSERT OR IGNORE INTO person_proposals ({', '.join(PROPOSAL_FIELDS)}) "
            f"VALUES ({placeholders(len(PROPOSAL_FIELDS))})",
            tuple(_stored(c, getattr(proposal, c)) for c in PROPOSAL_FIELDS),
        )

    async def proposal(self, proposal_id: str) -> PersonProposal | None:
        row = await self.db.first(f"{_PROPOSALS} WHERE id = ?", (proposal_id,))
        return _proposal(row) if row else None

    async def pending_key(self, namespace: str, key: str) -> PersonProposal | None:
        row = await self.db.first(
            f"{_PROPOSALS} WHERE namespace = ? AND key = ? AND status = 'pending'", (namespace, key)
        )
        return _proposal(row) if row else None

    async def proposals(self, namespace: str, status: str, limit: int) -> list[PersonProposal]:
        rows = await self.db.all(
            f"{_PROPOSALS} WHERE namespace = ? AND status = ? ORDER BY created_at DESC, id DESC LIMIT ?",
            (namespace, status, limit),
        )
        return [_proposal(r) for r in rows]

    async def claim(self, proposal_id: str, status: str, at: str) -> bool:
        """Decide a pending proposal; False when it was decided already."""
        result = await self.db.run(
            "UPDATE person_proposals SET status = ?, reviewed_at = ? WHERE id = ? AND status = 'pending'",
            (status, at, proposal_id),
        )
        return result.changes == 1

    async def release(self, proposal_id: str) -> None:
        """Back to pending after an approval that could not be applied."""
        await self.db.run(
            "UPDATE person_proposals SET status = 'pending', reviewed_at = NULL WHERE id = ?", (proposal_id,)
        )
