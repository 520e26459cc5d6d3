"""The Worker entry, loaded on the SDK's fake, for the tests of its handlers."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from tests.fakes.workers_sdk import load_entry


@pytest.fixture
def entry(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    yield load_entry(monkeypatch)
    sys.modules.pop("entry", None)
