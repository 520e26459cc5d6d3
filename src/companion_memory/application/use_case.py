"""A use case: a name, the scope it needs, typed input and output, and what it does.

``@use_case("memories.upsert", MEMORY_WRITE)`` on ``async def upsert(runtime, principal,
arguments: MemoryUpsert) -> WriteAnswer`` registers it in :data:`USE_CASES`; the input
and output models are read from the annotations, so the surfaces (and the test that
walks them) can see what each use case takes and answers. A use case marked ``heavy``
(the star map, the export, the health report) gives way to all the others while they
run (``pacing``).
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from ..runtime import Runtime
from .bindings import Confinement
from .principal import Principal

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class Input(BaseModel):
    """What a use case takes; REST bodies are these models. Clients send fields we do
    not know (other tools, newer versions): they are ignored, not refused."""

    model_config = ConfigDict(extra="ignore")
    # Namespaces the use case acts in whatever the input says (the chat gateway's), for
    # the check of the caller's namespace bindings, as a namespace field would be.
    acts_in: ClassVar[tuple[str, ...]] = ()


class Nothing(Input):
    """No arguments."""


class Output(BaseModel):
    """What a use case answers; REST returns it as the body, MCP as structuredContent."""


@dataclass(frozen=True)
class UseCase(Generic[In, Out]):
    name: str
    scope: str
    input: type[In]
    output: type[Out]
    run: Callable[[Runtime, Principal, In], Awaitable[Out]]
    # The namespaces the input names, checked against the caller's bindings.
    confinement: Confinement
    heavy: bool = False

    @property
    def summary(self) -> str:
        return (self.run.__doc__ or "").strip()

    def authorize(self, principal: Principal) -> None:
        """The one scope check. Surfaces may call it before they parse the input, so a
        caller without the scope learns nothing, not even whether its input was valid."""
        principal.require(self.scope)

    async def admit(self, runtime: Runtime, principal: Principal, arguments: In) -> None:
        """The scope, then the namespaces the input names against the caller's bindings:
        what every call passes before it runs (a surface that streams the answer itself
        calls this first)."""
        self.authorize(principal)
        await self.confinement.check(runtime.db, principal, self.scope, arguments)

    async def __call__(self, runtime: Runtime, principal: Principal, arguments: In) -> Out:
        await self.admit(runtime, principal, arguments)
        if self.heavy:
            return await self.run(runtime, principal, arguments)
        with runtime.heavy_reads.foreground():
            return await self.run(runtime, principal, arguments)


USE_CASES: dict[str, UseCase[Any, Any]] = {}


def use_case(
    name: str, scope: str, *, heavy: bool = False
) -> Callable[[Callable[[Runtime, Principal, In], Awaitable[Out]]], UseCase[In, Out]]:
    def register(run: Callable[[Runtime, Principal, In], Awaitable[Out]]) -> UseCase[In, Out]:
        hints = typing.get_type_hints(run)
        arguments = [hint for key, hint in hints.items() if key != "return"]
        model = arguments[-1]
        case = UseCase(
            name=name,
            scope=scope,
            input=model,
            output=hints["return"],
            run=run,
            confinement=Confinement.of(model),
            heavy=heavy,
        )
        if name in USE_CASES:
            raise RuntimeError(f"use case {name} is defined twice")
        USE_CASES[name] = case
        return case

    return register
