"""Every surface goes through the application layer: each REST route checks a use case's
scope, and every use case's input and output can be described."""

from __future__ import annotations

import httpx
from fastapi.routing import APIRoute

from companion_memory.api import auth
from companion_memory.api.app import create_app
from companion_memory.api.errors import flat_routes
from companion_memory.application import dream, tasks
from companion_memory.application.principal import SYSTEM
from companion_memory.application.use_case import USE_CASES
from companion_memory.runtime import Runtime
from tests.conftest import auth as key

# /health has no key (uptime checks), so no principal whose scope a use case could check.
NO_USE_CASE = {"/health"}


def test_every_rest_route_calls_a_use_case() -> None:
    routes = [
        route
        for route in flat_routes(create_app(None))  # type: ignore[arg-type]
        if isinstance(getattr(route, "original_route", route), APIRoute) and route.include_in_schema
    ]
    assert len(routes) > 40
    for route in routes:
        checks = [d.call for d in route.dependant.dependencies if d.call in auth.CHECKS]
        if route.path_format in NO_USE_CASE:
            assert not checks
        else:
            assert len(checks) == 1, f"{route.path_format} does not check one use case's scope"


def test_every_use_case_describes_its_input_and_output() -> None:
    assert tasks.handle.name in USE_CASES  # the Worker's queue handler's, which no route imports
    for name, case in USE_CASES.items():
        assert case.summary, f"{name} says nothing about what it does"
        case.input.model_json_schema()
        case.output.model_json_schema()


async def test_the_nightly_report_is_typed_and_its_record_is_served(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    report = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger(trigger="test"))
    assert report.ok and [step.name for step in report.steps][:2] == ["dream", "retention"]
    github = next(step for step in report.steps if step.name == "github_daily")
    assert github.describe() == '{"skipped": "GITHUB_DAILY_REPO is not set"}'
    status = (await client.get("/v1/dream/status", headers=key())).json()
    last = status["last_nightly"]
    assert last["trigger"] == "test" and last["ok"] is True
    assert last["steps"]["weekly_rollup"] == {"ok": True, "result": 0, "error": None}
