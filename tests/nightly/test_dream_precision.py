"""The embedded dream (no DREAM_MODEL) proposes only what it can stand behind: the owner's
explicit requests, the rules they set and their plans with a day ahead, each a whole
sentence of theirs, once a night. Never a fragment cut at a keyword, a past event as a
plan, a question as a rule or request, the companion's words, or the same thing twice.
The messages go in as a user sends them and the proposals are read from the review queue
(tests/dream_labels.py); the labels are tests/data/dream_labels.json."""

from __future__ import annotations

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.runtime import Runtime
from tests.conftest import auth
from tests.dream_labels import (
    Score,
    case_expectations,
    case_turns,
    dream_each_night,
    load,
    locomo_expectations,
    proposals,
    send,
    session_turns,
)


def described(score: Score) -> str:
    lines = [f"wrong: {p.ref}: {p.kind} {p.content!r}" for p in score.wrong]
    lines += [f"twice: {p.ref}: {p.kind} {p.content!r}" for p in score.repeated]
    lines += [f"missed: {e.ref}: {e.kind} {e.content or e.quote!r}" for e in score.missed()]
    return "\n".join(lines)


# What the extractor reads does not depend on the database; the SQL of the dream and the review
# queue runs on all three in the other tests here.
@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
async def test_each_hand_written_case_proposes_exactly_what_it_should(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """English and Chinese: requests, rules and dated plans are found, in the owner's words;
    past events, questions, negations, fragments, advice, the companion's words and repeats
    propose nothing."""
    cases = load()["cases"]
    # One namespace a case: a night's budget of batches for all of them.
    runtime.settings = runtime.settings.model_copy(update={"DREAM_MAX_RUNS": 1000})
    runtime.__dict__.pop("dream", None)
    by_id = await send(client, case_turns(cases, runtime.settings.DREAM_TIME_ZONE), auth())
    dreamt = await client.post("/v1/dream/run", json={}, headers=auth())  # every day not dreamt yet
    assert dreamt.status_code == 200
    found = await proposals(client, [case["id"] for case in cases["list"]], by_id, auth())
    score = Score.of(found, case_expectations(cases))
    assert not (score.wrong or score.repeated or score.missed()), described(score)
    assert score.recall("request") == 1.0 and score.by_kind()["request"][2] > 10
    assert sum(run["counts"]["duplicates"] for run in dreamt.json()["runs"]) == 3


async def test_locomo_turns_propose_only_their_labelled_plans_either_way_round(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    """Five sessions of LoCoMo, each dreamt the night after it was said, once with each
    speaker as the owner: full of "I'll always remember", "I'll never forget", "Remember
    that …" and "tomorrow", they propose nothing but the two dated plans in them, and only
    from the side that said them."""
    labels = load()
    zone = runtime.settings.DREAM_TIME_ZONE
    turns = [
        turn
        for owner in ("a", "b")
        for session in labels["locomo"]["sample"]
        for turn in session_turns(
            session["sample_id"], session["speaker_a"], session["date_time"], session["turns"], owner, zone
        )
    ]
    by_id = await send(client, turns, auth())
    await dream_each_night(client, clock, turns, zone, auth())
    found = await proposals(client, dict.fromkeys(t.namespace for t in turns), by_id, auth())
    score = Score.of(found, locomo_expectations(labels, turns))
    assert not (score.wrong or score.repeated or score.missed()), described(score)
    assert sorted((p.namespace, p.content, p.valid_to) for p in found) == [
        ("locomo-conv-26-a", "I'm going to a transgender conference this month", "2023-07-31"),
        (
            "locomo-conv-41-a",
            "Next week I have a community meeting coming up, we'll be discussing education and infrastructure upgrades",
            "2023-01-22",
        ),
    ]


async def test_said_again_on_another_night_it_waits_in_review_once(client: httpx.AsyncClient) -> None:
    said = [
        {"role": "user", "content": "Please remember that I'm vegan.", "created_at": "2026-11-27T03:00:00Z"},
        {"role": "user", "content": "please remember that I'm vegan!", "created_at": "2026-11-29T03:00:00Z"},
    ]
    await client.post("/v1/ingest/messages", json={"messages": said[:1]}, headers=auth())
    first = (await client.post("/v1/dream/run", json={"date": "2026-11-27"}, headers=auth())).json()
    await client.post("/v1/ingest/messages", json={"messages": said[1:]}, headers=auth())
    dry = (await client.post("/v1/dream/run", json={"date": "2026-11-29", "dry_run": True}, headers=auth())).json()
    second = (await client.post("/v1/dream/run", json={"date": "2026-11-29"}, headers=auth())).json()
    assert first["runs"][0]["candidates_created"] == 1
    assert dry["runs"][0]["candidates"] == [] and second["runs"][0]["candidates_created"] == 0
    assert second["runs"][0]["counts"]["duplicates"] == 1
    pending = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    assert [(c["content"], c["evidence"][0]["quote"]) for c in pending] == [
        ("I'm vegan", "Please remember that I'm vegan")
    ]
