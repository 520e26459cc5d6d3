"""The chat gateway with real clients: the official openai SDK against our server on a
real port, and a local provider (tests/upstreams.py) that records what it receives."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import openai
import pytest

from companion_memory.clock import local_date
from companion_memory.settings import Settings
from tests.conftest import GUIDE_DOG_KEY, MCP_KEY, OWNER_KEY
from tests.live_server import LiveServer
from tests.upstreams import RecordingUpstream


def start(tmp_path: Path, embedder, **settings: object) -> LiveServer:  # type: ignore[no-untyped-def]
    values = {
        "CHATBOX_API_KEY": OWNER_KEY,
        "MEMORY_MCP_API_KEY": MCP_KEY,
        "GUIDE_DOG_API_KEY": GUIDE_DOG_KEY,
        "CHAT_MODEL": "deepseek/deepseek-v4-pro",
        "VISION_MODEL": "google/gemma-vision",
        "UPSTREAM_TIMEOUT_SECONDS": 5,
        **settings,
    }
    return LiveServer(Settings(**values), tmp_path / "data", embedder)


@pytest.fixture
def server(tmp_path: Path, embedder, upstream: RecordingUpstream) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    live = start(tmp_path, embedder, CHAT_BASE_URL=upstream.url + "/v1")
    yield live
    live.stop()


def client(server: LiveServer, key: str = OWNER_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0)


def rows(server: LiveServer, sql: str) -> list[tuple]:
    """Read the server's database the way a person would, from outside."""
    deadline = time.monotonic() + 5
    with sqlite3.connect(server.runtime.db.path) as db:  # type: ignore[attr-defined]
        while True:
            found = db.execute(sql).fetchall()
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


def remember(server: LiveServer, fact_key: str, content: str) -> None:
    response = httpx.post(
        server.url + "/v1/memories",
        json={"fact_key": fact_key, "content": content},
        headers={"Authorization": f"Bearer {OWNER_KEY}"},
    )
    assert response.status_code == 201, response.text


def test_models_lists_the_public_name(server: LiveServer) -> None:
    assert [m.id for m in client(server).models.list()] == ["companion"]


