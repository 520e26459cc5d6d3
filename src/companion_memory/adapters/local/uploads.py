"""Uploads as files in a directory of the data dir, readable by the owner only."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import BinaryIO


class FileUploads:
    """Implements ``ports.UploadStore``: each part written in place into one file, so a
    gigabyte export is read back from disk, never held in memory."""

    # What the history readers take from a zip in all (history/source.Limits).
    max_bytes = 16 * 1024**3

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, upload: str) -> Path:
        return self.directory / f"{upload}.upload"

    async def put(self, upload: str, start: int, data: bytes) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        # Created 0600: an export holds every conversation.
        descriptor = os.open(self._path(upload), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(descriptor, data, start)
        finally:
            os.close(descriptor)

    async def open(self, upload: str) -> BinaryIO:
        return await asyncio.to_thread(self._path(upload).open, "rb")

    async def remove(self, upload: str) -> None:
        self._path(upload).unlink(missing_ok=True)

    async def open_local(self, path: str) -> BinaryIO:
        return await asyncio.to_thread(Path(path).open, "rb")
