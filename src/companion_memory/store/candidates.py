"""SQL for the review queue: memory candidates waiting for the owner."""

from __future__ import annotations

from typing import Any

from ..domain.candidate import CANDIDATE_FIELDS, Candidate
from ..domain.memory import Evidence
from ..ports import Database, Statement
from .pagination import decode_cursor, page_of
from .sql import chunks, from_json, placeholders, to_json

_SELECT = f"SELECT {', '.join(CANDIDATE_FIELDS)} FROM memory_candidates"


def _candidate(row: dict[str, Any]) -> Candidate:
    return Candidate(
        **{
            **row,
            "evidence": [Evidence.from_dict(e) for e in from_json(row["evidence"], [])],
            "source_message_ids": from_json(row["source_message_ids"], []),
        }
    )


def _stored(candidate: Candidate, column: str) -> Any:
    if column == "evidence":
        return to_json([e.as_dict() for e in candidate.evidence])
    if column == "source_message_ids":
        return to_json(candidate.source_message_ids)
    return getattr(candidate, column)


class CandidateStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(candidate: Candidate) -> Statement:
        return Statement(
            f"INSERT INTO memory_candidates ({', '.join(CANDIDATE_FIELDS)}) VALUES ({placeholders(len(CANDIDATE_FIELDS))})",
            tuple(_stored(candidate, c) for c in CANDIDATE_FIELDS),
        )

    async def get(self, candidate_id: str) -> Candidate | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (candidate_id,))
        return _candidate(row) if row else None

    async def page(
        self, namespace: str, status: str, *, limit: int, cursor: str | None
    ) -> tuple[list[Candidate], str | None]:
        where, params = "namespace = ? AND status = ?", [namespace, status]
        if cursor:
            created_at, id_ = decode_cursor(cursor)
            where += " AND (created_at < ? OR (created_at = ? AND id < ?))"
            params += [created_at, created_at, id_]
        rows = await self.db.all(
            f"{_SELECT} WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit + 1)
        )
        page, next_cursor = page_of(rows, limit, "created_at")
        return [_candidate(r) for r in page], next_cursor

    async def count(self, namespace: str, status: str) -> int:
        row = await self.db.first(
            "SELECT COUNT(*) AS n FROM memory_candidates WHERE namespace = ? AND status = ?", (namespace, status)
        )
        return int(row["n"]) if row else 0

    async def pending_with_content(self, namespace: str, contents: list[str]) -> set[str]:
        """Which of ``contents`` a pending candidate of the namespace already proposes, word for word."""
        found: set[str] = set()
        for chunk in chunks(sorted(set(contents))):
            rows = await self.db.all(
                "SELECT DISTINCT content FROM memory_candidates WHERE namespace = ? AND status = 'pending' "
                f"AND content IN ({placeholders(len(chunk))})",
                (namespace, *chunk),
            )
            found.update(row["content"] for row in rows)
        return found

    async def pending_contradiction(self, older_id: str, newer_id: str) -> bool:
        row = await self.db.first(
            "SELECT id FROM memory_candidates WHERE kind = 'contradiction' AND status = 'pending' "
            "AND target_memory_id = ? AND result_memory_id = ?",
            (older_id, newer_id),
        )
        return row is not None

    @staticmethod
    def both_stand(older_id: str, newer_id: str, at: str) -> Statement:
        """Close the open contradiction about this pair: neither memory is set aside."""
        return Statement(
            "UPDATE memory_candidates SET status = 'discarded', reason = ?, reviewed_at = ?, updated_at = ? "
            "WHERE kind = 'contradiction' AND status = 'pending' AND target_memory_id = ? AND result_memory_id = ?",
            ("both stand: the contradicts edge was removed", at, at, older_id, newer_id),
        )

    async def claim(self, candidate_id: str, status: str, at: str) -> bool:
        """Move a pending candidate to ``status``; False when it was not pending (any more)."""
        result = await self.db.run(
            "UPDATE memory_candidates SET status = ?, reviewed_at = ?, updated_at = ? WHERE id = ? AND status = 'pending'",
            (status, at, at, candidate_id),
        )
        return result.changes == 1

    async def settle(self, candidate_id: str, result_memory_id: str | None, reason: str | None) -> None:
        await self.db.run(
            "UPDATE memory_candidates SET result_memory_id = ?, reason = COALESCE(?, reason) WHERE id = ?",
            (result_memory_id, reason, candidate_id),
        )

    async def release(self, candidate_id: str, at: str) -> None:
        """Back to pending after an approval that could not be applied."""
        await self.db.run(
            "UPDATE memory_candidates SET status = 'pending', reviewed_at = NULL, updated_at = ? WHERE id = ?",
            (at, candidate_id),
        )
