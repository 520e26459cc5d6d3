"""The Runtime: one set of ports per process, and the services built on them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import httpx

from .memory.boot import Boot
from .memory.dream import Dream
from .memory.dream_model import ModelExtractor
from .memory.extraction import Extractor, RequestExtractor
from .memory.ingest import MessageIngestor
from .memory.nightly import Nightly
from .memory.recall import Recall
from .memory.retention import Retention
from .memory.rollups import Rollups
from .memory.review import ReviewQueue
from .memory.snapshot import Snapshots
from .memory.vector_mirror import VectorMirror
from .memory.writes import MemoryWriter
from .proxy.gateway import ChatGateway
from .proxy.routing import route
from .ports import Clock, Database, Embedder, Reranker, UpstreamError, VectorIndex
from .settings import Settings

@dataclass
class Runtime:
    settings: Settings
    db: Database
    vectors: VectorIndex
    embedder: Embedder
    clock: Clock
    reranker: Reranker | None = None
    # The client for model providers; made on first use when the runtime has none.
    http: httpx.AsyncClient | None = None

    @cached_property
    def mirror(self) -> VectorMirror:
        return VectorMirror(self.db, self.vectors, self.embedder, self.clock)

    @cached_property
    def writer(self) -> MemoryWriter:
        return MemoryWriter(self.db, self.mirror, self.clock, self.settings)

    @cached_property
    def ingestor(self) -> MessageIngestor:
        return MessageIngestor(self.db, self.clock)

    @cached_property
    def snapshots(self) -> Snapshots:
        return Snapshots(self.db, self.clock)

    @cached_property
    def recall(self) -> Recall:
        return Recall(self.db, self.mirror, self.clock, self.settings, self.reranker)

    @cached_property
    def boot(self) -> Boot:
        return Boot(self.db, self.clock, self.settings)

    @cached_property
    def gateway(self) -> ChatGateway:
        http = self.http or httpx.AsyncClient(timeout=httpx.Timeout(self.settings.UPSTREAM_TIMEOUT_SECONDS, connect=10.0))
        return ChatGateway(self.db, self.recall, self.ingestor, self.clock, self.settings, http)

    @cached_property
    def review(self) -> ReviewQueue:
        return ReviewQueue(self.db, self.writer, self.mirror, self.clock, self.settings)

    @cached_property
    def retention(self) -> Retention:
        return Retention(self.db, self.mirror, self.clock, self.settings)

    @cached_property
    def rollups(self) -> Rollups:
        return Rollups(self.db, self.clock, self.settings)

    @cached_property
    def dream(self) -> Dream:
        return Dream(self.db, self.writer, self.mirror, self.clock, self.settings, self._dream_extractor())

    def _dream_extractor(self) -> Extractor:
        """DREAM_MODEL when its provider is configured; else the model-free extractor, so
        the embedded default dreams too."""
        try:
            chosen = route(self.settings.DREAM_MODEL, self.settings, self.gateway.http)
        except UpstreamError:
            return RequestExtractor()
        return ModelExtractor(chosen.chat_model, chosen.model, self.settings.DREAM_MAX_TOKENS)

    @cached_property
    def nightly(self) -> Nightly:
        return Nightly(self.dream, self.retention, self.rollups)
