"""Each answer record of an entity carries the fields of its domain dataclass, so a
column added to an entity is not silently missing from (or left over in) the answers.
The records are declared plainly (mypy sees them); this keeps the two lists together."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from companion_memory.application.admin_views import DayEntry, GraphEdge, GraphNode, MonthEntry, WeekEntry
from companion_memory.application.boot import DiaryEntry
from companion_memory.application.cache import CacheEntry
from companion_memory.application.candidates import CandidateRecord
from companion_memory.application.dream import DreamRunRecord
from companion_memory.application.health import IndexState
from companion_memory.application.moods import MoodCount, MoodRecord
from companion_memory.application.people import PersonRecord, ProposalRecord
from companion_memory.application.records import GlossaryEntry, GlossaryHit, MemoryEvent, PreciousRecord, Relation
from companion_memory.application.shares import ShareEvent, ShareRecord
from companion_memory.application.todos import TodoRecord
from companion_memory.domain import (
    cache,
    candidate,
    diary,
    dream_run,
    glossary,
    memory_event,
    mood,
    person,
    precious,
    relation,
    share,
    star_map,
    todo,
    vector_state,
)

# record, the entity it shows, and the fields an answer leaves out on purpose.
RECORDS: list[tuple[type[BaseModel], type, set[str]]] = [
    (PersonRecord, person.Person, {"familiarity_at"}),  # given decayed to now instead
    (ProposalRecord, person.PersonProposal, {"key"}),  # the dedup key is the store's
    (CandidateRecord, candidate.Candidate, set()),
    (TodoRecord, todo.Todo, set()),
    (MoodRecord, mood.Mood, set()),
    (MoodCount, mood.MoodCount, set()),
    (ShareRecord, share.Share, set()),
    (ShareEvent, share.ShareEvent, set()),
    (PreciousRecord, precious.Precious, set()),
    (GlossaryEntry, glossary.Term, set()),
    (GlossaryHit, glossary.MentionedTerm, set()),
    (DiaryEntry, diary.DiaryDay, set()),
    (DayEntry, diary.DiaryDay, {"id", "namespace", "created_at"}),  # the admin diary's page of days
    (WeekEntry, diary.WeekEntry, set()),
    (MonthEntry, diary.MonthEntry, set()),
    (CacheEntry, cache.CacheEntry, set()),
    (IndexState, vector_state.VectorState, set()),
    (DreamRunRecord, dream_run.DreamRun, set()),
    (MemoryEvent, memory_event.MemoryEvent, {"namespace", "memory_id"}),  # listed under its memory
    (GraphNode, star_map.StarNode, set()),
    (GraphEdge, star_map.StarEdge, set()),
    (Relation, relation.Relation, {"namespace", "weighed_at"}),  # listed under its memory; the fade's own clock
]


@pytest.mark.parametrize(("record", "entity", "left_out"), RECORDS, ids=[r.__name__ for r, _, _ in RECORDS])
def test_a_record_shows_its_entity(record: type[BaseModel], entity: type, left_out: set[str]) -> None:
    fields = {f.name for f in dataclasses.fields(entity)}
    assert left_out <= fields
    assert set(record.model_fields) == fields - left_out
