"""People in the owner's life: who they are to her, what they are called, how familiar.

A person has a name and aliases ("Ana", "my sister", "安娜"): any of them names her, in
recall as in the registry, so two people never share a name (the second is refused, and
a merge is the way to say they are one). Familiarity is a number in 0..1: each mention
(a message of the day naming her, counted by the dream) closes MENTION_STEP of the gap to
1, and it halves every PEOPLE_FAMILIARITY_HALF_LIFE_DAYS without one, so it is always
read decayed to now.

The dream proposes people and merges (from the model's answer, or offline from explicit
words: "my sister Ana", "我姐姐安娜"); the owner approves or rejects them. Approving a
merge folds the other person into the survivor: her names become aliases, her memories
are re-pointed, the familiarities combine, and her row points at the survivor.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..clock import iso, parse_iso, stored_moment
from ..domain.search_text import mentions, query_terms
from ..errors import Conflict, InvalidInput, NotFound, ServiceError
from ..ports import Clock, Database, Statement
from ..store.memories import MemoryStore
from ..store.people import PersonStore
from .config import MemoryConfig

# Each mention closes this share of the gap between familiarity and 1.
MENTION_STEP = 0.1
# Memories linked to one name per pass, and shown with a person.
LINKED_PER_NAME = 200
SHOWN_MEMORIES = 20
PROPOSAL_STATUSES = ("pending", "approved", "rejected")
# The star map shows at most this many people (a circle of acquaintance is small), each
# with a line of this weight to every memory about her.
STAR_MAP_PEOPLE = 200
ABOUT_WEIGHT = 0.5
MAX_ALIASES = 20


def name_key(name: str) -> str:
    """How two names are compared: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def names_of(person: Mapping[str, Any]) -> list[str]:
    return [person["name"], *person["aliases"]]


def familiarity_at(person: Mapping[str, Any], now: datetime, half_life_days: float) -> float:
    """The stored familiarity decayed from when it was set to ``now``; not decayed when
    that time cannot be read (a row stored before times were checked, reached by its id)."""
    since = stored_moment(person["familiarity_at"]) or now
    days = max(0.0, (now - since).total_seconds() / 86400)
    return float(person["familiarity"]) * 0.5 ** (days / half_life_days)


def mentioned(familiarity: float, times: int) -> float:
    """Familiarity after ``times`` more mentions."""
    return 1 - (1 - familiarity) * (1 - MENTION_STEP) ** times


@functools.lru_cache(maxsize=64)
def names_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    """One expression finding any of these names (as ``name_key`` gives them, the longest
    first) in folded text, as ``mentions`` would: a Latin name as a word, CJK anywhere.
    Cached: recall asks with the same registry turn after turn."""
    parts = [
        rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])" if re.search(r"[a-z0-9]", key) else re.escape(key)
        for key in sorted(keys, key=lambda k: (-len(k), k))
    ]
    return re.compile("|".join(parts) or "(?!)")


def _found_keys(people: Sequence[Mapping[str, Any]], text: str) -> set[str]:
    keys = tuple(sorted({k for p in people for n in names_of(p) if len(k := name_key(n)) >= 2}))
    return {m.group(0) for m in names_pattern(keys).finditer(name_key(text))} if keys else set()


def named_in(people: Sequence[Mapping[str, Any]], text: str) -> list[Mapping[str, Any]]:
    """The people one of whose names ``text`` holds (a name shorter than 2 characters
    names no one: "A" is everywhere)."""
    found = _found_keys(people, text)
    return [p for p in people if any(name_key(n) in found for n in names_of(p))]


def other_names(people: Sequence[Mapping[str, Any]], text: str) -> list[str]:
    """The names of the people ``text`` names that it does not hold itself: what recall
    adds to a query so that "my sister" finds what was said of "Ana" and "安娜"."""
    said = _found_keys(people, text)
    found: dict[str, str] = {}
    for person in (p for p in people if any(name_key(n) in said for n in names_of(p))):
        for name in names_of(person):
            if name_key(name) not in said:
                found.setdefault(name_key(name), name)
    return list(found.values())


def names_any(text: str, keys: Sequence[str]) -> bool:
    """Whether ``text`` names one of these names (``name_key``s)."""
    usable = tuple(sorted({k for k in keys if len(k) >= 2}))
    return bool(usable) and names_pattern(usable).search(name_key(text)) is not None


