"""Every surface stands on the application layer: each REST route and each MCP tool runs
a use case, whose scope is the one checked and whose output model is the answer (or a
file the surface draws from it); and no module of the HTTP surfaces reaches past the use
cases into the stores, nor does a host."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from companion_memory.api.app import create_app
from companion_memory.api.auth import CHECKS
from companion_memory.api.errors import flat_routes
from companion_memory.api.mcp.tools import TOOLS
from companion_memory.api.starmap_file import StarMapFile
from companion_memory.application import dream
from companion_memory.application.principal import SYSTEM
from companion_memory.application.use_case import USE_CASES, UseCase
from companion_memory.runtime import Runtime
from tests.conftest import NIGHTLY_STEPS, auth

SRC = Path(__file__).resolve().parents[2] / "src"
API = SRC / "companion_memory" / "api"
HOSTS = SRC / "companion_memory" / "hosts"
# The routes without a use case: the MCP transport (its tools are checked below), the
# panel's redirects, FastAPI's own documents, and /health, which takes no key (uptime
# checks), so there is no caller whose scope a use case could check.
NOT_ACTIONS = {
    "/mcp",
    "/memory-mcp",
    "/admin",
    "/memory-admin",
    "/openapi.json",
    "/docs",
    "/health",
}
# The chat turns answer with the provider's own completion or event stream, relayed as it
# came (api/openapi.py documents both), not with a model of ours.
RELAYS = {"/v1/chat/completions", "/v1/guide-dog/chat/completions"}
# The star map's route answers the file it draws from its use case's graph, as the
# command line writes it (drawing is the surfaces' job: api/starmap_file.py).
DRAWN = {"/v1/admin/starmap": StarMapFile}
# The command line, the Worker's cron and queue handlers, and the local server's
# scheduler and queue consumer.
BACKGROUND = (
    SRC / "companion_memory" / "hosts" / "cli.py",
    SRC / "companion_memory" / "hosts" / "cli_commands.py",
    SRC / "entry.py",
    SRC / "companion_memory" / "hosts" / "local_server.py",
)


def checks(dependant: Dependant) -> Iterator[UseCase[Any, Any]]:
    for dependency in dependant.dependencies:
        if dependency.call in CHECKS:
            yield CHECKS[dependency.call]
        yield from checks(dependency)


def api_routes(runtime: Runtime) -> list[APIRoute]:
    routes = (getattr(route, "original_route", route) for route in flat_routes(create_app(runtime)))
    return [route for route in routes if isinstance(route, APIRoute)]


def actions(runtime: Runtime) -> list[APIRoute]:
    return [route for route in api_routes(runtime) if route.path not in NOT_ACTIONS]


def test_every_rest_route_runs_one_use_case_and_answers_its_output(runtime: Runtime) -> None:
    routes = actions(runtime)
    assert len(routes) > 50
    for route in routes:
        found = list(checks(route.dependant))
        assert len(found) == 1, f"{sorted(route.methods)} {route.path} runs {len(found)} use cases"
        if route.path not in RELAYS:
            answer = DRAWN.get(route.path, found[0].output)
            assert route.response_model is answer, f"{route.path} answers {route.response_model}"


def test_every_mcp_tool_runs_use_cases_with_one_scope() -> None:
    for tool in TOOLS.values():
        assert tool.use_cases, tool.name
        assert {case.scope for case in tool.use_cases} == {tool.scope}, tool.name
        for case in tool.use_cases:
            assert USE_CASES[case.name] is case


def names_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.attr if isinstance(node, ast.Attribute) else node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute | ast.Name)
    }


def test_every_use_case_has_a_surface(runtime: Runtime) -> None:
    reached = {case.name for route in actions(runtime) for case in checks(route.dependant)}
    reached |= {case.name for tool in TOOLS.values() for case in tool.use_cases}
    called = set().union(*(names_used(path) for path in BACKGROUND))
    reached |= {name for name, case in USE_CASES.items() if case.run.__name__ in called}
    assert set(USE_CASES) - reached == set()


def test_every_use_case_describes_what_it_does_takes_and_answers() -> None:
    for name, case in USE_CASES.items():
        assert case.summary, f"{name} says nothing about what it does"
        case.input.model_json_schema()
        case.output.model_json_schema(mode="serialization")


async def test_the_nightly_report_is_typed_and_its_record_is_served(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    report = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger(trigger="test"))
    assert report.ok and [step.name for step in report.steps] == list(NIGHTLY_STEPS)
    github = next(step for step in report.steps if step.name == "github_daily")
    assert github.describe() == '{"skipped": "GITHUB_DAILY_REPO is not set"}'
    status = (await client.get("/v1/dream/status", headers=auth())).json()
    last = status["last_nightly"]
    assert last["trigger"] == "test" and last["ok"] is True
    assert last["steps"]["weekly_rollup"] == {"ok": True, "result": 0, "error": None}


def test_the_check_sees_a_route_without_a_use_case(runtime: Runtime) -> None:
    admin_redirect = next(route for route in api_routes(runtime) if route.path == "/admin")
    assert list(checks(admin_redirect.dependant)) == []


def reaches_past_the_use_cases(source: str) -> list[str]:
    """Imports of the stores, and ``runtime.db`` / ``….writer.store`` attribute chains."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and "store" in node.module.split("."):
            found.append(f"imports {node.module}")
        if isinstance(node, ast.Attribute) and node.attr in ("db", "store"):
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if (node.attr, name) in (("db", "runtime"), ("store", "writer")):
                found.append(f"uses {name}.{node.attr} (line {node.lineno})")
    return found


@pytest.mark.parametrize(
    "path",
    [*sorted(API.rglob("*.py")), *sorted(HOSTS.rglob("*.py")), SRC / "entry.py"],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_no_surface_or_host_reaches_past_the_use_cases(path: Path) -> None:
    assert reaches_past_the_use_cases(path.read_text(encoding="utf-8")) == []


def test_the_walk_sees_a_store() -> None:
    assert reaches_past_the_use_cases(
        "from ..store.glossary import GlossaryStore\nx = runtime.db\ny = a.writer.store"
    ) == [
        "imports store.glossary",
        "uses runtime.db (line 2)",
        "uses writer.store (line 3)",
    ]
