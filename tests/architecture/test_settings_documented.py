"""Every setting is documented and used: README's configuration table names each field of
the one settings model, and each is read somewhere in the source (datasette's rule: settings
as data, and a test that keeps them documented)."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from companion_memory.memory.config import MemoryConfig
from companion_memory.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SRC = ROOT / "src" / "companion_memory"


def _source(*leaving_out: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(SRC.rglob("*.py")) if path not in leaving_out)


def test_every_setting_is_in_the_configuration_table() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("\n## Configuration\n") :]
    table = table[: table.index("\n## ", 1)]
    documented = set(re.findall(r"^\|([^|]*)\|", table, flags=re.MULTILINE))
    named = {name for cell in documented for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}
    missing = sorted(set(Settings.model_fields) - named)
    assert not missing, f"README's configuration table does not document {missing}"


def test_every_memory_service_value_is_read() -> None:
    source = _source()  # a field's declaration has no leading dot: only reads match
    unread = sorted(f.name for f in dataclasses.fields(MemoryConfig) if not re.search(rf"\.{f.name}\b", source))
    assert not unread, f"MemoryConfig carries {unread}, which no service reads"


def test_every_setting_is_read_somewhere() -> None:
    # A setting is read by name outside its declaration, or through the MemoryConfig value
    # the memory services read (checked above).
    source = _source(SRC / "settings.py")
    passed_on = {f.name.upper() for f in dataclasses.fields(MemoryConfig)}
    unread = sorted(name for name in set(Settings.model_fields) - passed_on if not re.search(rf"\b{name}\b", source))
    assert not unread, f"settings declared but read nowhere: {unread}"


def test_the_memory_services_values_are_the_settings_of_their_names() -> None:
    hints = typing.get_type_hints(MemoryConfig)
    fields = Settings.model_fields
    wrong = sorted(
        name for name, hint in hints.items() if name.upper() not in fields or fields[name.upper()].annotation != hint
    )
    assert not wrong, f"MemoryConfig fields with no setting of that name and type: {wrong}"