def _clean(names: Iterable[str]) -> list[str]:
    kept: dict[str, str] = {}
    for name in names:
        name = " ".join(name.split())
        if name:
            kept.setdefault(name_key(name), name)
    return list(kept.values())


@dataclass(frozen=True)
class PersonFound:
    """A person the dream read in the messages: her name, the names she was called by,
    what she is to the owner, and the words that say so (verbatim)."""

    name: str
    evidence: list[str]
    aliases: list[str] = field(default_factory=list)
    relation: str = ""


@dataclass(frozen=True)
class SamePerson:
    """Two names the messages say belong to one person ("Ana is my sister")."""

    names: tuple[str, str]
    evidence: list[str]


class People:
    def __init__(self, db: Database, clock: Clock, config: MemoryConfig) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.store = PersonStore(db)
        self.memories = MemoryStore(db)

    def _now(self) -> str:
        return iso(self.clock.now())

    def shown(self, person: Mapping[str, Any]) -> dict[str, Any]:
        """A person as answered: familiarity decayed to now."""
        now = self.clock.now()
        return {
            **person,
            "familiarity": round(familiarity_at(person, now, self.config.people_familiarity_half_life_days), 4),
        }

    async def _person(self, person_id: str) -> dict[str, Any]:
        person = await self.store.get(person_id)
        if person is None:
            raise NotFound(f"person {person_id} not found")
        return person

    async def _live(self, person_id: str) -> dict[str, Any]:
        person = await self._person(person_id)
        if person["status"] != "active":
            raise Conflict(
                f"person {person_id} was merged into {person['merged_into']}",
                code="person_merged",
                details={"merged_into": person["merged_into"]},
            )
        return person

    # -- the registry ------------------------------------------------------------

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
    ) -> tuple[dict[str, Any], bool]:
        """Create a person, or change one: by id, else the person already called ``name``.
        ``aliases`` given replace hers (her name is never an alias); ``relation`` and
        ``notes`` given replace hers. Answers the person and whether she is new."""
        name = " ".join(name.split())
        if not name:
            raise InvalidInput("a person needs a name", code="invalid_name")
        people = await self.store.active(namespace)
        if person_id is not None:
            current: dict[str, Any] | None = await self._live(person_id)
            if current and current["namespace"] != namespace:
                raise NotFound(f"person {person_id} not found in namespace {namespace!r}")
        else:
            current = next((p for p in people if name_key(name) in map(name_key, names_of(p))), None)
        given = list(aliases if aliases is not None else (current["aliases"] if current else []))
        # Found by one of her names, she keeps her own: the name asked by is one of them.
        names = _clean([current["name"], *given, name] if current and person_id is None else [name, *given])
        if len(names) > MAX_ALIASES + 1:
            raise InvalidInput(f"at most {MAX_ALIASES} aliases", code="too_many_aliases")
        self._unclaimed(people, names, current["id"] if current else None)
        now = self._now()
        if current is None:
            person = {
                "id": str(uuid.uuid4()),
                "namespace": namespace,
                "name": names[0],
                "aliases": names[1:],
                "relation": relation or "",
                "notes": notes or "",
                "familiarity": 0.0,
                "familiarity_at": now,
                "mentions": 0,
                "last_mentioned_at": None,
                "status": "active",
                "merged_into": None,
                "source": source,
                "created_at": now,
                "updated_at": now,
            }
            await self.db.batch([PersonStore.insert(person), *await self._links(person, now)])
            return person, True
        changes: dict[str, Any] = {"name": names[0], "aliases": names[1:], "updated_at": now}
        if relation is not None:
            changes["relation"] = relation
        if notes is not None:
            changes["notes"] = notes
        person = {**current, **changes}
        await self.db.batch([PersonStore.update(current["id"], changes), *await self._links(person, now)])
        return person, False

    @staticmethod
    def _unclaimed(people: Iterable[Mapping[str, Any]], names: Sequence[str], own_id: str | None) -> None:
        """No other person may already be called by one of ``names``: two people with one
        name cannot be told apart (say they are one with a merge)."""
        keys = {name_key(n): n for n in names}
        for other in people:
            if other["id"] == own_id:
                continue
            taken = [keys[k] for k in map(name_key, names_of(other)) if k in keys]
            if taken:
                raise Conflict(
                    f"{taken[0]!r} already names person {other['id']} ({other['name']}); propose a merge if they are one",
                    code="name_taken",
                    details={"person_id": other["id"]},
                )

    async def _links(self, person: Mapping[str, Any], at: str) -> list[Statement]:
        """Link the live memories of her namespace that name her."""
        found: dict[str, None] = {}
        for name in names_of(person):
            terms = query_terms(name)
            if not terms or len(name) < 2:
                continue
            hits = await self.memories.lexical_search(person["namespace"], terms, limit=LINKED_PER_NAME)
            for memory in await self.memories.get_many([id_ for id_, _ in hits]):
                if mentions(name_key(memory.content), name_key(name)):
                    found.setdefault(memory.id, None)
        return PersonStore.link(person["id"], list(found), at)

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

    async def get(self, person_id: str) -> dict[str, Any]:
        """A person (merged ones too, pointing at the survivor) and the memories about her."""
        person = await self._person(person_id)
        ids = await self.store.memory_ids(person["id"], SHOWN_MEMORIES * 2)
        live = [m for m in await self.memories.get_many(ids) if m.status == "active"]
        live.sort(key=lambda m: m.updated_at, reverse=True)
        return {**self.shown(person), "memories": [m.as_dict() for m in live[:SHOWN_MEMORIES]]}

    async def listed(self, namespace: str, query: str | None, limit: int) -> list[dict[str, Any]]:
        """Active people, the most familiar first; with a query, those it names (or whose
        name starts with it)."""
        people = await self.store.active(namespace)
        if query:
            key, named = name_key(query), {p["id"] for p in named_in(people, query)}
            people = [p for p in people if p["id"] in named or any(name_key(n).startswith(key) for n in names_of(p))]
        shown = sorted((self.shown(p) for p in people), key=lambda p: (-p["familiarity"], p["name"]))[:limit]
        counts = await self.store.memory_counts([p["id"] for p in shown])
        return [{**p, "memory_count": counts.get(p["id"], 0)} for p in shown]

    # -- mentions ---------------------------------------------------------------

    async def mention_statements(self, namespace: str, messages: Sequence[Mapping[str, Any]]) -> list[Statement]:
        """Each message naming a person is a mention of her: her familiarity grows, decayed
        first to the last message that names her."""
        people = await self.store.active(namespace)
        if not people:
            return []
        said_at: dict[str, list[str]] = {}
        for message in messages:
            for person in named_in(people, message["content"]):
                said_at.setdefault(person["id"], []).append(message["created_at"])
        statements = []
        half_life = self.config.people_familiarity_half_life_days
        for person in people:
            said = said_at.get(person["id"], [])
            if not said:
                continue
            last = max(said)
            at = max(last, person["familiarity_at"])
            familiarity = mentioned(familiarity_at(person, parse_iso(at), half_life), len(said))
            statements.append(
                PersonStore.update(
                    person["id"],
                    {
                        "familiarity": min(1.0, familiarity),
                        "familiarity_at": at,
                        "mentions": int(person["mentions"]) + len(said),
                        "last_mentioned_at": max(last, person["last_mentioned_at"] or ""),
                    },
                )
            )
        return statements

    # -- proposals --------------------------------------------------------------

    async def proposals_for(
        self,
        namespace: str,
        found: Sequence[PersonFound],
        same: Sequence[SamePerson],
        source: str,
    ) -> list[dict[str, Any]]:
        """What the dream's findings ask of the owner: a new person when none of her
        names is known; her new names when one is; a merge when her names belong to two
        people. Nothing for what the registry already says."""
        people = await self.store.active(namespace)
        proposals: list[dict[str, Any]] = []

        def who(name: str) -> Mapping[str, Any] | None:
            return next((p for p in people if name_key(name) in map(name_key, names_of(p))), None)

        for person in found:
            names = _clean([person.name, *person.aliases])
            known = list({p["id"]: p for n in names if (p := who(n))}.values())
            if len(known) >= 2:
                proposals.append(self._merge_proposal(namespace, known[0], known[1], person.evidence, source))
            elif known:
                new = [n for n in names if who(n) is None]
                if new or (person.relation and not known[0]["relation"]):
                    proposals.append(
                        self._person_proposal(
                            namespace, known[0]["name"], new, person.relation, person.evidence, source, known[0]["id"]
                        )
                    )
            else:
                proposals.append(
                    self._person_proposal(namespace, names[0], names[1:], person.relation, person.evidence, source)
                )
        for pair in same:
            first, second = who(pair.names[0]), who(pair.names[1])
            if first and second and first["id"] != second["id"]:
                proposals.append(self._merge_proposal(namespace, first, second, pair.evidence, source))
            elif (known_person := first or second) is not None and not (first and second):
                new_name = pair.names[1] if first else pair.names[0]
                proposals.append(
                    self._person_proposal(
                        namespace, known_person["name"], [new_name], "", pair.evidence, source, known_person["id"]
                    )
                )
        unique: dict[str, dict[str, Any]] = {}
        for proposal in proposals:
            unique.setdefault(proposal["key"], proposal)
        return list(unique.values())

    def _person_proposal(
        self,
        namespace: str,
        name: str,
        aliases: Sequence[str],
        relation: str,
        evidence: Sequence[str],
        source: str,
        person_id: str | None = None,
    ) -> dict[str, Any]:
        key = f"person:{person_id or ''}:{'|'.join(sorted(name_key(n) for n in [name, *aliases]))}"
        what = f"{name} is {relation}" if relation else name
        reason = f"more names for {name}: {', '.join(aliases)}" if person_id else f"a new person: {what}"
        return self._proposal(
            namespace, "person", key, name, aliases, relation, person_id, None, evidence, reason, source
        )

    def _merge_proposal(
        self,
        namespace: str,
        survivor: Mapping[str, Any],
        other: Mapping[str, Any],
        evidence: Sequence[str],
        source: str,
        reason: str = "",
    ) -> dict[str, Any]:
        key = f"merge:{'|'.join(sorted((survivor['id'], other['id'])))}"
        reason = reason or f"{other['name']!r} and {survivor['name']!r} are one person"
        return self._proposal(
            namespace, "merge", key, survivor["name"], [], "", survivor["id"], other["id"], evidence, reason, source
        )

    def _proposal(
        self,
        namespace: str,
        kind: str,
        key: str,
        name: str,
        aliases: Sequence[str],
        relation: str,
        person_id: str | None,
        other_id: str | None,
        evidence: Sequence[str],
        reason: str,
        source: str,
    ) -> dict[str, Any]:
        return {
            "id": str(uuid.uuid4()),
            "namespace": namespace,
            "kind": kind,
            "key": key,
            "name": name,
            "aliases": list(aliases),
            "relation": relation,
            "person_id": person_id,
            "other_id": other_id,
            "evidence": list(evidence),
            "reason": reason,
            "status": "pending",
            "source": source,
            "created_at": self._now(),
            "reviewed_at": None,
        }

    async def propose_merge(
        self, namespace: str, survivor_id: str, other_id: str, reason: str, source: str
    ) -> dict[str, Any]:
        """Ask the owner whether two people are one (``survivor_id`` keeps her id). The
        same question waiting already is answered as it stands."""
        if survivor_id == other_id:
            raise InvalidInput("a person cannot be merged into herself", code="same_person")
        survivor, other = await self._live(survivor_id), await self._live(other_id)
        if survivor["namespace"] != namespace or other["namespace"] != namespace:
            raise NotFound(f"both people must be in namespace {namespace!r}")
        proposal = self._merge_proposal(namespace, survivor, other, [], source, reason)
        await self.db.batch([PersonStore.propose(proposal)])
        stored = await self.store.pending_key(namespace, proposal["key"])
        return stored or proposal

    async def approve(self, proposal_id: str) -> dict[str, Any]:
        """Apply a proposal: the person created or given her new names, or the merge done."""
        proposal = await self._claim(proposal_id, "approved")
        try:
            if proposal["kind"] == "merge":
                person = await self.merge(proposal["person_id"], proposal["other_id"])
            else:
                person = await self._apply_person(proposal)
        except ServiceError:
            await self.store.release(proposal_id)
            raise
        return {"proposal": await self.store.proposal(proposal_id), "person": self.shown(person)}

    async def reject(self, proposal_id: str) -> dict[str, Any]:
        """Set a proposal aside: both people stay as they are."""
        await self._claim(proposal_id, "rejected")
        return {"proposal": await self.store.proposal(proposal_id), "person": None}

    async def _claim(self, proposal_id: str, status: str) -> dict[str, Any]:
        proposal = await self.store.proposal(proposal_id)
        if proposal is None:
            raise NotFound(f"proposal {proposal_id} not found")
        if not await self.store.claim(proposal_id, status, self._now()):
            current = await self.store.proposal(proposal_id) or proposal
            raise Conflict(f"proposal {proposal_id} is already {current['status']}", code="proposal_not_pending")
        return proposal

    async def _apply_person(self, proposal: Mapping[str, Any]) -> dict[str, Any]:
        if proposal["person_id"] is None:
            person, _ = await self.upsert(
                proposal["namespace"],
                proposal["name"],
                aliases=proposal["aliases"],
                relation=proposal["relation"] or None,
                source=proposal["source"],
            )
            return person
        current = await self._live(proposal["person_id"])
        person, _ = await self.upsert(
            current["namespace"],
            current["name"],
            person_id=current["id"],
            aliases=[*current["aliases"], *proposal["aliases"]],
            relation=None if current["relation"] or not proposal["relation"] else proposal["relation"],
        )
        return person

    async def merge(self, survivor_id: str, other_id: str) -> dict[str, Any]:
        """``other_id`` becomes part of ``survivor_id``: her name and aliases become the
        survivor's aliases, her relation fills the survivor's when it is empty, the notes
        join, familiarities combine as independent mentions, the mention counts add up,
        and her memories are re-pointed (and those naming any of the names linked). Her row
        stays, merged into the survivor."""
        survivor, other = await self._live(survivor_id), await self._live(other_id)
        if survivor["namespace"] != other["namespace"]:
            raise Conflict("people of different namespaces cannot be merged", code="other_namespace")
        now_at = self.clock.now()
        now = iso(now_at)
        half_life = self.config.people_familiarity_half_life_days
        combined = 1 - (1 - familiarity_at(survivor, now_at, half_life)) * (
            1 - familiarity_at(other, now_at, half_life)
        )
        names = _clean([survivor["name"], *survivor["aliases"], *names_of(other)])
        notes = "\n".join(n for n in (survivor["notes"], other["notes"]) if n)
        changes = {
            "aliases": names[1:],
            "relation": survivor["relation"] or other["relation"],
            "notes": notes,
            "familiarity": min(1.0, combined),
            "familiarity_at": now,
            "mentions": int(survivor["mentions"]) + int(other["mentions"]),
            "last_mentioned_at": max(survivor["last_mentioned_at"] or "", other["last_mentioned_at"] or "") or None,
            "updated_at": now,
        }
        merged = {**survivor, **changes}
        await self.db.batch(
            [
                PersonStore.update(survivor_id, changes),
                *PersonStore.repoint(other_id, survivor_id, now),
                *await self._links(merged, now),
            ]
        )
        return merged

    async def constellation(self, namespace: str, memory_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The people as stars of the star map (kind ``person``, as bright as they are
        familiar) and an ``about`` line to each of the shown memories about them."""
        people = [self.shown(p) for p in await self.store.active(namespace, STAR_MAP_PEOPLE)]
        shown = set(memory_ids)
        nodes = [
            {
                "id": p["id"],
                "kind": "person",
                "type": "person",
                "content": f"{p['name']} ({p['relation']})" if p["relation"] else p["name"],
                "fact_key": None,
                "importance": p["familiarity"],
                "confidence": 1.0,
                "pinned": False,
                "tags": p["aliases"],
                "recall_count": p["mentions"],
                "updated_at": p["updated_at"],
            }
            for p in people
        ]
        edges = [
            {
                "id": f"about:{link['person_id']}:{link['memory_id']}",
                "source_id": link["person_id"],
                "target_id": link["memory_id"],
                "relation": "about",
                "weight": ABOUT_WEIGHT,
            }
            for link in await self.store.links([p["id"] for p in people])
            if link["memory_id"] in shown
        ]
        return {"nodes": nodes, "edges": edges}

    async def proposals(self, namespace: str, status: str, limit: int) -> list[dict[str, Any]]:
        """Proposals of one status, newest first, each with the people it is about."""
        found = await self.store.proposals(namespace, status, limit)
        ids = {i for p in found for i in (p["person_id"], p["other_id"]) if i}
        people = {i: self.shown(p) for i in ids if (p := await self.store.get(i))}
        return [
            {**p, "person": people.get(p["person_id"] or ""), "other": people.get(p["other_id"] or "")} for p in found
        ]


# Offline: what explicit words say of people. "my sister Ana", "my friend Tom Lee",
# "我姐姐安娜", "我的朋友叫小雨": a relation word the owner uses of someone, then her name.
RELATIONS_EN = (
    "best friend",
    "girlfriend",
    "boyfriend",
    "grandmother",
    "grandfather",
    "grandma",
    "grandpa",
    "roommate",
    "flatmate",
    "colleague",
    "coworker",
    "co-worker",
    "classmate",
    "neighbour",
    "neighbor",
    "daughter",
    "husband",
    "partner",
    "brother",
    "sister",
    "cousin",
    "mother",
    "father",
    "friend",
    "teacher",
    "mentor",
    "uncle",
    "aunt",
    "wife",
    "boss",
    "mom",
    "mum",
    "dad",
    "son",
)
RELATIONS_ZH = {
    "姐姐": "sister",
    "妹妹": "sister",
    "哥哥": "brother",
    "弟弟": "brother",
    "妈妈": "mother",
    "爸爸": "father",
    "老婆": "wife",
    "老公": "husband",
    "女朋友": "girlfriend",
    "男朋友": "boyfriend",
    "闺蜜": "best friend",
    "好朋友": "best friend",
    "朋友": "friend",
    "同事": "colleague",
    "同学": "classmate",
    "室友": "roommate",
    "老板": "boss",
    "老师": "teacher",
    "表姐": "cousin",
    "表妹": "cousin",
    "表哥": "cousin",
    "表弟": "cousin",
    "奶奶": "grandmother",
    "爷爷": "grandfather",
    "外婆": "grandmother",
    "外公": "grandfather",
    "舅舅": "uncle",
    "阿姨": "aunt",
    "邻居": "neighbour",
}
_NAME_EN = r"[A-Z][a-z]+(?:[- ][A-Z][a-z]+)?"
# The relation in any case, the name capitalised ("my sister Ana", not "my sister is").
_PERSON_EN = re.compile(
    rf"\b(?i:my\s+(?P<relation>{'|'.join(re.escape(r) for r in RELATIONS_EN)}),?\s+(?:named\s+|called\s+)?)"
    rf"(?P<name>{_NAME_EN})\b"
)
# A Chinese name runs 2–3 characters; it neither starts nor ends where a particle, a time
# or a verb the sentence goes on with begins ("我姐姐安娜今天来了": 安娜; "我姐姐今天来了":
# no one), or at punctuation.
_AFTER_NAME_ZH = "今明昨来去说是在和也都又很要会的了给跟把被让叫想回还就才刚最真好，。！？、,.!?\\s"
_PERSON_ZH = re.compile(
    rf"我的?(?P<relation>{'|'.join(sorted(RELATIONS_ZH, key=len, reverse=True))})(?:叫|是)?"
    rf"(?![{_AFTER_NAME_ZH}])(?P<name>[\u4e00-\u9fff]{{2,3}}?)(?=[{_AFTER_NAME_ZH}]|$)"
)


_ONE_NAME = rf"(?:{_NAME_EN}|[\u4e00-\u9fff]{{2,3}})"
_SAME_PERSON = re.compile(
    rf"(?P<first>{_ONE_NAME})\s*(?:,\s*)?(?:也叫|又叫|就是|aka|a\.k\.a\.|also known as|is also called|also called)"
    rf"\s*(?P<second>{_ONE_NAME})"
)


def same_people_in(text: str) -> list[SamePerson]:
    """Two names the words say are one person: "Ana, also called 安娜", "安娜就是Ana"."""
    return [
        SamePerson(names=(m.group("first"), m.group("second")), evidence=[m.group(0)])
        for m in _SAME_PERSON.finditer(text)
    ]


def people_in(text: str) -> list[PersonFound]:
    """People the words name with their relation to the speaker: "my sister Ana" is Ana,
    also called "my sister"; "我姐姐安娜" is 安娜, also called "我姐姐"."""
    found = []
    for match in _PERSON_EN.finditer(text):
        relation = match.group("relation").lower()
        name = match.group("name")
        if name.lower() in {"and", "is", "was", "the", "i"}:
            continue
        found.append(PersonFound(name=name, aliases=[f"my {relation}"], relation=relation, evidence=[match.group(0)]))
    for match in _PERSON_ZH.finditer(text):
        relation = match.group("relation")
        found.append(
            PersonFound(
                name=match.group("name"),
                aliases=[f"我{relation}"],
                relation=RELATIONS_ZH[relation],
                evidence=[match.group(0)],
            )
        )
    return found
