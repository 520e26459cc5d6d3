"""Small FastAPI dependencies every router uses."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from ..application.fields import Namespace
from ..runtime import Runtime


# The dependencies are async although they never wait: FastAPI runs a plain function in
# its thread pool, a hand-off to another thread and back for each one of every request.
async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
NamespaceQuery = Annotated[Namespace, Query()]
