"""The domain, the stores and the services (``memory/``, ``history/``, ``nightly/``, ``gateway/``,
``oauth/``) run without any web or validation framework: everything they import,
followed through the package, is the standard library, our own pure modules, or the pure
packages Pyodide ships (snowballstemmer, tzdata)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "companion_memory"
FRAMEWORKS = ("pydantic", "pydantic_core", "fastapi", "starlette", "httpx")
CORE = ("domain", "store", "memory", "history", "nightly", "gateway", "oauth")


def module_path(name: str) -> Path:
    relative = Path(*name.split(".")[1:])
    package = PACKAGE / relative / "__init__.py"
    return package if package.exists() else PACKAGE / relative.with_suffix(".py")


def imports_of(name: str) -> set[str]:
    """The modules ``name`` imports, relative imports made absolute."""
    path = module_path(name)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found.update(
                f"{base}.{alias.name}"
                for alias in node.names
                if module_path(f"{base}.{alias.name}").exists() and base.startswith("companion_memory")
            )
    return found


def reachable(start: str) -> dict[str, str]:
    """Every module reachable from ``start``: module → the module that imports it."""
    seen = {start: start}
    pending = [start]
    while pending:
        current = pending.pop()
        for imported in imports_of(current):
            if imported.startswith("companion_memory") and module_path(imported).exists() and imported not in seen:
                seen[imported] = current
                pending.append(imported)
            elif not imported.startswith("companion_memory"):
                seen.setdefault(imported, current)
    return seen


def core_modules() -> list[str]:
    return [
        "companion_memory." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for part in CORE
        for path in sorted((PACKAGE / part).rglob("*.py"))
        if path.name != "__init__.py"
    ]


@pytest.mark.parametrize("module", core_modules())
def test_the_core_imports_no_framework(module: str) -> None:
    for imported, importer in reachable(module).items():
        top = imported.split(".")[0]
        assert top not in FRAMEWORKS, f"{module} reaches {imported} (imported by {importer})"
        assert top == "companion_memory" or top in sys.stdlib_module_names or top in ("snowballstemmer",), (
            f"{module} reaches {imported} (imported by {importer}), which is neither ours nor the standard library"
        )


def test_the_check_sees_a_framework() -> None:
    """The walk follows imports through our own modules (runtime → settings → pydantic)."""
    assert "pydantic" in reachable("companion_memory.settings")
    assert "pydantic" in {m.split(".")[0] for m in reachable("companion_memory.runtime")}
