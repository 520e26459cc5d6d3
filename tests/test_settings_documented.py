"""Every setting is documented: README's configuration table names each field of the one
settings model (datasette's rule: settings as data, and a test that keeps them documented)."""

from __future__ import annotations

import re
from pathlib import Path

from companion_memory.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_setting_is_in_the_configuration_table() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("\n## Configuration\n") :]
    table = table[: table.index("\n## ", 1)]
    documented = set(re.findall(r"^\|([^|]*)\|", table, flags=re.MULTILINE))
    named = {name for cell in documented for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}
    missing = sorted(set(Settings.model_fields) - named)
    assert not missing, f"README's configuration table does not document {missing}"
