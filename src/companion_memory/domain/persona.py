"""Her persona knobs (the memory-graph reference's 人格旋钮): six traits, each 0..1 around a
baseline, the three brakes that keep a tune from moving her far or fast, and the short
summary a prompt carries.

A role-play layer, not memory: memory answers "what happened", the persona "in what
character she speaks". Every knob starts at its baseline, and while every knob is there
the summary is empty, so nothing changes for anyone who never tunes one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..clock import iso, parse_iso

KNOBS = ("tsundere", "playfulness", "initiative", "softness", "snark", "mood_swing")
# The middle of every knob: she is as the client's own system prompt makes her, and a
# tuned knob says how far she leans from that; the brakes keep her within 0.35..0.65.
BASELINE = 0.5
# The brakes: one step at most this far, one tune a knob within this long, and never
# further than this from the baseline.
MAX_STEP = 0.05
TUNE_INTERVAL = timedelta(days=1)
MAX_DRIFT = 0.15
# Values are kept to this many decimals, so that 0.5 + 0.05 + 0.05 is 0.6 and compares so.
DECIMALS = 4
_SLACK = 10**-DECIMALS / 2

LANGUAGES = ("en", "zh")
_NAMES = {
    "en": {
        "tsundere": "tsundere",
        "playfulness": "playful",
        "initiative": "initiative",
        "softness": "soft",
        "snark": "snark",
        "mood_swing": "mood swings",
    },
    "zh": {
        "tsundere": "傲娇",
        "playfulness": "爱玩",
        "initiative": "主动",
        "softness": "温柔",
        "snark": "毒舌",
        "mood_swing": "情绪起伏",
    },
}
# How far from the baseline, as words: (at least this far, lower, higher), the first row
# that holds; at the baseline, "medium". At MAX_DRIFT a knob is as far as it may go.
_LEANS = (
    (MAX_DRIFT, {"en": "very low", "zh": "很低"}, {"en": "very high", "zh": "很高"}),
    (0.1, {"en": "rather low", "zh": "偏低"}, {"en": "rather high", "zh": "偏高"}),
    (0.0, {"en": "a little low", "zh": "略低"}, {"en": "a little high", "zh": "略高"}),
)
_MEDIUM = {"en": "medium", "zh": "中等"}
_SEPARATOR = {"en": "; ", "zh": "；"}
_BETWEEN = {"en": ": ", "zh": " "}
# What the prompt is told around the summary: that it is a way of speaking, not a fact.
_INTRO = {
    "en": "Your persona (how you speak, not something that happened): ",
    "zh": "你的人格（用什么性格说话，不是发生过的事）：",
}


def rounded(value: float) -> float:
    return round(value, DECIMALS)


@dataclass(frozen=True, kw_only=True)
class PersonaChange:
    """One tune or revert of a knob, as ``persona_changes`` keeps it: the knob's history."""

    id: int
    namespace: str
    knob: str
    kind: str  # tune, revert
    value_before: float
    value_after: float
    reason: str
    changed_by: str
    changed_at: str


PERSONA_CHANGE_FIELDS = tuple(f.name for f in dataclasses.fields(PersonaChange))


@dataclass(frozen=True)
class Knob:
    """A knob now: its value, its baseline, and its latest change and tune (None: never)."""

    name: str
    value: float
    last_change: PersonaChange | None
    last_tune: PersonaChange | None
    baseline: float = BASELINE

    @property
    def drift(self) -> float:
        return rounded(self.value - self.baseline)


@dataclass(frozen=True)
class Brake:
    """A brake that held a tune: its name (step, daily, drift), its message, and the
    figures that say by how much."""

    name: str
    message: str
    details: dict[str, float | str]


def brakes_on(knob: Knob, delta: float, now: datetime) -> list[Brake]:
    """Every brake that holds a tune of ``knob`` by ``delta`` at ``now`` (empty: it may go).
    Only tunes count for the daily brake: a revert goes back to the baseline, which no
    brake guards against, and going back does not buy another step the same day."""
    held: list[Brake] = []
    last_tuned = parse_iso(knob.last_tune.changed_at) if knob.last_tune else None
    step = rounded(abs(delta))
    if step > MAX_STEP + _SLACK:
        over = rounded(step - MAX_STEP)
        held.append(
            Brake(
                "step",
                f"a step is at most {MAX_STEP}: {step} asked, {over} over",
                {"limit": MAX_STEP, "asked": step, "over": over},
            )
        )
    if last_tuned is not None and now < last_tuned + TUNE_INTERVAL:
        allowed = last_tuned + TUNE_INTERVAL
        wait = int((allowed - now).total_seconds() + 0.999)
        held.append(
            Brake(
                "daily",
                f"one tune a day: tuned at {iso(last_tuned)}, the next may come in {_duration(wait)}",
                {"limit": "1 per 24 hours", "next_tune_at": iso(allowed), "wait_seconds": wait},
            )
        )
    after = rounded(knob.value + delta)
    drift = rounded(abs(after - knob.baseline))
    if drift > MAX_DRIFT + _SLACK:
        over = rounded(drift - MAX_DRIFT)
        held.append(
            Brake(
                "drift",
                f"at most {MAX_DRIFT} from the baseline {knob.baseline}: {after} would be {drift} away, {over} over",
                {"limit": MAX_DRIFT, "baseline": knob.baseline, "would_be": after, "drift": drift, "over": over},
            )
        )
    return held


def _duration(seconds: int) -> str:
    hours, minutes = divmod((seconds + 59) // 60, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def lean(drift: float, language: str) -> str:
    """The words for a knob ``drift`` from its baseline: "rather high", 「偏高」."""
    size = abs(drift)
    if size <= _SLACK:
        return _MEDIUM[language]
    lower, higher = next((lower, higher) for least, lower, higher in _LEANS if size >= least - _SLACK)
    return (higher if drift > 0 else lower)[language]


def summary(knobs: list[Knob], language: str) -> str:
    """「傲娇 中等；爱玩 偏高；…」 / "tsundere: medium; playful: rather high; …", every knob
    in ``KNOBS`` order; empty while every knob is at its baseline."""
    if all(abs(k.drift) <= _SLACK for k in knobs):
        return ""
    names = _NAMES[language]
    return _SEPARATOR[language].join(f"{names[k.name]}{_BETWEEN[language]}{lean(k.drift, language)}" for k in knobs)


def prompt_line(knobs: list[Knob], language: str) -> str:
    """The summary as a prompt says it; empty while every knob is at its baseline."""
    said = summary(knobs, language)
    return f"{_INTRO[language]}{said}" if said else ""
