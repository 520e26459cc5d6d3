"""Her persona knobs in one namespace: read them, tune one within the brakes, revert to
the baselines, read their history, and the summary the boot package and the chat
gateway's stable prefix carry (in PERSONA_LANGUAGE).

A revert is never braked: the brakes keep her from drifting away from her baseline, and
a revert goes back to it, so the owner can always undo at once what was tuned. It does
not reset the daily brake either: a knob tuned, reverted and tuned again the same day
would be two tunes a day.
"""

from __future__ import annotations

from ..clock import iso
from ..domain.persona import BASELINE, KNOBS, Knob, PersonaChange, brakes_on, prompt_line, rounded, summary
from ..errors import Conflict, InvalidInput
from ..ports import Clock, Database
from ..store.persona import PersonaStore


class Persona:
    def __init__(self, db: Database, clock: Clock, language: str) -> None:
        self.store = PersonaStore(db)
        self.clock = clock
        self.language = language

    async def knobs(self, namespace: str) -> list[Knob]:
        """Every knob, in ``KNOBS`` order: at its latest change's value, else its baseline."""
        changes, tunes = await self.store.latest(namespace)
        return [
            Knob(name, changes[name].value_after if name in changes else BASELINE, changes.get(name), tunes.get(name))
            for name in KNOBS
        ]

    async def knob(self, namespace: str, name: str) -> Knob:
        return next(k for k in await self.knobs(namespace) if k.name == name)

    async def tune(self, namespace: str, name: str, delta: float, reason: str, by: str) -> PersonaChange:
        """Move a knob by ``delta``, or the 409 (``persona_brake``) naming every brake that
        held and by how much."""
        if not rounded(delta):
            raise InvalidInput("delta is 0: a tune moves the knob (e.g. 0.05 or -0.05)", code="invalid_delta")
        knob = await self.knob(namespace, name)
        held = brakes_on(knob, delta, self.clock.now())
        if held:
            raise Conflict(
                f"{name} was not tuned: " + "; ".join(f"the {b.name} brake held ({b.message})" for b in held),
                code="persona_brake",
                details={
                    "knob": name,
                    "value": knob.value,
                    "brakes": [{"brake": b.name, **b.details} for b in held],
                },
            )
        return await self._write(namespace, knob, "tune", rounded(knob.value + delta), reason, by)

    async def revert(self, namespace: str, names: tuple[str, ...], reason: str, by: str) -> list[PersonaChange]:
        """Every knob of ``names`` that is off its baseline back to it; no brake applies."""
        knobs = [k for k in await self.knobs(namespace) if k.name in names and k.drift]
        return [await self._write(namespace, k, "revert", k.baseline, reason, by) for k in knobs]

    async def _write(self, namespace: str, knob: Knob, kind: str, value: float, reason: str, by: str) -> PersonaChange:
        change = PersonaChange(
            id=0,
            namespace=namespace,
            knob=knob.name,
            kind=kind,
            value_before=knob.value,
            value_after=value,
            reason=reason,
            changed_by=by,
            changed_at=iso(self.clock.now()),
        )
        if not await self.store.append(change, knob.last_change.id if knob.last_change else 0):
            raise Conflict(
                f"{knob.name} changed while this {kind} was being made: read the knobs again",
                code="persona_changed",
                details={"knob": knob.name},
            )
        latest, _ = await self.store.latest(namespace)
        return latest[knob.name]

    async def history(self, namespace: str, name: str | None, limit: int) -> list[PersonaChange]:
        return await self.store.history(namespace, name, limit)

    async def summary(self, namespace: str) -> str:
        """「傲娇 中等；爱玩 偏高；…」 in PERSONA_LANGUAGE; empty while every knob is at its baseline."""
        return summary(await self.knobs(namespace), self.language)

    async def prompt_line(self, namespace: str) -> str:
        """What the boot package and the gateway's stable prefix carry: the summary, told as
        a way of speaking; empty while every knob is at its baseline, so that nothing is
        added for anyone who never tunes one, and it changes only when a knob does."""
        return prompt_line(await self.knobs(namespace), self.language)
