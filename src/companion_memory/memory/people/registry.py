"""The registry: the people of a namespace, the memories about each, the mentions that
make them familiar, and the merge that says two people are one."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...clock import iso, parse_iso
from ...domain.memory import Memory
from ...domain.message import Message
from ...domain.person import Person, mentioned
from ...domain.search_text import mentions, query_terms
from ...errors import Conflict, InvalidInput, NotFound
from ...ports import Clock, Database, Statement
from ...store.memories import MemoryStore
from ...store.people import PersonStore
from ..config import MemoryConfig
from .names import called, clean_names, name_key, named_in

# Memories linked to one name per pass, and shown with a person.
LINKED_PER_NAME = 200
SHOWN_MEMORIES = 20
MAX_ALIASES = 20


class People:
    def __init__(self, db: Database, clock: Clock, config: MemoryConfig) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.store = PersonStore(db)
        self.memories = MemoryStore(db)

    def _now(self) -> str:
        return iso(self.clock.now())

    def shown(self, person: Person) -> Person:
        """A person as answered: familiarity decayed to now."""
        decayed = person.familiarity_now(self.clock.now(), self.config.people_familiarity_half_life_days)
        return person.replace(familiarity=round(decayed, 4))

    async def most_familiar(self, namespace: str, at: datetime, limit: int) -> list[Person]:
        """The ``limit`` most familiar people, familiarity decayed to ``at`` to two places."""
        half_life = self.config.people_familiarity_half_life_days
        people = [
            p.replace(familiarity=round(p.familiarity_now(at, half_life), 2))
            for p in await self.store.active(namespace)
        ]
        return sorted(people, key=lambda p: -p.familiarity)[:limit]

    async def person(self, person_id: str) -> Person:
        person = await self.store.get(person_id)
        if person is None:
            raise NotFound(f"person {person_id} not found")
        return person

    async def live(self, person_id: str) -> Person:
        """A person who was not merged into another."""
        person = await self.person(person_id)
        if person.status != "active":
            raise Conflict(
                f"person {person_id} was merged into {person.merged_into}",
                code="person_merged",
                details={"merged_into": person.merged_into},
            )
        return person

    async def upsert(
        self,
        namespace: str,
        name: str,
        *,
        person_id: str | None = None,
        aliases: Sequence[str] | None = None,
        relation: str | None = None,
        notes: str | None = None,
        source: str = "api",
    ) -> tuple[Person, bool]:
        """Create a person, or change one: by id, else the person already called ``name``.
        ``aliases`` given replace theirs (their name is never an alias); ``relation`` and
        ``notes`` given replace theirs. Answers the person and whether they are new."""
        name = " ".join(name.split())
        if not name:
            raise InvalidInput("a person needs a name", code="invalid_name")
        people = await self.store.active(namespace)
        if person_id is not None:
            current: Person | None = await self.live(person_id)
            if current and current.namespace != namespace:
                raise NotFound(f"person {person_id} not found in namespace {namespace!r}")
        else:
            current = called(people, name)
        given = list(aliases if aliases is not None else (current.aliases if current else []))
        # Found by one of their names, they keep their own: the name asked by is one of them.
        names = clean_names([current.name, *given, name] if current and person_id is None else [name, *given])
        if len(names) > MAX_ALIASES + 1:
            raise InvalidInput(f"at most {MAX_ALIASES} aliases", code="too_many_aliases")
        self._unclaimed(people, names, current.id if current else None)
        now = self._now()
        if current is None:
            person = Person(
                id=str(uuid.uuid4()),
                namespace=namespace,
                name=names[0],
                aliases=names[1:],
                relation=relation or "",
                notes=notes or "",
                familiarity_at=now,
                source=source,
                created_at=now,
                updated_at=now,
            )
            await self.db.batch([PersonStore.insert(person), *await self._links(person, now)])
            return person, True
        changes: dict[str, Any] = {"name": names[0], "aliases": names[1:], "updated_at": now}
        if relation is not None:
            changes["relation"] = relation
        if notes is not None:
            changes["notes"] = notes
        person = current.replace(**changes)
        await self.db.batch([PersonStore.update(person, changes), *await self._links(person, now)])
        return person, False

    @staticmethod
    def _unclaimed(people: Iterable[Person], names: Sequence[str], own_id: str | None) -> None:
        """No other person may already be called by one of ``names``: two people with one
        name cannot be told apart (say they are one with a merge)."""
        keys = {name_key(n): n for n in names}
        for other in people:
            if other.id == own_id:
                continue
            taken = [keys[k] for k in map(name_key, other.names) if k in keys]
            if taken:
                raise Conflict(
                    f"{taken[0]!r} already names person {other.id} ({other.name}); propose a merge if they are one",
                    code="name_taken",
                    details={"person_id": other.id},
                )

    async def _links(self, person: Person, at: str) -> list[Statement]:
        """Link the live memories of their namespace that name them."""
        found: dict[str, None] = {}
        for name in person.names:
            terms = query_terms(name)
            if not terms or len(name) < 2:
                continue
            hits = await self.memories.lexical_search(person.namespace, terms, limit=LINKED_PER_NAME)
            for memory in await self.memories.get_many([id_ for id_, _ in hits]):
                if mentions(name_key(memory.content), name_key(name)):
                    found.setdefault(memory.id, None)
        return PersonStore.link(person.id, list(found), at)

    async def relink(self) -> dict[str, int]:
        """Link every person's memories again (the nightly job: memories written since, by
        the review queue or by hand, that name someone)."""
        now, linked = self._now(), 0
        for namespace in await self.store.namespaces():
            for person in await self.store.active(namespace):
                statements = await self._links(person, now)
                if statements:
                    linked += sum(r.changes for r in await self.db.batch(statements))
        return {"linked": linked}

    async def get(self, person_id: str) -> tuple[Person, list[Memory]]:
        """A person (merged ones too, pointing at the survivor) and the live memories about
        them, the latest first."""
        person = await self.person(person_id)
        ids = await self.store.memory_ids(person.id, SHOWN_MEMORIES * 2)
        live = [m for m in await self.memories.get_many(ids) if m.status == "active"]
        live.sort(key=lambda m: m.updated_at, reverse=True)
        return self.shown(person), live[:SHOWN_MEMORIES]

    async def listed(self, namespace: str, query: str | None, limit: int) -> list[tuple[Person, int]]:
        """Active people, the most familiar first, each with how many live memories are
        about them; with a query, those it names (or whose name starts with it)."""
        people = await self.store.active(namespace)
        if query:
            key, named = name_key(query), {p.id for p in named_in(people, query)}
            people = [p for p in people if p.id in named or any(name_key(n).startswith(key) for n in p.names)]
        shown = sorted((self.shown(p) for p in people), key=lambda p: (-p.familiarity, p.name))[:limit]
        counts = await self.store.memory_counts([p.id for p in shown])
        return [(p, counts.get(p.id, 0)) for p in shown]

    async def mention_statements(self, namespace: str, messages: Sequence[Message]) -> list[Statement]:
        """Each message naming a person is a mention of them: their familiarity grows,
        decayed first to the last message that names them."""
        people = await self.store.active(namespace)
        if not people:
            return []
        said_at: dict[str, list[str]] = {}
        for message in messages:
            for person in named_in(people, message.content):
                said_at.setdefault(person.id, []).append(message.created_at)
        statements = []
        half_life = self.config.people_familiarity_half_life_days
        for person in people:
            said = said_at.get(person.id, [])
            if not said:
                continue
            last = max(said)
            at = max(last, person.familiarity_at)
            familiarity = mentioned(person.familiarity_now(parse_iso(at), half_life), len(said))
            changes = {
                "familiarity": min(1.0, familiarity),
                "familiarity_at": at,
                "mentions": int(person.mentions) + len(said),
                "last_mentioned_at": max(last, person.last_mentioned_at or ""),
            }
            statements.append(PersonStore.update(person.replace(**changes), changes))
        return statements

    async def merge(self, survivor_id: str, other_id: str) -> Person:
        """``other_id`` becomes part of ``survivor_id``: their name and aliases become
        the survivor's aliases, their relation fills the survivor's when it is empty, the notes
        join, familiarities combine as independent mentions, the mention counts add up,
        and their memories are re-pointed (and those naming any of the names linked). Their row
        stays, merged into the survivor."""
        survivor, other = await self.live(survivor_id), await self.live(other_id)
        if survivor.namespace != other.namespace:
            raise Conflict("people of different namespaces cannot be merged", code="other_namespace")
        now_at = self.clock.now()
        now = iso(now_at)
        half_life = self.config.people_familiarity_half_life_days
        combined = 1 - (1 - survivor.familiarity_now(now_at, half_life)) * (
            1 - other.familiarity_now(now_at, half_life)
        )
        names = clean_names([*survivor.names, *other.names])
        changes = {
            "aliases": names[1:],
            "relation": survivor.relation or other.relation,
            "notes": "\n".join(n for n in (survivor.notes, other.notes) if n),
            "familiarity": min(1.0, combined),
            "familiarity_at": now,
            "mentions": int(survivor.mentions) + int(other.mentions),
            "last_mentioned_at": max(survivor.last_mentioned_at or "", other.last_mentioned_at or "") or None,
            "updated_at": now,
        }
        merged = survivor.replace(**changes)
        await self.db.batch(
            [
                PersonStore.update(merged, changes),
                *PersonStore.repoint(other_id, survivor_id, now),
                *await self._links(merged, now),
            ]
        )
        return merged
