"""SQL for history imports: the job rows, and the uploaded parts where no file system
holds them."""

from __future__ import annotations

import bisect
import io
import itertools
from collections.abc import Mapping
from typing import BinaryIO

from ..domain.history_import import HISTORY_IMPORT_FIELDS, HistoryImport, ImportStatus
from ..ports import Database, SqlValue, Statement
from .sql import placeholders

_COLUMNS = ", ".join(HISTORY_IMPORT_FIELDS)


class HistoryImportStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, job: HistoryImport) -> None:
        values = tuple(getattr(job, name) for name in HISTORY_IMPORT_FIELDS)
        await self.db.run(f"INSERT INTO history_imports ({_COLUMNS}) VALUES ({placeholders(len(values))})", values)

    async def get(self, id_: str) -> HistoryImport | None:
        row = await self.db.first(f"SELECT {_COLUMNS} FROM history_imports WHERE id = ?", (id_,))
        return HistoryImport(**row) if row else None

    async def recent(self, limit: int) -> list[HistoryImport]:
        rows = await self.db.all(
            f"SELECT {_COLUMNS} FROM history_imports ORDER BY created_at DESC, id DESC LIMIT ?", (limit,)
        )
        return [HistoryImport(**row) for row in rows]

    async def unended(self) -> list[HistoryImport]:
        rows = await self.db.all(
            f"SELECT {_COLUMNS} FROM history_imports WHERE status NOT IN ('done', 'failed') ORDER BY created_at"
        )
        return [HistoryImport(**row) for row in rows]

    async def unfinished_from(self, path: str, size: int) -> HistoryImport | None:
        """The newest job of this local file (at this size) that has not ended."""
        row = await self.db.first(
            f"SELECT {_COLUMNS} FROM history_imports WHERE path = ? AND size = ? "
            "AND status NOT IN ('done', 'failed') ORDER BY created_at DESC LIMIT 1",
            (path, size),
        )
        return HistoryImport(**row) if row else None

    async def update(self, id_: str, changes: Mapping[str, SqlValue], *, status: tuple[ImportStatus, ...]) -> bool:
        """Set these columns while the job is in one of ``status`` (so a step that lost a
        race changes nothing); says whether it did."""
        statement = self.updating(id_, changes, status=status)
        result = await self.db.run(statement.sql, statement.params)
        return bool(result.changes)

    @staticmethod
    def updating(id_: str, changes: Mapping[str, SqlValue], *, status: tuple[ImportStatus, ...]) -> Statement:
        assert set(changes) <= set(HISTORY_IMPORT_FIELDS), changes
        sets = ", ".join(f"{name} = ?" for name in changes)
        return Statement(
            f"UPDATE history_imports SET {sets} WHERE id = ? AND status IN ({placeholders(len(status))})",
            (*changes.values(), id_, *status),
        )

    @staticmethod
    def advance(id_: str, position: int, *, stored: int, duplicates: int, outside: int, at: str) -> Statement:
        """The job's place in its file after a batch, written in the batch that stores it;
        only from the place the batch began, so a batch run twice counts once."""
        return Statement(
            "UPDATE history_imports SET position = ?, stored = stored + ?, duplicates = duplicates + ?, "
            "outside = outside + ?, updated_at = ? WHERE id = ? AND position = ?",
            (position, stored, duplicates, outside, at, id_, position - stored - duplicates - outside),
        )

    async def embedding_left(self, namespace: str) -> int:
        """Episodes of the namespace still waiting for their vector."""
        row = await self.db.first(
            "SELECT COUNT(*) AS n FROM vector_outbox WHERE namespace = ? AND kind = 'episode'", (namespace,)
        )
        return int(row["n"]) if row else 0


class DatabaseUploads:
    """``ports.UploadStore`` on the ``history_import_parts`` table: the Worker's, whose
    isolate reads an upload back whole (128 MB of memory, Python's share included), and
    checks it in one queue delivery: 30 s of CPU by default, which reads some 16 MiB of
    JSON in Pyodide (a 48 MiB check took 35-40 s). A larger export goes in pieces
    (``import-history --url``)."""

    max_bytes = 16 * 1024 * 1024

    def __init__(self, db: Database) -> None:
        self.db = db

    async def put(self, upload: str, start: int, data: bytes) -> None:
        await self.db.run(
            "INSERT INTO history_import_parts (import_id, start, data) VALUES (?, ?, ?) "
            "ON CONFLICT (import_id, start) DO UPDATE SET data = excluded.data",
            (upload, start, data),
        )

    async def open(self, upload: str) -> BinaryIO:
        # A part at a time: D1 answers at most a few MB per query.
        parts: list[bytes] = []
        start = -1
        while row := await self.db.first(
            "SELECT start, data FROM history_import_parts WHERE import_id = ? AND start > ? ORDER BY start LIMIT 1",
            (upload, start),
        ):
            start = row["start"]
            parts.append(bytes(row["data"]))
        return io.BufferedReader(_Parts(parts))

    async def remove(self, upload: str) -> None:
        await self.db.run("DELETE FROM history_import_parts WHERE import_id = ?", (upload,))

    async def open_local(self, path: str) -> BinaryIO:
        raise FileNotFoundError(f"{path}: the Worker reads uploads only")


class _Parts(io.RawIOBase):
    """An upload's parts read as one file, never joined into one buffer: a copy of the
    whole would double what the Worker's isolate holds while it reads."""

    def __init__(self, parts: list[bytes]) -> None:
        self._parts = parts
        self._starts = list(itertools.accumulate((len(part) for part in parts), initial=0))
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = (0, self._position, self._starts[-1])[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._position = base + offset
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """From the part the position is in, at most to its end (a short read, which
        BufferedReader joins)."""
        index = bisect.bisect_right(self._starts, self._position) - 1
        if index >= len(self._parts):
            return 0
        offset = self._position - self._starts[index]
        data = memoryview(self._parts[index])[offset:]
        target = memoryview(buffer).cast("B")
        count = min(len(target), len(data))
        target[:count] = data[:count]
        self._position += count
        return count
