"""Proposals about people, for the owner to decide: a new person, new names for a known
one, or that two people are one. The dream makes them from what it read; an agent may
propose a merge; approving one writes it into the registry."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from ...clock import iso
from ...domain.person import Person, PersonProposal
from ...errors import Conflict, InvalidInput, NotFound, ServiceError
from ...ports import Database
from ...store.people import PersonStore
from .extract import PersonFound, SamePerson
from .names import called, clean_names, name_key
from .registry import People


@dataclass(frozen=True)
class ProposalAbout:
    """A proposal and the people it names, as they are now."""

    proposal: PersonProposal
    person: Person | None
    other: Person | None


class PersonProposals:
    def __init__(self, db: Database, people: People) -> None:
        self.db = db
        self.people = people
        self.store = people.store

    def _now(self) -> str:
        return iso(self.people.clock.now())

    async def proposals_for(
        self,
        namespace: str,
        found: Sequence[PersonFound],
        same: Sequence[SamePerson],
        source: str,
    ) -> list[PersonProposal]:
        """What the dream's findings ask of the owner: a new person when none of their
        names is known; their new names when one is; a merge when their names belong to two
        people. Nothing for what the registry already says."""
        people = await self.store.active(namespace)
        proposals: list[PersonProposal] = []
        for person in found:
            names = clean_names([person.name, *person.aliases])
            known = list({p.id: p for n in names if (p := called(people, n))}.values())
            if len(known) >= 2:
                proposals.append(self._merge_proposal(namespace, known[0], known[1], person.evidence, source))
            elif known:
                new = [n for n in names if called(people, n) is None]
                if new or (person.relation and not known[0].relation):
                    proposals.append(
                        self._person_proposal(
                            namespace, known[0].name, new, person.relation, person.evidence, source, known[0].id
                        )
                    )
            else:
                proposals.append(
                    self._person_proposal(namespace, names[0], names[1:], person.relation, person.evidence, source)
                )
        for pair in same:
            first, second = called(people, pair.names[0]), called(people, pair.names[1])
            if first and second and first.id != second.id:
                proposals.append(self._merge_proposal(namespace, first, second, pair.evidence, source))
            elif (known_person := first or second) is not None and not (first and second):
                new_name = pair.names[1] if first else pair.names[0]
                proposals.append(
                    self._person_proposal(
                        namespace, known_person.name, [new_name], "", pair.evidence, source, known_person.id
                    )
                )
        unique: dict[str, PersonProposal] = {}
        for proposal in proposals:
            unique.setdefault(proposal.key, proposal)
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
    ) -> PersonProposal:
        what = f"{name} is {relation}" if relation else name
        return PersonProposal(
            id=str(uuid.uuid4()),
            namespace=namespace,
            kind="person",
            key=f"person:{person_id or ''}:{'|'.join(sorted(name_key(n) for n in [name, *aliases]))}",
            name=name,
            aliases=list(aliases),
            relation=relation,
            person_id=person_id,
            evidence=list(evidence),
            reason=f"more names for {name}: {', '.join(aliases)}" if person_id else f"a new person: {what}",
            source=source,
            created_at=self._now(),
        )

    def _merge_proposal(
        self,
        namespace: str,
        survivor: Person,
        other: Person,
        evidence: Sequence[str],
        source: str,
        reason: str = "",
    ) -> PersonProposal:
        return PersonProposal(
            id=str(uuid.uuid4()),
            namespace=namespace,
            kind="merge",
            key=f"merge:{'|'.join(sorted((survivor.id, other.id)))}",
            name=survivor.name,
            person_id=survivor.id,
            other_id=other.id,
            evidence=list(evidence),
            reason=reason or f"{other.name!r} and {survivor.name!r} are one person",
            source=source,
            created_at=self._now(),
        )

    async def propose_merge(
        self, namespace: str, survivor_id: str, other_id: str, reason: str, source: str
    ) -> PersonProposal:
        """Ask the owner whether two people are one (``survivor_id`` keeps their id). The
        same question waiting already is answered as it stands."""
        if survivor_id == other_id:
            raise InvalidInput("a person cannot be merged into themselves", code="same_person")
        survivor, other = await self.people.live(survivor_id), await self.people.live(other_id)
        if survivor.namespace != namespace or other.namespace != namespace:
            raise NotFound(f"both people must be in namespace {namespace!r}")
        proposal = self._merge_proposal(namespace, survivor, other, [], source, reason)
        await self.db.batch([PersonStore.propose(proposal)])
        stored = await self.store.pending_key(namespace, proposal.key)
        return stored or proposal

    async def approve(self, proposal_id: str) -> tuple[PersonProposal, Person]:
        """Apply a proposal: the person created or given their new names, or the merge done.
        Answers the proposal as decided and the person written (shown as answered)."""
        proposal = await self._claim(proposal_id, "approved")
        try:
            if proposal.kind == "merge":
                person = await self.people.merge(proposal.person_id or "", proposal.other_id or "")
            else:
                person = await self._apply_person(proposal)
        except ServiceError:
            await self.store.release(proposal_id)
            raise
        return await self._decided(proposal), self.people.shown(person)

    async def reject(self, proposal_id: str) -> PersonProposal:
        """Set a proposal aside: both people stay as they are."""
        return await self._decided(await self._claim(proposal_id, "rejected"))

    async def _claim(self, proposal_id: str, status: str) -> PersonProposal:
        proposal = await self.store.proposal(proposal_id)
        if proposal is None:
            raise NotFound(f"proposal {proposal_id} not found")
        if not await self.store.claim(proposal_id, status, self._now()):
            current = await self.store.proposal(proposal_id) or proposal
            raise Conflict(f"proposal {proposal_id} is already {current.status}", code="proposal_not_pending")
        return proposal

    async def _decided(self, claimed: PersonProposal) -> PersonProposal:
        """The proposal as its decision left it (its status and when)."""
        return await self.store.proposal(claimed.id) or claimed

    async def _apply_person(self, proposal: PersonProposal) -> Person:
        if proposal.person_id is None:
            person, _ = await self.people.upsert(
                proposal.namespace,
                proposal.name,
                aliases=proposal.aliases,
                relation=proposal.relation or None,
                source=proposal.source,
            )
            return person
        current = await self.people.live(proposal.person_id)
        person, _ = await self.people.upsert(
            current.namespace,
            current.name,
            person_id=current.id,
            aliases=[*current.aliases, *proposal.aliases],
            relation=None if current.relation or not proposal.relation else proposal.relation,
        )
        return person

    async def proposals(self, namespace: str, status: str, limit: int) -> list[ProposalAbout]:
        """Proposals of one status, newest first, each with the people it is about."""
        found = await self.store.proposals(namespace, status, limit)
        ids = {i for p in found for i in (p.person_id, p.other_id) if i}
        people = {i: self.people.shown(p) for i in ids if (p := await self.store.get(i))}
        return [ProposalAbout(p, people.get(p.person_id or ""), people.get(p.other_id or "")) for p in found]
