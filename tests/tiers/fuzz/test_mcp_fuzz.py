"""A bounded fuzz of the MCP tools, and of the JSON-RPC around them, under every key.

Every tool is called with wrong types, missing, oversized and at-the-limit arguments and
seeded random junk, by each of the five keys, alternating the 2025 handshake era, the
2026-07-28 protocol and the key as ``?token=``. The server fails the fuzz by:

- answering with an HTTP 5xx, or a body that is not JSON;
- a JSON-RPC internal error (-32603) or an ``internal_error`` tool result: a failure
  nobody handled, whatever the input;
- a scope leak: a call that is not refused although the key lacks the tool's scope (the
  scope its REST twin needs, tests/api/test_mcp_scopes.py), or a refusal of a key that has it.

The cases come from a seeded generator (no dependency, the same cases every run), so a
failure names a case that can be replayed by hand. Each failure is collected, so one run
lists them all. In process on SQLite with a small deterministic embedder; well under 30 s.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict

from companion_memory.api.json_body import MAX_BODY_DEPTH
from companion_memory.api.mcp import jsonrpc, rpc
from companion_memory.api.mcp.tools import TOOLS, Tool
from companion_memory.application.bindings import Confinement
from companion_memory.application.use_case import Input, UseCase
from companion_memory.domain.episode import Episode
from companion_memory.domain.json_value import json_problem
from companion_memory.domain.scopes import MEMORY_READ
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from companion_memory.runtime import Runtime
from companion_memory.store.episodes import EpisodeStore
from companion_memory.store.folds import FoldStore
from tests.api.test_mcp_scopes import (
    ERAS,
    KEYS,
    META,
    MODERN,
    fast_runtime,
    fold_row,
    may_call,
    mcp_call,
)
from tests.conftest import MCP_KEY, OWNER_KEY, app_on, auth
from tests.fakes.d1 import make_d1_database

# Values of every JSON type, and the awkward ones of each.
DEEP = json.loads("[" * 200 + "]" * 200)
JUNK: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    10**40,
    -(10**40),
    1.5,
    -0.0,
    1e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    " ",
    "\x00",
    "\ud800",
    "x\udfffy",
    "🦊" * 3,
    "\u202eevil",
    "../../etc/passwd",
    "' OR 1=1 --",
    "%s%n",
    "2026-02-30",
    "null",
    "default",
    "a" * 70,
    '"',
    "a*",
    "NEAR(a b)",
    "content: x",
    "^x",
    "a AND",
    "(",
    "-x",
    "coffee OR",  # full-text query syntax
    [],
    [None],
    [1, "a", {}],
    ["fact", "fact"],
    DEEP,
    {},
    {"a": 1},
    {"$ref": "#"},
    {"__proto__": {"x": 1}},
]


FOLD_ID = "seed-fold"
EPISODE_ID = "seed-episode"


def seed_turn(episode_id: str) -> Episode:
    """A turn with an id of our choosing (an ingested one gets a new id), for the valid calls."""
    at = "2026-11-30T10:00:00.000Z"
    return Episode(
        id=episode_id,
        namespace="default",
        conversation_id="seed-chat",
        role="user",
        source="ingest",
        content="We walked to the lighthouse",
        created_at=at,
        stored_at=at,
    )


def valid_arguments(ids: Iterator[str]) -> dict[str, dict[str, Any]]:
    """One valid call per tool; ``ids`` hands out seeded memories (calls may consume them)."""
    return {
        "memory_search": {"query": "coffee", "k": 5, "types": ["preference"]},
        "memory_recall": {"query": "coffee with oat milk", "min_score": 0.0},
        "conversation_search": {"query": "coffee", "roles": ["user"], "start_date": "2026-11-01", "limit": 5},
        "memory_list": {"limit": 5, "status": "active", "type": "preference"},
        "memory_get": {"id": next(ids)},
        "memory_export": {"namespace": "default"},
        "memory_boot": {"namespace": "default"},
        "diary_get": {"date": "2026-11-29"},
        "memory_upsert": {
            "fact_key": "user.tea",
            "content": "Likes jasmine tea",
            "type": "preference",
            "tags": ["drink"],
            "importance": 0.5,
            "confidence": 0.9,
            "pinned": False,
        },
        "memory_supersede": {"old_id": next(ids), "content": "Now drinks black coffee", "fact_key": "user.coffee.now"},
        "memory_archive": {"id": next(ids)},
        "memory_delete": {"id": next(ids)},
        "memory_ingest": {
            "messages": [
                {"role": "user", "content": "I went hiking", "id": "m1", "created_at": "2026-11-30T10:00:00Z"}
            ],
            "conversation_id": "c1",
        },
        "memory_pin": {"content": "You are my lighthouse.", "note": "said at the beach"},
        "glossary_set": {"term": "Moonbun", "aliases": ["moon bun"], "definition": "the cat"},
        "plan_list": {"status": "active", "limit": 5},
        "plan_update": {"id": next(ids), "status": "done"},
        "memory_share": {"memory_id": next(ids), "target_namespace": "family", "note": "for everyone"},
        "share_list": {"namespace": "default", "status": "approved", "limit": 5},
        "context_expand": {"fold_id": FOLD_ID},
        "memory_health": {},
        "memory_unanchored": {"namespace": "default", "limit": 5},
        "mood_log": {"label": "开心", "whose": "owner", "reason": "被夸了", "intensity": 0.7},
        "mood_recent": {"days": 7, "whose": "companion", "limit": 5},
        "night_dreams_recent": {"nights": 7, "limit": 5},
        "todo_add": {"text": "Sort the star map", "priority": 4, "due": "2026-12-24", "note": "by Friday"},
        "todo_done": {"id": next(ids)},  # a memory's id: not found, never a failure
        "todo_abandon": {"id": next(ids)},
        "person_upsert": {"name": "Ana", "aliases": ["my sister", "安娜"], "relation": "sister", "notes": "Porto"},
        "person_get": {"id": next(ids)},  # a memory's id: not found, never a failure
        "person_list": {"query": "my sister", "limit": 5},
        "person_merge": {"person_id": next(ids), "other_id": next(ids)},
        "todo_next": {"namespace": "default"},
        "todo_list": {"status": "open", "limit": 5},
        "todo_stats": {"namespace": "default"},
        "conversation_get": {"message_id": EPISODE_ID, "before": 2, "after": 2},
        # A span of a conversation that holds nothing: the seeded turn stays for the others.
        "conversation_forget": {
            "conversation_id": "none-such",
            "since": "2026-11-01T00:00:00Z",
            "until": "2026-11-02T00:00:00+08:00",
        },
        "persona_get": {"language": "zh"},
        "persona_tune": {"knob": "initiative", "delta": 0.05, "reason": "希望更主动"},
        "persona_revert": {"knob": "initiative", "reason": "back again"},
    }


def _limits(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """maxLength / maxItems / maximum of a property, through anyOf and $ref."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    found = {k: schema[k] for k in ("maxLength", "maxItems", "maximum", "minimum", "items") if k in schema}
    for option in schema.get("anyOf", ()):
        found = {**_limits(option, defs), **found}
    return found


def _oversized(limits: dict[str, Any], valid: Any) -> list[Any]:
    """Just over each limit, and exactly at it (valid input that stresses what lies behind)."""
    values: list[Any] = []
    if "maxLength" in limits:
        n = limits["maxLength"]
        values += ["x" * (n + 1), ("记住" * n)[:n], "y" * n]
    if "maxItems" in limits:
        n = limits["maxItems"]
        item = valid[0] if isinstance(valid, list) and valid else "x"
        values += [[item] * (n + 1), [item] * n]
        if isinstance(item, str):
            values.append([f"{item}{i}" for i in range(n)])
        elif isinstance(item, dict):
            values.append([{**item, "id": f"bulk-{i}", "content": f"message {i}"} for i in range(n)])
    if "maximum" in limits:
        values += [limits["maximum"] + 1, limits["maximum"]]
    if "minimum" in limits:
        values += [limits["minimum"] - 1, limits["minimum"]]
    return values


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and roll < 0.25:
        return {_random_key(rng): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if roll < 0.55:
        return rng.choice(JUNK[:-6])  # the scalars
    if roll < 0.7:
        return rng.choice([rng.randint(-(2**70), 2**70), rng.uniform(-1e6, 1e6), rng.randint(-3, 300)])
    alphabet = "abcxyz019 ._:-/\\\"'\n\t<>{}[]&%\u00e9\u8bb0\u4f4f\U0001f600\u0000\ud800"
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 5, 40, 300])))


def _random_key(rng: random.Random) -> str:
    return rng.choice(["namespace", "id", "query", "content", "messages", "x", "", "__class__", "k", "limit", "\ud800"])


def cases(name: str, tool: Tool, valid: dict[str, Any], seed: str, junk_share: int = 1) -> list[dict[str, Any]]:
    """The arguments to try for one tool: valid, missing, each field wrong, oversized, random."""
    schema = tool.input_schema
    defs, properties, required = schema.get("$defs", {}), schema["properties"], schema.get("required", [])
    found: list[dict[str, Any]] = [valid, {}, {**valid, "unexpected": 1}]
    found += [{k: v for k, v in valid.items() if k != field} for field in required]
    for field, prop in properties.items():
        limits = _limits(prop, defs)
        found += [{**valid, field: value} for value in JUNK[::junk_share]]
        found += [{**valid, field: value} for value in _oversized(limits, valid.get(field))]
        item = limits.get("items")
        if isinstance(item, dict) and "$ref" in item and valid.get(field):  # a list of objects: fuzz one inside
            inner = valid[field][0]
            inner_schema = defs[item["$ref"].rsplit("/", 1)[-1]]
            for inner_field, inner_prop in inner_schema["properties"].items():
                values = JUNK[:: junk_share * 2] + _oversized(_limits(inner_prop, defs), inner.get(inner_field))
                found += [{**valid, field: [{**inner, inner_field: value}]} for value in values]
                found.append({**valid, field: [{k: v for k, v in inner.items() if k != inner_field}]})
    rng = random.Random(f"{seed}:{name}")
    for _ in range(12):
        chosen = rng.sample(sorted(properties), rng.randint(0, len(properties)))
        arguments = {
            field: (valid[field] if field in valid and rng.random() < 0.3 else _random_value(rng)) for field in chosen
        }
        if rng.random() < 0.3:
            arguments[_random_key(rng)] = _random_value(rng)
        found.append(arguments)
    return found


# --------------------------------------------------------------------------- the oracle


def problem(response: httpx.Response, *, key: str, tool: str | None, strict_json: bool = True) -> str | None:
    """What is wrong with this answer, if anything. ``strict_json`` is False for a body
    that is not strict JSON (NaN, a lone surrogate, nesting past the bound): a parse error."""
    if response.status_code >= 500:
        return f"HTTP {response.status_code}: {response.text[:300]}"
    if response.status_code == 202:
        return None if response.content == b"" else f"a 202 with a body: {response.text[:300]}"
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code} with a body that is not JSON: {response.text[:300]!r}"
    if response.status_code == 413:
        return None  # the body limit, before anything is read: answered in JSON-RPC
    answers = body if isinstance(body, list) else [body]
    for answer in answers:
        if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
            return f"not a JSON-RPC answer: {str(answer)[:300]}"
        if "error" in answer:
            code = answer["error"].get("code")
            if code == jsonrpc.INTERNAL_ERROR:
                return f"JSON-RPC internal error: {answer['error']}"
            if not strict_json and code == jsonrpc.PARSE_ERROR:
                continue
            if tool is not None and code != jsonrpc.FORBIDDEN:
                return f"a tools/call with an object of arguments answered with a JSON-RPC error: {answer['error']}"
            continue
        result = answer.get("result")
        if tool is None or not isinstance(result, dict) or "isError" not in result:
            continue
        error = (result.get("structuredContent") or {}).get("error") or {}
        if result["isError"] and error.get("code") == "internal_error":
            return f"internal_error result: {error}"
        refused = result["isError"] and error.get("code") == "forbidden"
        if not may_call(key, tool) and not refused:
            return f"SCOPE LEAK: the key lacks the scope of {tool} and was not refused: {str(result)[:300]}"
        if may_call(key, tool) and refused:
            return f"the key has the scope of {tool} and was refused: {error}"
    if response.status_code == 403:
        refused_key = tool is None or not may_call(key, tool)
        return None if refused_key else "the endpoint refused a key that may call this tool"
    return None


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
async def runtime(backend: str) -> Runtime:
    runtime = await fast_runtime()
    if backend == "d1":
        runtime.db = make_d1_database()
        await apply_migrations(runtime.db, load_migrations(default_migrations_dir()))
    return runtime


