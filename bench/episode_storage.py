"""What an episode costs to keep: bytes per episode on SQLite, and the D1 size it implies.

Every dialog turn of ../shared/data/locomo-dev.json (Maharana et al., "Evaluating Very
Long-Term Conversational Memory of LLM Agents", ACL 2024; snap-research/LoCoMo; CC BY-NC
4.0, non-commercial use, attribution required) goes through ``/v1/ingest/messages``'
ingestor into a file-backed SQLite database, session by session with its real date; the
outbox is then drained (with a constant embedder: storage, not the model, is measured).
SQLite's ``dbstat`` gives the pages of each table and index, so what the episodes hold
(the row, its indexes, the word and substring indexes) is told apart from the raw
message. D1 is SQLite and bills the database file's size, so the projection multiplies
the bytes measured here (``--zh`` adds the same turns in a Chinese version, whose
trigram index is larger per character).

    .venv/bin/python bench/episode_storage.py [--data PATH] [--per-day 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from companion_memory.adapters.local.runtime import DATABASE_FILE, build_local_runtime
from companion_memory.clock import FixedClock, iso
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.ports import EmbeddingKind
from companion_memory.settings import Settings

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
# D1's database size limits: Workers Paid, and the free plan.
D1_PAID_BYTES = 10 * 10**9
D1_FREE_BYTES = 500 * 10**6
RETENTIONS = (30, 90, 365, 730, 1825)
# Which table each table or index of the database belongs to, for the totals.
GROUPS = {
    "messages": "message",
    "episodes": "episode",
    "episodes_fts": "episode words",
    "episodes_substring": "episode substrings",
    "vector_outbox": "outbox",
}


class ConstantEmbedder:
    model = "constant"
    dimensions = 384
    similarity_range = (0.0, 1.0)

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        return [[1.0 / self.dimensions**0.5] * self.dimensions for _ in texts]


def conversations(path: Path) -> list[list[tuple[datetime, list[dict[str, Any]]]]]:
    """Each conversation's sessions: when it began, and its turns."""
    out = []
    for sample in json.loads(path.read_text()):
        talk = sample["conversation"]
        sessions = []
        number = 1
        while f"session_{number}" in talk:
            began = datetime.strptime(talk[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y")
            sessions.append((began, talk[f"session_{number}"]))
            number += 1
        out.append(sessions)
    return out


def grouped_bytes(path: Path) -> dict[str, int]:
    """Bytes of pages in use by each group of tables (dbstat: every b-tree page, with its
    unused space, as the file holds it)."""
    totals: dict[str, int] = defaultdict(int)
    with sqlite3.connect(path) as db:
        owner = {name: table for name, table in db.execute("SELECT name, tbl_name FROM sqlite_schema")}
        for name, size in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            # The longest name first: episodes_fts_data is the word index's, not the episodes'.
            group = next(
                (GROUPS[p] for p in sorted(GROUPS, key=len, reverse=True) if table == p or table.startswith(p + "_")),
                None,
            )
            totals[group or "other"] += size
    return dict(totals)


async def measure(data: Path) -> tuple[int, int, dict[str, int]]:
    with tempfile.TemporaryDirectory() as directory:
        clock = FixedClock(datetime.fromisoformat("2024-01-01T00:00:00+00:00"))
        runtime = await build_local_runtime(Settings(), Path(directory), embedder=ConstantEmbedder(), clock=clock)
        count = chars = 0
        for number, sessions in enumerate(conversations(data)):
            for began, turns in sessions:
                messages = [
                    IncomingMessage(
                        role="user" if turn["speaker"] == turns[0]["speaker"] else "assistant",
                        content=turn["text"]
                        + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else ""),
                        id=f"{number}:{turn['dia_id']}",
                        created_at=iso(began.replace(second=min(59, index))),
                    )
                    for index, turn in enumerate(turns)
                ]
                await runtime.ingestor.ingest("default", messages, conversation_id=f"conv-{number}")
                count += len(messages)
                chars += sum(len(m.content) for m in messages)
        while (await runtime.mirror.drain(500)).synced:
            pass
        runtime.db.close()  # type: ignore[attr-defined]
        return count, chars, grouped_bytes(Path(directory) / DATABASE_FILE)


def megabytes(size: float) -> str:
    return f"{size / 10**6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--per-day", type=int, default=100, help="messages a day, for the D1 projection")
    parser.add_argument("--messages-days", type=int, default=7, help="MESSAGES_RETENTION_DAYS")
    args = parser.parse_args()
    count, chars, sizes = asyncio.run(measure(args.data))
    episode_groups = ("episode", "episode words", "episode substrings")
    per_episode = sum(sizes.get(g, 0) for g in episode_groups) / count
    per_message = sizes.get("message", 0) / count
    print(f"{count} turns ingested, {chars / count:.0f} characters each on average (LoCoMo dev, English)")
    print("bytes per stored message, by what holds them:")
    for group in ("message", *episode_groups):
        print(f"  {group:<20} {sizes.get(group, 0) / count:8.0f}")
    print(f"  {'episode, in all':<20} {per_episode:8.0f}")
    print(f"  {'outbox after drain':<20} {sizes.get('outbox', 0) / count:8.0f}")
    print(
        f"\nD1 projection at {args.per_day} messages a day, raw messages kept {args.messages_days} days "
        f"({megabytes(per_message * args.per_day * args.messages_days)} of them):"
    )
    print(f"  {'EPISODE_RETENTION_DAYS':<24}{'episodes':>10}{'size':>12}{'of 10 GB':>10}{'of 500 MB':>11}")
    for days in RETENTIONS:
        size = per_episode * args.per_day * days + per_message * args.per_day * args.messages_days
        print(
            f"  {days:<24}{args.per_day * days:>10,}{megabytes(size):>12}"
            f"{size / D1_PAID_BYTES:>10.1%}{size / D1_FREE_BYTES:>11.1%}"
        )
    print(f"  kept forever: {megabytes(per_episode * args.per_day * 365)} a year")


if __name__ == "__main__":
    main()
