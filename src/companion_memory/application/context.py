"""Long-chat folds: a fold read back with every message it stands for, word for word."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..domain.scopes import MEMORY_READ
from ..runtime import Runtime
from .fields import FoldRef
from .principal import Principal
from .use_case import Input, Output, use_case


class FoldId(Input):
    fold_id: Annotated[FoldRef, Field(description="The fold named in the summary that replaced the turns.")]


class FoldRecord(Output):
    id: str
    namespace: str
    summary: str = Field(description="What the folded turns were replaced by.")
    summarizer: str = Field(description="extractive, or model:<DREAM_MODEL>.")
    upto: int = Field(description="The conversation's messages before this index are folded (its system messages too).")
    messages: list[dict[str, Any]] = Field(description="Every folded message as the client sent it, oldest first.")
    anchors: list[str] = Field(description="The ids the folded user messages and replies are stored under.")
    previous_id: str | None = Field(description="The fold this one grew from.")
    created_at: str
    used_at: str


@use_case("context.expand", MEMORY_READ)
async def expand(runtime: Runtime, _: Principal, target: FoldId) -> FoldRecord:
    """A fold of a long chat with the original messages it replaced."""
    return FoldRecord.model_validate(await runtime.folding.expand(target.fold_id), from_attributes=True)