@pytest.fixture
async def http(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app_on(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


async def seed(http: httpx.AsyncClient, count: int) -> Iterator[str]:
    """Memories to read, supersede, archive and delete, and something in every other table."""
    ids = []
    for i in range(count):
        response = await http.post(
            "/v1/memories",
            headers=auth(OWNER_KEY),
            json={
                "fact_key": f"seed.{i}",
                "content": f"Seed memory {i}: takes her coffee with oat milk",
                "type": "preference",
                "tags": ["seed"],
            },
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["memory"]["id"])
    plan = {"fact_key": "seed.plan", "content": "周末去看海", "type": "plan", "valid_to": "2026-12-06"}
    response = await http.post("/v1/memories", headers=auth(OWNER_KEY), json=plan)
    assert response.status_code == 201, response.text
    ids.append(response.json()["memory"]["id"])
    for path, body in (
        ("/v1/precious", {"content": "You are my lighthouse."}),
        ("/v1/glossary", {"term": "Moonbun", "aliases": ["moon bun"], "definition": "the cat"}),
        ("/v1/ingest/messages", {"messages": [{"role": "user", "content": "记住我喜欢燕麦奶"}]}),
    ):
        assert (await http.post(path, json=body, headers=auth(OWNER_KEY))).is_success

    runtime: Runtime = http._transport.app.state.runtime  # type: ignore[attr-defined]
    await runtime.db.batch([FoldStore.insert(fold_row(FOLD_ID))])
    await runtime.db.batch([EpisodeStore.insert_if_new(seed_turn(EPISODE_ID))])

    def cycle() -> Iterator[str]:
        while True:
            yield from ids
            yield "no-such-memory"

    return cycle()


def report(failures: list[str]) -> str:
    shown = "\n".join(failures[:25])
    return f"{len(failures)} fuzz failures:\n{shown}"


# --------------------------------------------------------------------------- the fuzz

# Every junk value for the owner and the MCP key; every other one for the debug and IM keys
# (the owner's and the MCP key's scopes as far as the tools go), every third for the guide
# dog's, which is refused before its arguments are read. Keeps the file well under 30 s.
JUNK_SHARE = {"owner": 1, "debug": 2, "im": 2, "mcp": 1, "guide_dog": 3}


@pytest.mark.parametrize("key_name, backend", [*((k, "sqlite") for k in KEYS), ("owner", "d1")])
async def test_fuzz_every_tool_under_each_key(http: httpx.AsyncClient, key_name: str) -> None:
    key = KEYS[key_name]
    ids = await seed(http, 6)
    failures: list[str] = []
    calls = 0
    for name, tool in TOOLS.items():
        valid = valid_arguments(ids)[name]
        for index, arguments in enumerate(cases(name, tool, valid, key_name, JUNK_SHARE[key_name])):
            era = ERAS[index % len(ERAS)]  # legacy, modern, ?token=: the case's index picks
            response = await mcp_call(http, key, name, arguments, era=era, request_id=index)
            calls += 1
            found = problem(
                response, key=key, tool=name, strict_json=json_problem(arguments, max_depth=MAX_BODY_DEPTH - 3) is None
            )
            if found:
                failures.append(f"{name} [{era}] {json.dumps(arguments)[:200]}: {found}")
    assert calls > 500
    assert not failures, report(failures)


# Envelopes: what arrives around the arguments.
IDS: list[Any] = [0, -1, 2**64, 10**300, "", "\ud800", "x" * 10_000, "🦊"]
NAMES: list[Any] = [
    "memory_list",
    "memory_export",
    "memory_teleport",
    "memory_create",
    "",
    "\ud800",
    "x" * 5000,
    12,
    None,
    ["memory_list"],
    {"name": "memory_list"},
]
METHODS: list[Any] = [
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "server/discover",
    "resources/read",
    "prompts/get",
    "\ud800",
    "",
    "x" * 5000,
    "tools/call\x00",
]
PARAMS: list[Any] = [
    None,
    {},
    [],
    "x",
    7,
    {"name": "memory_list", "arguments": None},
    {"name": "memory_list", "arguments": []},
    {"name": "memory_list", "arguments": "a=1"},
    {"name": "memory_list", "arguments": DEEP},
    {"name": "memory_list", "arguments": {}, "_meta": "x"},
    {"name": "memory_list", "arguments": {}, "_meta": {**META, "io.modelcontextprotocol/protocolVersion": "\ud800"}},
    {"protocolVersion": 7},
    {"uri": {"x": 1}},
]


def envelopes(seed: str) -> Iterator[tuple[Any, dict[str, str]]]:
    rng = random.Random(seed)
    for request_id in IDS:
        yield (
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "memory_list", "arguments": {"limit": "x"}},
            },
            {},
        )
    for name in NAMES:
        yield {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}, {}
    for method in METHODS:
        for params in PARAMS:
            yield {"jsonrpc": "2.0", "id": "m", "method": method, "params": params}, {}
    for _ in range(60):
        body: Any = {k: _random_value(rng) for k in rng.sample(["jsonrpc", "id", "method", "params", "result"], 3)}
        if rng.random() < 0.5:
            body = {
                "jsonrpc": "2.0",
                "id": rng.choice(IDS),
                "method": rng.choice(METHODS),
                "params": rng.choice(PARAMS),
            }
        if rng.random() < 0.2:
            body = [body, _random_value(rng)]
        headers = {}
        if rng.random() < 0.5:
            headers = {
                "MCP-Protocol-Version": rng.choice([MODERN, "2025-03-26", "2025-11-25", "1999-01-01", "x"]),
                "Mcp-Method": str(rng.choice(METHODS)).encode("ascii", "replace").decode()[:100],
                "Mcp-Name": rng.choice(["memory_list", "=?base64?bWVtb3J5X2xpc3Q=?=", "=?base64?!!?=", ""]),
            }
        yield body, headers


