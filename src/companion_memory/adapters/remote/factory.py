"""Which remote embedder and reranker the settings ask for, if any."""

from __future__ import annotations

import httpx

from ...ports import Embedder, Reranker
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL, Settings
from ..workers_ai_format import workers_ai_model_name
from .openai_embeddings import OpenAIEmbedder
from .rerank_api import RerankAPI
from .workers_ai_rest import WorkersAIRestEmbedder, WorkersAIRestReranker


def _is_workers_ai(model: str) -> bool:
    try:
        workers_ai_model_name(model)
    except ValueError:
        return False
    return True


def remote_embedder(settings: Settings, http: httpx.AsyncClient) -> Embedder | None:
    """The embedder EMBEDDING_MODEL names when it is not the bundled one; ``None`` means
    "use the local bundled embedder".

    EMBEDDING_BASE_URL wins when set (an OpenAI-compatible server may well serve a model
    named ``@cf/...``); otherwise a Workers AI model goes over the REST API.
    """
    model = settings.EMBEDDING_MODEL.strip()
    bundled = model in ("", LOCAL_DEFAULT_EMBEDDING_MODEL)
    if settings.EMBEDDING_BASE_URL:
        if bundled:
            raise ValueError("EMBEDDING_BASE_URL is set, so EMBEDDING_MODEL must name the model that endpoint serves")
        return OpenAIEmbedder(
            http, settings.EMBEDDING_BASE_URL, settings.EMBEDDING_API_KEY, model, settings.EMBEDDING_DIMENSIONS
        )
    if bundled:
        return None
    if not _is_workers_ai(model):
        raise ValueError(
            f"EMBEDDING_MODEL={model!r} needs EMBEDDING_BASE_URL (an OpenAI-compatible /embeddings "
            f"endpoint); without it use {LOCAL_DEFAULT_EMBEDDING_MODEL!r} or a Workers AI model ('@cf/...')"
        )
    missing = [name for name in ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_API_TOKEN") if not getattr(settings, name)]
    if missing:
        raise ValueError(f"EMBEDDING_MODEL={model!r} runs on Workers AI, which needs {' and '.join(missing)}")
    return WorkersAIRestEmbedder(
        http,
        settings.CLOUDFLARE_ACCOUNT_ID,
        settings.CLOUDFLARE_API_TOKEN,
        model,
        dimensions=settings.EMBEDDING_DIMENSIONS,
    )


def remote_reranker(settings: Settings, http: httpx.AsyncClient) -> Reranker | None:
    """The reranker the settings configure, or ``None`` (no reranking, the fused order stands).

    MEMORY_RERANKER_BASE_URL wins; otherwise a Workers AI MEMORY_RERANKER_MODEL is used over
    REST when the Cloudflare account id and token are set, so locally reranking is off
    unless configured.
    """
    if not settings.ENABLE_MEMORY_RERANKER:
        return None
    model = settings.MEMORY_RERANKER_MODEL
    if settings.MEMORY_RERANKER_BASE_URL:
        return RerankAPI(http, settings.MEMORY_RERANKER_BASE_URL, settings.MEMORY_RERANKER_API_KEY, model)
    if _is_workers_ai(model) and settings.CLOUDFLARE_ACCOUNT_ID and settings.CLOUDFLARE_API_TOKEN:
        return WorkersAIRestReranker(http, settings.CLOUDFLARE_ACCOUNT_ID, settings.CLOUDFLARE_API_TOKEN, model)
    return None
