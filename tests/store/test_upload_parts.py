"""An upload kept as parts in the database (``DatabaseUploads``, the Worker's, where D1
holds each part as a row): read back as one file, byte for byte, on SQLite, the fake D1
and the real engine."""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from companion_memory.memory.history_imports import PART_BYTES
from companion_memory.ports import Database
from companion_memory.store.history_imports import DatabaseUploads

pytestmark = pytest.mark.asyncio


async def test_a_full_part_reads_back_byte_exact_after_the_parts_before_it(db: Database) -> None:
    uploads = DatabaseUploads(db)
    # Every byte value, NULs and invalid UTF-8 included: a zip is binary.
    first = random.Random(32).randbytes(PART_BYTES)
    second = bytes(range(256)) * 3
    await uploads.put("a", 0, first)
    await uploads.put("a", PART_BYTES, second)
    await uploads.put("a", 0, first)  # a part sent again (its answer was lost) replaces itself
    await uploads.put("b", 0, b"another upload")

    with await uploads.open("a") as file:
        assert file.read() == first + second
        # A zip's directory is read from its end: the file seeks, and reads across parts.
        assert file.seek(-PART_BYTES - 2, io.SEEK_END) == len(second) - 2
        assert file.read(4) == first[len(second) - 2 : len(second) + 2]
        file.seek(PART_BYTES - 1)
        assert file.read(3) == first[-1:] + second[:2]
        assert file.read(len(second)) == second[2:] and file.read(1) == b""

    await uploads.remove("a")
    with await uploads.open("a") as file:
        assert file.read() == b""
    with await uploads.open("b") as file:
        assert file.read() == b"another upload"


async def test_an_export_zip_in_parts_opens_as_a_zip(db: Database) -> None:
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", '[{"title": "tea"}]' * 500)
        archive.writestr("chat.html", "<html></html>")
    data = packed.getvalue()
    uploads = DatabaseUploads(db)
    for start in range(0, len(data), 1000):
        await uploads.put("zip", start, data[start : start + 1000])
    with await uploads.open("zip") as file, zipfile.ZipFile(file) as archive:
        assert archive.namelist() == ["conversations.json", "chat.html"]
        assert archive.read("conversations.json") == b'[{"title": "tea"}]' * 500