def test_a_turn_recalls_injects_answers_and_is_kept(server: LiveServer, upstream: RecordingUpstream) -> None:
    remember(server, "test.password", "My test password is apple-star-0428")
    upstream.reply_text = "Your test password is apple-star-0428."
    history = [
        {"role": "system", "content": "You are a warm companion."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hi! How are you?"},
        {"role": "user", "content": "What is my test password?"},
    ]
    answer = client(server).chat.completions.create(model="companion", messages=history)
    assert answer.choices[0].message.content == "Your test password is apple-star-0428."
    assert answer.model == "companion" and answer.usage and answer.usage.prompt_tokens > 0

    sent = upstream.requests[-1]
    assert sent.path == "/v1/chat/completions" and sent.json["model"] == "deepseek/deepseek-v4-pro"
    messages = sent.json["messages"]
    assert messages[:3] == history[:3]  # system and history untouched
    assert messages[3]["content"].startswith("What is my test password?\n\n<memories>")
    assert "apple-star-0428" in messages[3]["content"]

    stored = rows(server, "SELECT role, content, source FROM messages ORDER BY role DESC")
    assert stored == [
        ("user", "What is my test password?", "chat"),
        ("assistant", "Your test password is apple-star-0428.", "chat"),
    ]
    usage = rows(server, "SELECT model, provider, input_tokens, output_tokens FROM usage_logs")
    assert usage[0][0] == "deepseek/deepseek-v4-pro" and usage[0][2] > 0


def test_a_retried_turn_is_stored_once(server: LiveServer) -> None:
    messages = [{"role": "user", "content": "I adopted a kitten today"}]
    for _ in range(2):
        client(server).chat.completions.create(model="companion", messages=messages)
    time.sleep(0.3)
    assert len(rows(server, "SELECT id FROM messages")) == 2  # one user row, one reply


def test_streaming_forwards_chunks_as_they_come(server: LiveServer, upstream: RecordingUpstream) -> None:
    upstream.reply_text = "one two three four five six seven eight"
    upstream.chunk_size = 4
    upstream.hold_stream(after=2)  # the role chunk and the first words, then nothing until released
    stream = client(server).chat.completions.create(
        model="companion",
        messages=[{"role": "user", "content": "count for me"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    upstream_done_at_first_words, text, usage = None, "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            if upstream_done_at_first_words is None:
                upstream_done_at_first_words = upstream.requests[-1].completed
                upstream.release(None)
            text += chunk.choices[0].delta.content
        if chunk.usage:
            usage = chunk.usage
    assert text == "one two three four five six seven eight"
    assert usage is not None and usage.completion_tokens > 0
    # Not buffered to the end: the first words came while the provider was still holding the rest.
    assert upstream_done_at_first_words is False
    assert upstream.requests[-1].json["stream"] is True
    assert rows(server, "SELECT content FROM messages WHERE role = 'assistant'") == [(text,)]


def test_streaming_hides_usage_unless_asked(server: LiveServer) -> None:
    chunks = list(
        client(server).chat.completions.create(
            model="companion", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )
    assert chunks and all(c.usage is None for c in chunks)


async def test_the_async_client_works_too(server: LiveServer) -> None:
    async with openai.AsyncOpenAI(base_url=server.url + "/v1", api_key=OWNER_KEY, max_retries=0) as sdk:
        answer = await sdk.chat.completions.create(model="companion", messages=[{"role": "user", "content": "ping"}])
        assert answer.choices[0].message.content
        text = ""
        async for chunk in await sdk.chat.completions.create(
            model="companion", messages=[{"role": "user", "content": "pong"}], stream=True
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
        assert text


@pytest.mark.parametrize(
    "fault, status, error_type",
    [
        (lambda u: u.fail_with(500), 502, openai.InternalServerError),
        (lambda u: u.fail_with(429), 429, openai.RateLimitError),
        (lambda u: u.fail_with(401), 401, openai.AuthenticationError),
        (lambda u: u.malformed(), 502, openai.InternalServerError),
        (lambda u: u.fail_with(200, {"choices": ["not an object"]}), 502, openai.InternalServerError),
        (lambda u: u.fail_with(200, {"choices": [{"message": "text"}]}), 502, openai.InternalServerError),
        (lambda u: u.fail_with(200, {"choices": {"0": {}}}), 502, openai.InternalServerError),
        (lambda u: u.delay(8), 504, openai.InternalServerError),
    ],
)
def test_upstream_faults_become_openai_errors_and_the_message_is_kept(
    server: LiveServer,
    upstream: RecordingUpstream,
    fault,
    status,
    error_type,  # type: ignore[no-untyped-def]
) -> None:
    fault(upstream)
    with pytest.raises(error_type) as raised:
        client(server).chat.completions.create(
            model="companion", messages=[{"role": "user", "content": "are you there?"}]
        )
    assert raised.value.status_code == status
    assert raised.value.body and raised.value.body.get("message")  # type: ignore[union-attr]
    assert rows(server, "SELECT role, content FROM messages") == [("user", "are you there?")]


def test_a_stream_cut_midway_says_so(server: LiveServer, upstream: RecordingUpstream) -> None:
    upstream.reply_text = "a long answer that will not arrive in full"
    upstream.disconnect_mid_stream(after=2)
    with httpx.stream(
        "POST",
        server.url + "/v1/chat/completions",
        headers={"Authorization": f"Bearer {OWNER_KEY}"},
        json={"model": "companion", "messages": [{"role": "user", "content": "talk"}], "stream": True},
    ) as response:
        body = response.read().decode()
    assert response.status_code == 200 and '"error"' in body and body.rstrip().endswith("data: [DONE]")


def test_no_upstream_configured_is_a_clear_503(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    live = start(tmp_path, embedder)
    try:
        with pytest.raises(openai.APIStatusError) as raised:
            client(live).chat.completions.create(model="companion", messages=[{"role": "user", "content": "hi"}])
        assert raised.value.status_code == 503 and "AI_GATEWAY_BASE_URL" in str(raised.value)
    finally:
        live.stop()


@pytest.mark.parametrize(
    "body, named",
    [
        ({"model": "companion", "messages": []}, "messages"),
        ({"model": "companion"}, "messages"),
        ({"model": "companion", "messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ({"model": "companion", "messages": [{"role": "user", "content": 5}]}, "content"),
        ({"messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "companion", "messages": "hello"}, "messages"),
    ],
)
def test_invalid_requests_are_400(server: LiveServer, body: dict, named: str) -> None:
    response = httpx.post(
        server.url + "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {OWNER_KEY}"}
    )
    assert response.status_code == 400 and named in response.json()["error"]["message"]


def test_keys_and_scopes(server: LiveServer) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(server, "wrong").chat.completions.create(model="companion", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.PermissionDeniedError):
        client(server, MCP_KEY).chat.completions.create(model="companion", messages=[{"role": "user", "content": "x"}])


def test_guide_dog_forwards_images_and_keeps_nothing(server: LiveServer, upstream: RecordingUpstream) -> None:
    remember(server, "secret", "She keeps a diary in a blue notebook")
    dog = openai.OpenAI(base_url=server.url + "/v1/guide-dog", api_key=GUIDE_DOG_KEY, max_retries=0)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    answer = dog.chat.completions.create(
        model="companion",
        messages=[{"role": "user", "content": [{"type": "text", "text": "what is in the diary picture?"}, image]}],
    )
    assert answer.choices[0].message.content
    sent = upstream.requests[-1].json
    assert sent["model"] == "google/gemma-vision"
    assert "<memories>" not in str(sent["messages"])
    time.sleep(0.3)
    assert rows(server, "SELECT COUNT(*) FROM messages") == [(0,)]
    with pytest.raises(openai.PermissionDeniedError):
        openai.OpenAI(base_url=server.url + "/v1/guide-dog", api_key=MCP_KEY, max_retries=0).chat.completions.create(
            model="companion", messages=[{"role": "user", "content": "x"}]
        )


def test_the_guide_dog_key_cannot_choose_the_model(server: LiveServer, upstream: RecordingUpstream) -> None:
    dog = openai.OpenAI(base_url=server.url + "/v1/guide-dog", api_key=GUIDE_DOG_KEY, max_retries=0)
    dog.chat.completions.create(model="some-expensive-model", messages=[{"role": "user", "content": "what is this?"}])
    assert upstream.requests[-1].json["model"] == "google/gemma-vision"


def test_listing_models_needs_a_chat_key(server: LiveServer) -> None:
    assert httpx.get(server.url + "/v1/models").status_code == 401
    with pytest.raises(openai.AuthenticationError):
        client(server, "not-a-key").models.list()
    with pytest.raises(openai.PermissionDeniedError):
        client(server, GUIDE_DOG_KEY).models.list()


def test_auto_memory_off_injects_nothing(tmp_path: Path, embedder, upstream: RecordingUpstream) -> None:  # type: ignore[no-untyped-def]
    live = start(tmp_path, embedder, CHAT_BASE_URL=upstream.url + "/v1", ENABLE_AUTO_MEMORY=False)
    try:
        remember(live, "test.password", "My test password is apple-star-0428")
        client(live).chat.completions.create(
            model="companion", messages=[{"role": "user", "content": "What is my test password?"}]
        )
        assert upstream.requests[-1].json["messages"][-1]["content"] == "What is my test password?"
    finally:
        live.stop()


def test_an_image_in_a_companion_request_goes_to_the_vision_model(
    server: LiveServer, upstream: RecordingUpstream
) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    client(server).chat.completions.create(
        model="companion", messages=[{"role": "user", "content": [{"type": "text", "text": "look"}, image]}]
    )
    sent = upstream.requests[-1].json
    assert sent["model"] == "google/gemma-vision"
    assert sent["messages"][-1]["content"][1] == image  # the picture goes through untouched


def _blocks(body: dict) -> list[str]:
    """The prompt as Anthropic caches it (tools, system, messages, in order) without the
    cache markers, one JSON string per block."""
    import json

    def plain(block: dict) -> str:
        return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, ensure_ascii=False)

    out = [plain(t) for t in body.get("tools", [])] + [plain(b) for b in body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out += [message["role"] + ":" + plain(b) for b in blocks]
    return out


# A day in an older week than the newest with a diary summary (2020-W47).
OLD_DAY = "2020-10-01T03:00:00Z"


def _markers(body: dict) -> list[str]:
    import json

    return [m for m in json.dumps(body).split('"cache_control"')[1:]]


def test_anthropic_route_keeps_the_cached_prefix_identical_across_turns(
    tmp_path: Path,
    embedder,
    upstream: RecordingUpstream,  # type: ignore[no-untyped-def]
) -> None:
    live = start(
        tmp_path,
        embedder,
        CHAT_MODEL="anthropic/claude-sonnet-4-5",
        AI_GATEWAY_BASE_URL=upstream.url,
        CF_AIG_TOKEN="gateway-token",
        ANTHROPIC_CACHE_USER_ID="mei-phone",
    )
    try:
        upstream.usage = {
            "input_tokens": 12,
            "output_tokens": 7,
            "cache_read_input_tokens": 3000,
            "cache_creation_input_tokens": 200,
        }
        tools = [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ]
        history = [{"role": "system", "content": "You are Mei's companion. Be warm and brief."}]
        # Something said in an older week, and that week's diary summary: its line rides in
        # the memories block of the turn that recalls it, like the memories themselves.
        said = {"role": "user", "content": "Mochi hid under the bed all through the typhoon", "created_at": OLD_DAY}
        httpx.post(
            live.url + "/v1/ingest/messages",
            json={"messages": [said]},
            headers={"Authorization": f"Bearer {OWNER_KEY}"},
        ).raise_for_status()
        with sqlite3.connect(live.runtime.db.path) as db:  # type: ignore[attr-defined]
            db.executemany(
                "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, "
                "updated_at) VALUES (?, 'default', ?, ?, ?, ?, ?, 'x', 'x')",
                [
                    ("w1", "2020-W40", "2020-09-28", "2020-10-04", "Week 2020-W40", "The typhoon week, indoors"),
                    ("w2", "2020-W47", "2020-11-16", "2020-11-22", "Week 2020-W47", "Exams"),
                ],
            )
        memories = [
            "She drinks oat-milk latte every morning",
            "Her cat Mochi is afraid of thunder",
            "She is training for a marathon",
        ]
        bodies = []
        for turn, (memory, question) in enumerate(
            zip(memories, ["what do I drink?", "is Mochi scared of storms?", "what am I training for?"], strict=False)
        ):
            remember(live, f"fact{turn}", memory)
            upstream.reply_text = f"Answer number {turn}."
            history.append({"role": "user", "content": question})
            answer = client(live).chat.completions.create(model="companion", messages=history, tools=tools)
            history.append({"role": "assistant", "content": answer.choices[0].message.content})
            request = upstream.requests[-1]
            assert request.path == "/anthropic/v1/messages"
            assert request.headers["cf-aig-authorization"] == "Bearer gateway-token"
            body = request.json
            bodies.append(body)
            assert body["model"] == "claude-sonnet-4-5" and body["metadata"] == {"user_id": "mei-phone"}
            assert 1 <= len(_markers(body)) <= 4
            last = body["messages"][-1]["content"][-1]
            assert "<memories>" in last["text"] and memory in last["text"] and "cache_control" not in last
            if "Mochi" in question:
                assert "Week 2020-W40 (the week of" in last["text"]
            assert answer.usage.prompt_tokens == 12 + 3000 + 200
        for earlier, later in itertools.pairwise(bodies):
            before = [b for b in _blocks(earlier) if "<memories>" not in b]
            assert _blocks(later)[: len(before)] == before  # byte-identical prefix, whatever was recalled
            assert not any("2020-W40" in block for block in before)
            assert earlier["system"] == later["system"] and earlier["tools"] == later["tools"]
        # The turn is kept after the answer is sent: wait for the last one.
        deadline = time.monotonic() + 10
        while (
            len(
                usage := rows(
                    live,
                    "SELECT provider, input_tokens, cache_read_tokens, cache_creation_tokens "
                    "FROM usage_logs ORDER BY id",
                )
            )
            < 3
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        assert len(usage) == 3 and usage[-1][2:] == (3000, 200)
    finally:
        live.stop()


def test_anthropic_stream_arrives_as_openai_chunks(tmp_path: Path, embedder, upstream: RecordingUpstream) -> None:  # type: ignore[no-untyped-def]
    live = start(tmp_path, embedder, CHAT_MODEL="anthropic/claude-sonnet-4-5", AI_GATEWAY_BASE_URL=upstream.url)
    try:
        upstream.reply_text = "Thunder makes Mochi hide under the bed."
        upstream.chunk_size, upstream.chunk_delay = 6, 0.1
        text, finish, usage = "", None, None
        for chunk in client(live).chat.completions.create(
            model="companion",
            messages=[{"role": "user", "content": "Mochi?"}],
            stream=True,
            stream_options={"include_usage": True},
        ):
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
            if chunk.usage:
                usage = chunk.usage
        assert text == "Thunder makes Mochi hide under the bed." and finish == "stop" and usage.completion_tokens > 0
        assert upstream.requests[-1].json["stream"] is True
    finally:
        live.stop()


def test_what_was_said_in_another_chat_is_injected_and_this_chat_is_not(
    server: LiveServer, upstream: RecordingUpstream
) -> None:
    upstream.reply_text = "What a sweet name for a kitten!"
    first = [{"role": "user", "content": "I adopted a kitten today, she is called Mochi"}]
    client(server).chat.completions.create(model="companion", messages=first)
    assert len(rows(server, "SELECT id FROM episodes")) == 2  # the turn is kept after the answer
    today = local_date(datetime.now(UTC), server.runtime.settings.DREAM_TIME_ZONE).isoformat()

    client(server).chat.completions.create(
        model="companion", messages=[{"role": "user", "content": "What is my kitten called?"}]
    )
    patch = upstream.requests[-1].json["messages"][-1]["content"]
    assert f"[said {today} by you] I adopted a kitten today, she is called Mochi" in patch
    assert f"[said {today} by me] What a sweet name for a kitten!" in patch

    # The same chat, going on: its turns are in the prompt already, none is injected again.
    going_on = [
        *first,
        {"role": "assistant", "content": "What a sweet name for a kitten!"},
        {"role": "user", "content": "Is Mochi a good kitten name?"},
    ]
    client(server).chat.completions.create(model="companion", messages=going_on)
    patch = upstream.requests[-1].json["messages"][-1]["content"]
    assert "I adopted a kitten today" not in patch.split("\n\n<memories>", 1)[-1]
    assert "What a sweet name" not in patch.split("\n\n<memories>", 1)[-1]
