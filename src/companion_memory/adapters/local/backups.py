"""Backups as files in a directory of the data dir, readable by the owner only."""

from __future__ import annotations

import os
from pathlib import Path

from ...ports import BackupError

MAX_SAME_NAME = 100


class FileBackups:
    """Implements ``ports.BackupStore`` on a directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def save(self, name: str, text: str) -> str:
        """A new file, never over an older backup: ``name``, else ``name-2``, ``name-3``…"""
        stem, suffix = os.path.splitext(name)
        path = self.directory / name
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for attempt in range(2, MAX_SAME_NAME + 2):
                try:
                    # Created 0600 from the start: an export holds every message and memory.
                    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    break
                except FileExistsError:
                    path = self.directory / f"{stem}-{attempt}{suffix}"
            else:
                raise BackupError(f"cannot write the backup: {MAX_SAME_NAME} files named {name} already")
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
        except OSError as error:
            raise BackupError(f"cannot write the backup {path}: {error.strerror or error}") from error
        return str(path)
