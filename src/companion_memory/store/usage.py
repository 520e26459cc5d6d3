"""SQL for usage logs: one row per upstream chat call."""

from __future__ import annotations

from ..domain.counts import clamped
from ..ports import ChatUsage, Database


class UsageStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, namespace: str, model: str, provider: str, usage: ChatUsage, latency_ms: int, at: str) -> None:
        # The counts are the provider's word: kept within the bound every stored integer keeps.
        await self.db.run(
            "INSERT INTO usage_logs (namespace, model, provider, input_tokens, output_tokens, cache_read_tokens, "
            "cache_creation_tokens, latency_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                namespace,
                model,
                provider,
                clamped(usage.input_tokens),
                clamped(usage.output_tokens),
                clamped(usage.cache_read_tokens),
                clamped(usage.cache_creation_tokens),
                clamped(latency_ms),
                at,
            ),
        )
