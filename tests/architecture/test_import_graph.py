"""No import cycle in companion_memory: neither between its packages nor between its
modules. Read from the source (pure AST), so it costs no import and sees every import,
wherever it is written:

- an import inside a function counts: importing late hides a cycle from Python, not
  from the reader;
- an import under ``if TYPE_CHECKING:`` counts too: a type named in a signature is a
  dependency of the design even when the running program does not load it, and no cycle
  needs one to be broken today.

The units of the package graph are the packages (``memory``, ``nightly``, ``gateway``,
``oauth``, ``store``, ``domain``, ``application``, ``api``, ``hosts``, ``adapters``; a
sub-package such as ``memory/people`` or ``adapters/local`` belongs to its parent) and
the top-level modules (``runtime``, ``settings``, ``ports``, ``errors``, ``clock``,
``pacing``, …). So the adapters are one unit, and ``runtime.py`` imports none of them:
the Runtime is given its ports (the chat router, the HTTP client) by the runtime builders
of each platform (``adapters/local/runtime.py``, ``adapters/cloudflare/runtime.py``), which
stand above it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "companion_memory"


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def modules(src: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``src`` by dotted name (a package by its own)."""
    found = {}
    for path in (src / package).rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path], package: str) -> Iterator[Import]:
    """The imports of ``package``'s modules in module ``name``: ``from .a import b`` is
    the module ``a.b`` when there is one, else ``a``."""
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        else:
            continue
        for target in targets:
            if target == package or target.startswith(package + "."):
                yield Import(name, target, node.lineno)


def package_of(module: str) -> str:
    parts = module.split(".")[1:]
    return parts[0] if parts else module


def graph(src: Path, package: str, unit: Callable[[str], str]) -> dict[str, dict[str, list[Import]]]:
    """unit → the units it imports, each with the imports that make the edge."""
    known = modules(src, package)
    edges: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for name, path in known.items():
        for found in imports(name, path, known, package):
            source, target = unit(found.source), unit(found.target)
            if source != target:
                edges[source][target].append(found)
    return edges


def cycles(edges: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """The strongly connected components of more than one unit (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for after in edges.get(unit, {}):
            if after not in index:
                visit(after)
                low[unit] = min(low[unit], low[after])
            elif after in stack:
                low[unit] = min(low[unit], index[after])
        if low[unit] == index[unit]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for unit in list(edges):
        if unit not in index:
            visit(unit)
    return found


def described(edges: dict[str, dict[str, list[Import]]], found: list[list[str]]) -> str:
    lines = []
    for component in found:
        lines.append(" ⇄ ".join(component))
        for source in component:
            for target, why in edges[source].items():
                if target in component:
                    where = ", ".join(f"{i.source}:{i.line}" for i in why[:3])
                    lines.append(f"  {source} → {target} ({where})")
    return "\n".join(lines)


def test_no_cycle_between_packages() -> None:
    edges = graph(SRC, PACKAGE, package_of)
    assert {"memory", "nightly", "application", "api", "runtime", "adapters", "hosts"} <= set(edges)
    assert cycles(edges) == [], described(edges, cycles(edges))


def test_no_cycle_between_modules() -> None:
    edges = graph(SRC, PACKAGE, lambda module: module)
    assert len(edges) > 200
    assert cycles(edges) == [], described(edges, cycles(edges))


@pytest.mark.parametrize(
    "files, expected",
    [
        # A late import and a type-only one still close a cycle.
        (
            {
                "a/__init__.py": "",
                "a/one.py": "def f():\n    from ..b import two\n",
                "b/__init__.py": "",
                "b/two.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a.one import f\n",
            },
            [["a", "b"]],
        ),
        # So do an absolute import and a name taken from a package's __init__.
        (
            {
                "a/__init__.py": "X = 1\n",
                "a/one.py": "import pkg.b.two\n",
                "b/__init__.py": "",
                "b/two.py": "from ..a import X\n",
                "c.py": "from .b import two\n",
            },
            [["a", "b"]],
        ),
        # One way only: no cycle.
        ({"a/__init__.py": "", "a/one.py": "from ..b import two\n", "b/__init__.py": "", "b/two.py": ""}, []),
    ],
)
def test_the_walk_sees_a_cycle(tmp_path: Path, files: dict[str, str], expected: list[list[str]]) -> None:
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    assert cycles(graph(tmp_path, "pkg", package_of)) == expected
