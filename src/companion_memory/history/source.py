"""An export as the readers see it: a file, or the members of an export zip, each a
``Source`` that can be opened (again: Cherry Studio's backup is read in two passes).

A zip bomb is refused: a member whose header claims more than ``Limits.unpacked`` bytes,
or more than ``Limits.ratio`` times its compressed size, before it is opened; then a
guard counts what comes out of all members while they are read, against
``Limits.unpacked``. A header cannot understate its member to pass: zipfile yields no
more than the size the header gives, and a member that inflates past it is a CRC error.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import BinaryIO

from ..errors import UnreadableHistory

GIB = 1 << 30
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class Limits:
    # Bytes unpacked from one zip in all: the largest exports seen are a few GB.
    unpacked: int = 16 * GIB
    # JSON text deflates 5 to 20 times; a zip bomb hundreds to a thousand times.
    ratio: int = 200


@dataclass(frozen=True)
class Source:
    """One file to read: ``name`` is what errors show (``export.zip:conversations.json``)."""

    name: str
    open: Callable[[], AbstractContextManager[BinaryIO]] = field(repr=False, compare=False)

    @property
    def base_name(self) -> str:
        return self.name.rpartition(":")[2].rpartition("/")[2]


class _Counter:
    def __init__(self) -> None:
        self.unpacked = 0


class _GuardedMember(io.RawIOBase):
    """A zip member's bytes, refused as soon as the zip's bytes out outgrow the cap."""

    def __init__(self, inner: BinaryIO, name: str, total: _Counter, limits: Limits) -> None:
        self._inner, self._name, self._total, self._limits = inner, name, total, limits

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._inner.read(size)
        self._total.unpacked += len(data)
        if self._total.unpacked > self._limits.unpacked:
            raise UnreadableHistory(
                f"{self._name}: the zip unpacks to more than {self._limits.unpacked} bytes; refused as a zip bomb"
            )
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


class Export:
    """A file handed to the importer: plain, or a zip whose members are listed."""

    def __init__(self, file: BinaryIO, name: str, limits: Limits | None = None) -> None:
        self.name = name
        self._file = file
        self._limits = limits or Limits()
        self._counter = _Counter()
        file.seek(0)
        head = file.read(4)
        file.seek(0)
        self.archive: zipfile.ZipFile | None = None
        if head == ZIP_MAGIC:
            try:
                self.archive = zipfile.ZipFile(file)
            except (zipfile.BadZipFile, OSError, ValueError) as error:
                raise UnreadableHistory(f"{name}: not a readable zip ({error})") from None

    def names(self) -> list[str]:
        """The zip's entries, folders too (none for a plain file)."""
        return [] if self.archive is None else self.archive.namelist()

    def whole(self) -> Source:
        return Source(self.name, self._open_whole)

    @contextmanager
    def _open_whole(self) -> Iterator[BinaryIO]:
        self._file.seek(0)
        yield self._file

    def member(self, member: str) -> Source:
        return Source(f"{self.name}:{member}", lambda: self._open_member(member))

    @contextmanager
    def _open_member(self, member: str) -> Iterator[BinaryIO]:
        assert self.archive is not None
        info = self.archive.getinfo(member)
        where = f"{self.name}:{member}"
        if info.file_size > self._limits.unpacked or info.file_size > self._limits.ratio * max(info.compress_size, 1):
            raise UnreadableHistory(
                f"{where}: its header claims {info.file_size} bytes unpacked; refused as a zip bomb"
            )
        try:
            inner = self.archive.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
            raise UnreadableHistory(f"{where}: cannot be unpacked ({error})") from None
        guarded = _GuardedMember(inner, where, self._counter, self._limits)  # type: ignore[arg-type]
        try:
            yield io.BufferedReader(guarded)
        except (zipfile.BadZipFile, zlib.error) as error:
            raise UnreadableHistory(f"{where}: the zip is damaged ({error})") from None
        finally:
            guarded.close()
