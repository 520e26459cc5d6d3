"""A bounded fuzz of every documented operation against its own OpenAPI document.

The real server on a real port (tests/live_server.py), the owner key, a local fake
model provider behind the chat routes (tests/upstreams.py), a fixed seed and a few
derandomized examples per operation, valid and invalid ones. Any 5xx fails, and so does
a status or a body the document does not declare.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from companion_memory.api.app import create_app
from companion_memory.settings import Settings
from tests.conftest import OWNER_KEY
from tests.fakes.embedder import HashEmbedder
from tests.live_server import LiveServer
from tests.upstreams import RecordingUpstream

SEED = 20261130
EXAMPLES_PER_OPERATION = 10
# The coverage phase also sends methods a path does not serve: a 405 whose Allow lists
# exactly the documented methods.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    unsupported_method,
    allow_header_conformance,
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with RecordingUpstream() as upstream:
        settings = Settings(
            CHATBOX_API_KEY=OWNER_KEY,
            CHAT_BASE_URL=upstream.url + "/v1",
            CHAT_MODEL="fake/chat-model",
            VISION_MODEL="fake/vision-model",
            UPSTREAM_TIMEOUT_SECONDS=5,
        )
        # A hash embedder: the fuzz is about HTTP, not about what texts mean.
        server = LiveServer(settings, tmp_path_factory.mktemp("fuzz") / "data", HashEmbedder())
        yield server
        server.stop()


@pytest.fixture(scope="module")
def existing(live: LiveServer) -> dict[str, list[str]]:
    """Rows that exist, by the name of the path parameter that addresses them, so that
    a case can aim at a real memory, candidate... rather than only at a missing one."""
    with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {OWNER_KEY}"}) as http:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            response = http.post(path, json=body)
            assert response.status_code in (200, 201), response.text
            return response.json()

        memories = [
            post("/v1/memories", {"fact_key": f"fuzz.{i}", "content": f"seeded memory {i}"})["memory"]["id"]
            for i in range(6)
        ]
        relations = [
            post(f"/v1/memories/{memories[0]}/relations", {"target_id": memories[i], "relation": "supports"})[
                "relation"
            ]["id"]
            for i in (1, 2)
        ]
        precious = [post("/v1/precious", {"content": f"seeded words {i}"})["precious"]["id"] for i in range(3)]
        glossary = [post("/v1/glossary", {"term": f"term{i}", "definition": "seeded"})["entry"]["id"] for i in range(3)]
        people = [post("/v1/people", {"name": f"Fuzz Person {i}"})["person"]["id"] for i in range(6)]
        proposals = [
            post("/v1/person_proposals", {"person_id": people[i], "other_id": people[i + 1]})["proposal"]["id"]
            for i in (0, 2, 4)
        ]
        turns = [{"role": "user", "content": f"seeded turn {i}"} for i in range(6)]
        said = [
            m["id"]
            for n in range(3)
            for m in post("/v1/ingest/messages", {"conversation_id": f"c{n}", "messages": turns[n::3]})["messages"]
        ]
        keys = [f"key{i}" for i in range(3)]
        for key in keys:
            assert http.put(f"/v1/cache/default/{key}", json={"value": {"n": 1}}).status_code == 200
        candidates = [f"fuzz-candidate-{i}" for i in range(12)]
        rows = [
            {
                "id": c,
                "namespace": "default",
                "kind": ("add", "update", "delete")[i % 3],
                "type": "fact",
                "content": f"seeded candidate {i}",
                "fact_key": f"fuzz.c{i}" if i % 2 else None,
                "status": "pending",
                "target_memory_id": memories[3 + i % 3] if i % 3 else None,
                "importance": 0.5,
                "confidence": 0.8,
                "evidence": [],
                "source_message_ids": [],
                "created_at": "2026-11-29T12:00:00Z",
                "updated_at": "2026-11-29T12:00:00Z",
            }
            for i, c in enumerate(candidates)
        ]
        post("/api/memories/import", {"format": "companion-memory-export", "version": 1, "memory_candidates": rows})
        assert len(http.get("/v1/candidates", params={"limit": 50}).json()["candidates"]) == len(candidates)
    return {
        "memory_id": memories,
        "relation_id": relations,
        "precious_id": precious,
        "entry_id": glossary,
        "key": keys,
        "candidate_id": candidates,
        "target_id": memories,
        "person_id": people,
        "proposal_id": proposals,
        "message_id": said,
        "conversation_id": ["c0", "c1", "c2"],
    }


CONFIG = schemathesis.Config.from_dict(
    {
        "seed": SEED,
        "headers": {"Authorization": f"Bearer {OWNER_KEY}"},
        "generation": {
            "mode": "all",  # valid requests, and invalid ones that must get a documented 4xx
            "max-examples": EXAMPLES_PER_OPERATION,
            "deterministic": True,
            "database": "none",
            "with-security-parameters": False,
        },
        "phases": {"coverage": {"enabled": True}, "stateful": {"enabled": False}},
    }
)
# The document the server serves (test_served_document_is_this_one checks). It is read
# from the app here, at import, because schemathesis parametrizes at collection time
# (its from_fixture loader does not run on pytest 9).
schema = schemathesis.openapi.from_dict(create_app(None).openapi(), config=CONFIG)  # type: ignore[arg-type]


def test_served_document_is_this_one(live: LiveServer) -> None:
    # The server builds the document on its first request: seconds of CPU on a busy machine.
    assert httpx.get(live.url + "/openapi.json", timeout=120).json() == schema.raw_schema


@schema.parametrize()
def test_every_operation_keeps_its_document(
    case: schemathesis.Case, live: LiveServer, existing: dict[str, list[str]]
) -> None:
    exercise(case, live, existing)


CONVERSATION_VERBS = ("/v1/conversations/forget", "/v1/conversations/search")


def exercise(case: schemathesis.Case, live: LiveServer, existing: dict[str, list[str]]) -> None:
    # Most cases address an existing row, the rest keep what was generated (missing ones).
    # Chosen from the case itself, not by @schema.given: that would switch off the
    # coverage phase (boundary values, methods a path does not serve).
    aim = zlib.crc32(json.dumps([case.path_parameters, case.body], sort_keys=True, default=str).encode()) % 13 - 1
    if aim >= 0:
        for name in case.path_parameters or {}:
            if name in existing:
                case.path_parameters[name] = existing[name][aim % len(existing[name])]
        if "relation_id" in (case.path_parameters or {}):
            case.path_parameters["memory_id"] = existing["memory_id"][0]  # the seeded edges' source
        if case.operation.path == "/v1/cache/{namespace}/{key}":
            case.path_parameters["namespace"] = "default"
        if isinstance(case.body, dict) and isinstance(case.body.get("target_id"), str):
            case.body["target_id"] = existing["target_id"][(aim + 1) % len(existing["target_id"])]
    response = case.call(base_url=live.url, timeout=30)
    checks = CHECKS
    if case.operation.path in ("/v1/memory/recall", "/v1/memory/search", *CONVERSATION_VERBS):
        # The undocumented /v1/memory/{memory_id} aliases also match these paths: GET, PATCH
        # and DELETE are served (a 404 for a memory called "recall"), and Allow says so; so
        # does DELETE /v1/conversations/{conversation_id} (a conversation called "forget").
        checks = [c for c in CHECKS if c not in (unsupported_method, allow_header_conformance)]
    case.validate_response(response, checks=checks)
