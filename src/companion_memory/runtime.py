"""The Runtime: one set of ports per process, and the services built on them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .domain.scopes import MEMORY_READ, MEMORY_WRITE
from .gateway.boot import Boot
from .gateway.context import ContextAssembler
from .gateway.folding import ExtractiveFolds, Folding, FoldSummarizer, ModelFolds
from .gateway.ladder import Ladder
from .gateway.turn import ChatGateway
from .gateway.weeks import WeekBlocks
from .memory.candidates import CandidateReview
from .memory.config import MemoryConfig
from .memory.conversation_search import ConversationSearch
from .memory.doctor import Doctor
from .memory.episode_forget import EpisodeForgetter
from .memory.history_imports import HistoryImports
from .memory.ingest import MessageIngestor
from .memory.memories import MemoryWriter
from .memory.model_call import JobModel
from .memory.moods import Moods
from .memory.people.proposals import PersonProposals
from .memory.people.registry import People
from .memory.persona import Persona
from .memory.plans import Plans
from .memory.recall.pipeline import Recall
from .memory.retention import Retention
from .memory.shares import Sharing
from .memory.snapshot import Snapshots
from .memory.tasks import TaskRunner
from .memory.todos import Todos
from .memory.vector_mirror import VectorMirror
from .nightly.backfill import Backfill
from .nightly.consolidation import Consolidation
from .nightly.dream import Dream
from .nightly.dream_model import ModelExtractor
from .nightly.extraction import Extractor, RequestExtractor
from .nightly.job import Nightly
from .nightly.layers import Layers
from .nightly.night_dreams import DreamWriter, ModelDreams, NightDreams, TemplateDreams
from .nightly.rollups import Rollups
from .nightly.sources.github_daily import GithubDaily
from .nightly.summaries import JoinedSummaries, ModelSummaries
from .oauth.config import OAuthConfig
from .oauth.server import AuthorizationServer
from .pacing import HeavyReads
from .ports import (
    BackupStore,
    ChatRouter,
    Clock,
    Database,
    Embedder,
    HttpClient,
    Reranker,
    TaskQueue,
    UploadStore,
    UpstreamError,
    VectorIndex,
)
from .settings import Settings
from .store.history_imports import DatabaseUploads


@dataclass
class Runtime:
    settings: Settings
    db: Database
    vectors: VectorIndex
    embedder: Embedder
    clock: Clock
    # Reads a model label into the chat model that answers it (adapters/chat/routing.py,
    # built by each platform's runtime builder over its client for model providers).
    router: ChatRouter
    # Plain GETs out of the process: the GitHub contents API, and the metadata documents
    # when there is no ``public_http``.
    http: HttpClient
    reranker: Reranker | None = None
    # Background work (mirror retries, reindex, retention backlog); None runs it only
    # from the nightly job.
    queue: TaskQueue | None = None
    # Where a repair keeps its backup first; None (the Worker) keeps none.
    backups: BackupStore | None = None
    # For the URLs a stranger names (Client ID Metadata Documents): a client that connects
    # to public addresses only (the local server's pins each address it checked). None:
    # ``http`` as it is, which is right on the Worker, whose fetch reaches no private address.
    public_http: HttpClient | None = None
    # The request header in which the platform itself names the client's address, where a
    # client cannot set it: cf-connecting-ip on the Worker. None: the socket's peer (or,
    # behind TRUSTED_PROXIES, what they forwarded).
    client_address_header: str | None = None
    # Where an uploaded history export waits for its import: None keeps its parts in the
    # database (the Worker's way; the local server's keeps a file).
    uploads: UploadStore | None = None

    @property
    def config(self) -> MemoryConfig:
        """What the services read of the settings, taken when each service is first built."""
        return self.settings.memory_config()

    @cached_property
    def heavy_reads(self) -> HeavyReads:
        """The turns the heavy reads (star map, export, health report) take (pacing.py)."""
        return HeavyReads()

    @cached_property
    def mirror(self) -> VectorMirror:
        return VectorMirror(self.db, self.vectors, self.embedder, self.clock, self.queue)

    @cached_property
    def history_imports(self) -> HistoryImports:
        return HistoryImports(
            self.db,
            self.clock,
            self.ingestor,
            self.uploads or DatabaseUploads(self.db),
            self.queue,
            self.settings.DREAM_TIME_ZONE,
        )

    @cached_property
    def writer(self) -> MemoryWriter:
        return MemoryWriter(self.db, self.mirror, self.clock, self.config)

    @cached_property
    def ingestor(self) -> MessageIngestor:
        return MessageIngestor(self.db, self.clock, self.mirror)

    @cached_property
    def episode_forgetter(self) -> EpisodeForgetter:
        return EpisodeForgetter(self.db, self.mirror, self.clock)

    @cached_property
    def snapshots(self) -> Snapshots:
        return Snapshots(self.db, self.clock, self.mirror, self.heavy_reads)

    @cached_property
    def recall(self) -> Recall:
        return Recall(self.db, self.mirror, self.clock, self.config, self.reranker)

    @cached_property
    def conversation_search(self) -> ConversationSearch:
        return ConversationSearch(self.recall)

    @cached_property
    def sharing(self) -> Sharing:
        return Sharing(self.db, self.clock, self.config)

    @cached_property
    def plans(self) -> Plans:
        return Plans(self.db, self.mirror, self.clock, self.config)

    @cached_property
    def layers(self) -> Layers:
        return Layers(self.db, self.mirror, self.clock, self.config)

    @cached_property
    def moods(self) -> Moods:
        return Moods(self.db, self.clock, self.config)

    @cached_property
    def persona(self) -> Persona:
        return Persona(self.db, self.clock, self.settings.PERSONA_LANGUAGE)

    @cached_property
    def people(self) -> People:
        return People(self.db, self.clock, self.config)

    @cached_property
    def person_proposals(self) -> PersonProposals:
        return PersonProposals(self.db, self.people)

    @cached_property
    def todos(self) -> Todos:
        return Todos(self.db, self.clock, self.config)

    @cached_property
    def ladder(self) -> Ladder:
        return Ladder(self.db, self.clock, self.settings.DREAM_TIME_ZONE, self.settings.IMPRESSION_LADDER_MAX_CHARS)

    @cached_property
    def context(self) -> ContextAssembler:
        return ContextAssembler(
            self.db,
            self.clock,
            self.settings.CONTEXT_BUDGET_TOKENS,
            self.settings.DREAM_TIME_ZONE,
            self.plans,
            self.todos,
            self.ladder,
            WeekBlocks(self.db, self.settings.RECALL_WEEK_LINES),
        )

    @cached_property
    def boot(self) -> Boot:
        return Boot(
            self.db,
            self.clock,
            self.config,
            self.plans,
            self.ladder,
            self.context,
            self.moods,
            self.todos,
            self.people,
            self.persona,
        )

    @cached_property
    def folding(self) -> Folding:
        summarizer: FoldSummarizer = ModelFolds(self.dream_model) if self.dream_model else ExtractiveFolds()
        return Folding(self.db, self.clock, self.config, summarizer)

    @cached_property
    def gateway(self) -> ChatGateway:
        return ChatGateway(
            self.db,
            self.recall,
            self.context,
            self.ingestor,
            self.clock,
            self.router,
            self.persona,
            auto_memory=self.settings.ENABLE_AUTO_MEMORY,
            folding=self.folding if self.settings.CONTEXT_FOLD_ENABLED else None,
        )

    @cached_property
    def github_daily(self) -> GithubDaily:
        return GithubDaily(self.db, self.ingestor, self.clock, self.config, self.http)

    @cached_property
    def oauth(self) -> AuthorizationServer:
        config = OAuthConfig(
            scopes=(MEMORY_READ, MEMORY_WRITE),
            access_token_minutes=self.settings.OAUTH_ACCESS_TOKEN_MINUTES,
            refresh_token_days=self.settings.OAUTH_REFRESH_TOKEN_DAYS,
            registrations_per_hour=self.settings.OAUTH_REGISTRATIONS_PER_HOUR,
        )
        return AuthorizationServer(self.db, self.clock, self.public_http or self.http, config)

    @cached_property
    def candidates(self) -> CandidateReview:
        return CandidateReview(self.db, self.writer, self.mirror, self.clock, self.config)

    @cached_property
    def retention(self) -> Retention:
        return Retention(self.db, self.mirror, self.clock, self.config)

    @cached_property
    def dream_model(self) -> JobModel | None:
        """DREAM_MODEL when its provider is configured. Without it the dream and the
        rollups work model-free, so the embedded default dreams too."""
        try:
            chosen = self.router.route(self.settings.DREAM_MODEL)
        except UpstreamError:
            return None
        return JobModel(chosen.chat_model, chosen.model)

    @cached_property
    def rollups(self) -> Rollups:
        summarizer = ModelSummaries(self.dream_model) if self.dream_model else JoinedSummaries()
        return Rollups(self.db, self.clock, self.config, summarizer, self.dream)

    @cached_property
    def dream(self) -> Dream:
        extractor: Extractor = (
            ModelExtractor(self.dream_model, self.settings.DREAM_MAX_TOKENS) if self.dream_model else RequestExtractor()
        )
        return Dream(self.db, self.writer, self.mirror, self.clock, self.config, extractor, self.dream_model)

    @cached_property
    def night_dreams(self) -> NightDreams:
        writer: DreamWriter = ModelDreams(self.dream_model) if self.dream_model else TemplateDreams()
        return NightDreams(self.db, self.clock, self.config, writer)

    @cached_property
    def backfill(self) -> Backfill:
        return Backfill(self.dream)

    @cached_property
    def tasks(self) -> TaskRunner:
        return TaskRunner(self.mirror, self.retention, self.history_imports, self.queue)

    @cached_property
    def consolidation(self) -> Consolidation:
        return Consolidation(self.db, self.mirror, self.writer, self.clock, self.config)

    @cached_property
    def nightly(self) -> Nightly:
        return Nightly(
            self.db,
            self.clock,
            self.dream,
            self.retention,
            self.plans,
            self.layers,
            self.consolidation,
            self.people,
            self.github_daily,
            self.rollups,
            self.tasks,
            self.night_dreams,
        )

    @cached_property
    def doctor(self) -> Doctor:
        return Doctor(self.db, self.mirror, self.plans, self.nightly.last_run, self.heavy_reads)
