from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history import cherry_studio
from tests.history.fixtures import DATA, assert_summary, expected, expected_messages, read, shown

CHERRY = DATA / "cherry-studio"


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        ("data.json", "data.expected.json"),
        ("data-v3.json", "data-v3.expected.json"),
        ("cherry-studio.202505120900.zip", "data.expected.json"),
    ],
)
def test_the_topics_are_read_with_their_blocks_and_titles(name: str, wanted: str) -> None:
    messages, summary = read(cherry_studio.read, CHERRY / name)
    assert [shown(m) for m in messages] == expected_messages(f"cherry-studio/{wanted}")
    assert_summary(summary, f"cherry-studio/{wanted}")
    assert summary.dropped == expected(f"cherry-studio/{wanted}")["skipped"].get("dropped_blocks", {})


def test_a_version_it_does_not_know_is_refused(tmp_path: Path) -> None:
    backup = json.loads((CHERRY / "data.json").read_text(encoding="utf-8"))
    backup["version"] = 1
    path = tmp_path / "data.json"
    path.write_text(json.dumps(backup), encoding="utf-8")
    with pytest.raises(UnreadableHistory, match=r"^data\.json\.version: backup version 1 is not supported"):
        read(cherry_studio.read, path)
