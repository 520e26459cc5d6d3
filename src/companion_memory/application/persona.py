"""Her persona knobs: read them with their summary, tune one (the owner, with a reason,
within the three brakes), revert to the baselines, and read what changed. A role-play
layer, not memory: it says in what character she speaks, never what happened."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from ..clock import iso, parse_iso
from ..domain.persona import BASELINE, KNOBS, MAX_DRIFT, MAX_STEP, TUNE_INTERVAL, Knob, lean, summary
from ..domain.scopes import MEMORY_READ, OWNER
from ..runtime import Runtime
from .fields import CutPrivate, LongPageLimit, Namespace
from .principal import Principal
from .use_case import Input, Output, use_case

KnobName = Annotated[
    Literal["tsundere", "playfulness", "initiative", "softness", "snark", "mood_swing"],
    Field(
        description="傲娇 tsundere, 爱玩 playfulness, 主动 initiative, 温柔 softness, 毒舌 snark, 情绪起伏 mood_swing."
    ),
]
Language = Annotated[Literal["en", "zh"] | None, Field(description="The summary's language; default PERSONA_LANGUAGE.")]
BRAKES = (
    f"three brakes: a step of at most {MAX_STEP}, one tune a day per knob ({int(TUNE_INTERVAL.total_seconds()) // 3600} "
    f"hours apart), at most {MAX_DRIFT} from the baseline {BASELINE}"
)
Reason = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=500),
    Field(description="Why, in a few words: kept in the knob's history."),
    CutPrivate,
]


class PersonaChangeRecord(BaseModel):
    id: int
    namespace: str
    knob: str
    kind: str = Field(description="tune or revert.")
    value_before: float
    value_after: float
    reason: str
    changed_by: str = Field(description="The key's profile that made the change (chatbox: the owner).")
    changed_at: str


class KnobRecord(BaseModel):
    name: str
    value: float = Field(description="0..1.")
    baseline: float
    drift: float = Field(description=f"value − baseline; at most ±{MAX_DRIFT}.")
    lean: str = Field(description="The drift in the summary's words (medium, rather high, 偏高…).")
    changed_at: str | None = Field(description="Its latest tune or revert; null: never changed.")
    next_tune_at: str | None = Field(description="When the daily brake lets it be tuned again; null: now.")


class PersonaState(Output):
    namespace: str
    knobs: list[KnobRecord] = Field(description="The six knobs, in a fixed order.")
    tuned: bool = Field(description="Whether any knob is off its baseline.")
    summary: str = Field(
        description='「傲娇 中等；爱玩 偏高；…」 / "tsundere: medium; playful: rather high; …"; empty while every '
        "knob is at its baseline (then nothing reaches the prompt)."
    )
    language: str


class PersonaScope(Input):
    namespace: Namespace = "default"
    language: Language = None


class PersonaTune(Input):
    namespace: Namespace = "default"
    knob: KnobName
    delta: Annotated[
        float,
        Field(
            ge=-1,
            le=1,
            description=f"How far to move it, e.g. 0.05 or -0.05; {BRAKES}. A tune a brake holds is a 409 "
            "(persona_brake) naming each brake and by how much.",
        ),
    ]
    reason: Reason


class PersonaRevert(Input):
    namespace: Namespace = "default"
    knob: Annotated[KnobName | None, Field(description="The knob to revert; omit for all six.")] = None
    reason: Reason


class PersonaAnswer(Output):
    changes: list[PersonaChangeRecord] = Field(description="What this call changed (a revert: each knob it moved).")
    persona: PersonaState


class PersonaHistoryQuery(Input):
    namespace: Namespace = "default"
    knob: KnobName | None = None
    limit: LongPageLimit = 100


class PersonaHistory(Output):
    changes: list[PersonaChangeRecord] = Field(description="The newest first.")
    count: int


def _record(knob: Knob, language: str, now: datetime) -> KnobRecord:
    allowed = parse_iso(knob.last_tune.changed_at) + TUNE_INTERVAL if knob.last_tune else None
    return KnobRecord(
        name=knob.name,
        value=knob.value,
        baseline=knob.baseline,
        drift=knob.drift,
        lean=lean(knob.drift, language),
        changed_at=knob.last_change.changed_at if knob.last_change else None,
        next_tune_at=iso(allowed) if allowed and allowed > now else None,
    )


async def _state(runtime: Runtime, namespace: str, language: str | None) -> PersonaState:
    knobs = await runtime.persona.knobs(namespace)
    language = language or runtime.settings.PERSONA_LANGUAGE
    return PersonaState(
        namespace=namespace,
        knobs=[_record(k, language, runtime.clock.now()) for k in knobs],
        tuned=any(k.drift for k in knobs),
        summary=summary(knobs, language),
        language=language,
    )


@use_case("persona.get", MEMORY_READ)
async def get_persona(runtime: Runtime, _: Principal, scope: PersonaScope) -> PersonaState:
    """Her six persona knobs (value, baseline, when each may be tuned again) and their summary."""
    return await _state(runtime, scope.namespace, scope.language)


@use_case("persona.tune", OWNER)
async def tune_persona(runtime: Runtime, principal: Principal, tune: PersonaTune) -> PersonaAnswer:
    """Move one knob by a small step, with a reason (the owner only); the brakes may hold it (409)."""
    change = await runtime.persona.tune(tune.namespace, tune.knob, tune.delta, tune.reason, principal.profile)
    return PersonaAnswer.model_validate(
        {"changes": [change], "persona": await _state(runtime, tune.namespace, None)}, from_attributes=True
    )


@use_case("persona.revert", OWNER)
async def revert_persona(runtime: Runtime, principal: Principal, revert: PersonaRevert) -> PersonaAnswer:
    """Put one knob, or all six, back to the baseline (the owner only); never braked."""
    names = (revert.knob,) if revert.knob else KNOBS
    changes = await runtime.persona.revert(revert.namespace, names, revert.reason, principal.profile)
    return PersonaAnswer.model_validate(
        {"changes": changes, "persona": await _state(runtime, revert.namespace, None)}, from_attributes=True
    )


@use_case("persona.history", MEMORY_READ)
async def persona_history(runtime: Runtime, _: Principal, query: PersonaHistoryQuery) -> PersonaHistory:
    """Every tune and revert of the knobs (or of one), the newest first."""
    changes = await runtime.persona.history(query.namespace, query.knob, query.limit)
    return PersonaHistory.model_validate({"changes": changes, "count": len(changes)}, from_attributes=True)