@pytest.mark.parametrize("key_name", ["owner", "mcp", "guide_dog"])
async def test_fuzz_the_json_rpc_envelope(http: httpx.AsyncClient, key_name: str) -> None:
    key = KEYS[key_name]
    failures: list[str] = []
    for body, headers in envelopes(f"envelope:{key_name}"):
        for era_headers in (
            {},
            {"MCP-Protocol-Version": "2025-03-26"},
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"},
        ):
            sent = {"Content-Type": "application/json", **auth(key), **era_headers, **headers}
            response = await http.post("/mcp", content=json.dumps(body).encode(), headers=sent)
            found = problem(response, key=key, tool=None)
            if found:
                failures.append(f"{json.dumps(body)[:200]} {headers}: {found}")
    assert not failures, report(failures)


# ----------------------------------------------- failures no input provokes today, provoked


class Unserialisable:
    pass


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def _circular() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


class Anything(BaseModel):
    model_config = ConfigDict(extra="allow")


def answering(monkeypatch: pytest.MonkeyPatch, result: dict[str, Any]) -> None:
    """memory_list answers ``result``, unchecked, as a use case with a bug might."""

    async def run(*_: Any) -> Anything:
        return Anything.model_construct(**result)

    case = UseCase(
        name="test.anything",
        scope=MEMORY_READ,
        input=Input,
        output=Anything,
        run=run,
        confinement=Confinement.of(Input),
    )
    monkeypatch.setitem(
        TOOLS, "memory_list", dataclasses.replace(TOOLS["memory_list"], translate=lambda _: (case, Input()))
    )


