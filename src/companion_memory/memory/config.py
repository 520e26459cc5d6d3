"""The settings the memory services read, as plain values.

The edge builds one from its ``Settings`` (``Settings.memory_config()``), so the services
never import the settings model or its validation framework. Each field is the setting
of the same name, lower-cased, of the same type
(tests/architecture/test_settings_documented.py holds them to it), and is copied by that name: the defaults, bounds and meaning live on
``Settings`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..domain.layers import LayerPolicy


@dataclass(frozen=True)
class MemoryConfig:
    # Local days (the dream's, the diary's, the boot package's, GitHub daily's) are in this zone.
    dream_time_zone: str
    messages_retention_days: int
    # 0: kept for good.
    episode_retention_days: int

    # Writes, the dream and the review queue.
    memory_sensitive_allow: frozenset[str]
    dedup_cosine: float

    # Recall.
    memory_top_k: int
    memory_min_score: float
    memory_filter_max_candidates: int
    memory_filter_max_output: int
    memory_filter_min_score: float
    memory_filter_max_content_chars: int
    recall_min_score: float
    memory_inject_decay_window_min: int
    enable_memory_reranker: bool

    # The dream, the boot package and retention.
    dream_namespace: str
    dream_max_messages: int
    dream_max_runs: int
    dream_memory_context_limit: int
    empty_memory_min_chars: int

    # Nightly consolidation.
    consolidate_duplicate_cosine: float
    rule_importance_floor: float
    relation_half_life_days: float
    relation_drop_below: float
    # People: familiarity halves every this many days without a mention.
    people_familiarity_half_life_days: float
    # Her night dreams (nightly/night_dreams.py): on or off, and how many a night.
    night_dreams_enabled: bool
    night_dreams_per_night: int

    # Layers.
    memory_instant_awake_hours: float
    memory_instant_asleep_hours: float
    memory_instant_revivals: int
    memory_long_after_mentions: int
    memory_long_after_days: float
    memory_cold_after_days: float

    # Long-chat folding.
    context_fold_threshold_tokens: int
    context_fold_keep_turns: int
    # Shared memories (memory/shares.py).
    share_daily_nomination_cap: int

    # GitHub daily.
    github_daily_repo: str
    github_daily_path: str
    github_daily_namespace: str
    github_api_url: str
    # Kept out of the repr, which may end up in a log.
    github_daily_token: str = field(repr=False)

    @property
    def layer_policy(self) -> LayerPolicy:
        return LayerPolicy(
            instant_awake_hours=self.memory_instant_awake_hours,
            instant_asleep_hours=self.memory_instant_asleep_hours,
            instant_revivals=self.memory_instant_revivals,
            long_after_mentions=self.memory_long_after_mentions,
            long_after_days=self.memory_long_after_days,
            cold_after_days=self.memory_cold_after_days,
        )
