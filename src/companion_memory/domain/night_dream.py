"""One of her night dreams (梦境), as the services hand it around: a plain dataclass in
the column order of ``night_dreams``, the order an export carries; and a memory as the
night dreams take it for material.

Not to be confused with the nightly dream (nightly/dream.py), which reads the day's
messages: a night dream is what she dreams from memories afterwards. It is never a
memory and never a fact about the owner."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# The languages a night dream is written in: the language of its material.
NIGHT_DREAM_LANGUAGES = ("zh", "en")


@dataclass(frozen=True, kw_only=True)
class NightDream:
    """A short dream in her voice: the local day the night follows (``date``), its place
    among the night's dreams (``seq``), a mood of the moods' vocabulary, the language,
    the memories it was made from, and who wrote it (``template`` or ``model:<name>``)."""

    id: str
    namespace: str
    date: str
    seq: int
    text: str
    mood: str
    language: str
    material_ids: tuple[str, ...]
    writer: str
    created_at: str


NIGHT_DREAM_FIELDS = tuple(f.name for f in dataclasses.fields(NightDream))


@dataclass(frozen=True)
class Material:
    """A live memory as night dreams read it: its words, its tags (``emotion:<label>``
    among them), the people it is about, and when it was last written."""

    id: str
    content: str
    tags: tuple[str, ...]
    people: tuple[str, ...]
    importance: float
    updated_at: str
