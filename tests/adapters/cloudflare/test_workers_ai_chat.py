"""Chat and the dream over the Worker's AI binding (``workers-ai/@cf/...`` models with no
account id or token), driven by the official openai SDK through the Worker's app."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import httpx
import openai
import pytest

from companion_memory.adapters.cloudflare.runtime import build_runtime
from companion_memory.api.app import create_app
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.runtime import Runtime
from tests.conftest import OWNER_KEY
from tests.fakes.d1 import FakeJsException
from tests.fakes.worker_env import migrate, worker_env

LLAMA = "workers-ai/@cf/meta/llama-3.3-70b-instruct-fp8-fast"


@pytest.fixture
async def worker() -> AsyncIterator[tuple[Runtime, SimpleNamespace, openai.AsyncOpenAI]]:
    env = worker_env(CHATBOX_API_KEY=OWNER_KEY, CHAT_MODEL=LLAMA, ENABLE_MEMORY_RERANKER="false")
    runtime = await build_runtime(env)
    await migrate(env)
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="https://worker.example") as http:
        yield (
            runtime,
            env,
            openai.AsyncOpenAI(
                api_key=OWNER_KEY, base_url="https://worker.example/v1", http_client=http, max_retries=0
            ),
        )


async def test_chat_answers_through_the_binding_with_memories(
    worker: tuple[Runtime, SimpleNamespace, openai.AsyncOpenAI],
) -> None:
    runtime, env, client = worker
    await runtime.writer.upsert(
        "default",
        MemoryDraft(content="The user's dog is called Mochi", fact_key="dog.name"),
        Actor("owner", owner=True),
    )
    env.AI.chat_replies.append("Mochi sounds lovely!")
    answer = await client.chat.completions.create(
        model="companion", messages=[{"role": "user", "content": "what is my dog called"}]
    )
    assert answer.choices[0].message.content == "Mochi sounds lovely!" and answer.model == "companion"
    model, inputs = env.AI.calls[-1]
    assert model == "@cf/meta/llama-3.3-70b-instruct-fp8-fast" and "stream" not in inputs
    assert "Mochi" in inputs["messages"][-1]["content"] and "<memories>" in inputs["messages"][-1]["content"]
    usage = await runtime.db.first("SELECT model, input_tokens, output_tokens FROM usage_logs")
    assert usage is not None and usage["output_tokens"] == 3


@pytest.mark.parametrize("model", [LLAMA, "workers-ai/@cf/openai/gpt-oss-120b"])
async def test_streams_arrive_as_openai_chunks(
    worker: tuple[Runtime, SimpleNamespace, openai.AsyncOpenAI], model: str
) -> None:
    _, env, client = worker
    env.AI.chat_replies.append("Once upon a time, a very small robot")
    stream = await client.chat.completions.create(
        model=model,
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "tell me a story"}],
    )
    pieces, finish, usage = [], None, None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage:
            usage = chunk.usage
    assert "".join(pieces) == "Once upon a time, a very small robot" and len(pieces) > 3
    assert finish == "stop" and usage is not None and usage.completion_tokens == 8
    assert env.AI.calls[-1][1]["stream"] is True


async def test_binding_errors_keep_their_meaning(worker: tuple[Runtime, SimpleNamespace, openai.AsyncOpenAI]) -> None:
    _, env, client = worker
    env.AI.chat_failures.append(
        FakeJsException("3040: Capacity temporarily exceeded, please try again.", name="AiError")
    )
    with pytest.raises(openai.RateLimitError, match="Capacity"):
        await client.chat.completions.create(model="companion", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.create(
            model="workers-ai/@cf/nobody/none", messages=[{"role": "user", "content": "hi"}]
        )


async def test_the_default_dream_model_runs_on_the_binding(
    worker: tuple[Runtime, SimpleNamespace, openai.AsyncOpenAI],
) -> None:
    runtime, env, _ = worker
    yesterday = datetime.now(UTC) - timedelta(days=1)
    await runtime.ingestor.ingest(
        "default",
        [IncomingMessage(role="user", content="I started learning the cello today!", created_at=yesterday.isoformat())],
    )
    env.AI.chat_replies.append(
        json.dumps(
            {
                "title": "Cello",
                "summary": "Started the cello.",
                "add": [
                    {"content": "Is learning the cello", "type": "habit", "evidence": ["started learning the cello"]}
                ],
            }
        )
    )
    assert runtime.dream.extractor.name == "model:@cf/openai/gpt-oss-120b"
    [report] = await runtime.dream.night()
    assert report["status"] == "succeeded" and [c["content"] for c in report["candidates"]] == ["Is learning the cello"]
    assert "@cf/openai/gpt-oss-120b" in [model for model, _ in env.AI.calls]