@pytest.mark.parametrize(
    "result", [_nested(5000), _circular(), {"x": Unserialisable()}], ids=["deep", "circular", "object"]
)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_result_that_cannot_be_serialised_is_an_internal_error_result(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, result: dict[str, Any], era: str
) -> None:
    """Serialising the result is part of the call: its failure is the tool's, never a 500."""

    answering(monkeypatch, result)
    response = await mcp_call(http, MCP_KEY, "memory_list", {}, era=era, request_id=9)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["id"] == 9 and answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"]["error"]["code"] == "internal_error"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_nan_and_infinity_in_a_result_are_null_as_on_rest(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    answering(monkeypatch, {"scores": [float("nan"), float("inf"), float("-inf"), 0.5]})
    response = await mcp_call(http, MCP_KEY, "memory_list", {}, era=era)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is False and result["structuredContent"] == {"scores": [None, None, None, 0.5]}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


async def test_a_lone_surrogate_in_a_result_is_escaped_not_a_500(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    answering(monkeypatch, {"content": "half a pair: \ud83d"})
    response = await mcp_call(http, MCP_KEY, "memory_list", {})
    assert response.status_code == 200 and b"\\ud83d" in response.content
    assert response.json()["result"]["structuredContent"] == {"content": "half a pair: \ud83d"}


@pytest.mark.parametrize("request_id", ["\ud800", "a\udfffb"])
async def test_a_lone_surrogate_id_or_method_is_a_parse_error(http: httpx.AsyncClient, request_id: str) -> None:
    """JSON may escape a lone surrogate, but it is not Unicode text: the body is refused as
    REST refuses it, with the JSON-RPC parse error, not a 500."""
    for body in (
        {"jsonrpc": "2.0", "id": request_id, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": f"tools/{request_id}"},
    ):
        response = await http.post(
            "/mcp", content=json.dumps(body).encode(), headers={**auth(MCP_KEY), "Content-Type": "application/json"}
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == jsonrpc.PARSE_ERROR and "surrogate" in error["message"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_failure_outside_the_tools_is_a_json_rpc_error_with_the_id(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    async def broken(*_: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(rpc, "_dispatch", broken)
    response = await mcp_call(http, MCP_KEY, "memory_list", {}, era=era, request_id="r1")
    assert response.status_code == 200, response.text
    error = response.json()["error"]
    assert response.json()["id"] == "r1" and error["code"] == jsonrpc.INTERNAL_ERROR and "boom" not in error["message"]
    batch = await http.post(
        "/mcp",
        json=[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}],
        headers={**auth(MCP_KEY), "MCP-Protocol-Version": "2025-03-26"},
    )
    assert batch.status_code == 200
    assert [(a["id"], a.get("error", {}).get("code")) for a in batch.json()] == [(1, jsonrpc.INTERNAL_ERROR), (2, None)]


async def test_a_failure_before_the_request_id_is_known_is_still_json_rpc(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(rpc, "_is_modern", broken)
    response = await mcp_call(http, MCP_KEY, "memory_list", {})
    assert response.status_code == 500
    assert response.json()["error"]["code"] == jsonrpc.INTERNAL_ERROR and response.json()["id"] is None


# Rows written before values were checked (or by hand): every tool still answers in JSON-RPC.
POISONS = {
    "evidence nested 100000 deep": ("evidence", "[" * 100_000 + "]" * 100_000),
    "tags not JSON": ("tags", "not json"),
    "importance infinite": ("importance", float("inf")),
}


@pytest.mark.parametrize("poison", list(POISONS))
async def test_a_poisoned_row_never_makes_a_tool_answer_outside_json_rpc(
    http: httpx.AsyncClient, runtime: Runtime, poison: str
) -> None:
    ids = await seed(http, 5)
    first = next(ids)
    column, value = POISONS[poison]
    await runtime.db.run(f"UPDATE memories SET {column} = ? WHERE id = ?", (value, first))
    arguments = valid_arguments(itertools.repeat(first))
    for era in ("legacy", "modern"):
        for name in TOOLS:
            response = await mcp_call(http, OWNER_KEY, name, arguments[name], era=era)
            assert response.status_code == 200, (name, era, response.text)
            result = response.json()["result"]
            assert isinstance(result["isError"], bool) and result["content"][0]["type"] == "text", (name, result)
            if column == "importance" and name == "memory_get":  # served as REST serves it
                assert result["structuredContent"]["memory"]["importance"] is None, result
