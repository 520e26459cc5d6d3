"""Request bodies are read as strict JSON, before any model sees them.

Python's ``json`` accepts ``NaN`` and ``Infinity``, lone surrogates such as ``"\\ud800"``
and any nesting its stack allows; each of those once reached the database and made a
later read fail. Here they are a 400 that names the problem (FastAPI reports a
``JSONDecodeError`` as a validation error), and the stores check again what they store
(``domain.json_value``), for writers that are not HTTP requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from ..domain.json_value import MAX_DEPTH, json_problem

# A body holds the stored values one or two levels down (messages[i].metadata), and
# chat bodies carry tool schemas: the body's own bound is looser than a stored value's.
MAX_BODY_DEPTH = 2 * MAX_DEPTH


def _not_json(constant: str) -> Any:
    raise json.JSONDecodeError(f"{constant} is not a JSON number", constant, 0)


def parse_json(body: bytes | str) -> Any:
    """The JSON value in ``body``; a ``json.JSONDecodeError`` says why there is none."""
    try:
        value = json.loads(body, parse_constant=_not_json)
    except RecursionError:
        raise json.JSONDecodeError(f"nests deeper than {MAX_BODY_DEPTH} levels", "", 0) from None
    problem = json_problem(value, max_depth=MAX_BODY_DEPTH)
    if problem:
        raise json.JSONDecodeError(f"the body {problem}", "", 0)
    return value


class StrictJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json(await self.body())
        return self._json


class JsonRoute(APIRoute):
    """Every REST route uses this class (a test checks), so every body is read strictly."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict
