"""A tool's arguments are its use case's input, strict.

Each field comes from the input model as the application declares it, bounds, default and
description included, so REST and MCP cannot drift apart. A tool differs from its input
in three ways only: it may leave fields out (what REST keeps for the owner, what the tool
sets itself), it may declare a field of its own (``memory_list`` takes one ``type`` where
the input takes a list), and it refuses an argument it does not know instead of ignoring
it, so that a model which misspells one is told so.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from ...application.use_case import Input


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


def arguments(model: type[Input], *, without: Collection[str] = (), **fields: Any) -> type[Arguments]:
    """``model``'s fields but ``without``, strict; ``fields`` adds or replaces some, each
    as ``create_model`` takes it: ``(type, default or FieldInfo)``."""
    unknown = set(without) - set(model.model_fields)
    if unknown:
        raise ValueError(f"{model.__name__} has no field {', '.join(sorted(unknown))}")
    kept: dict[str, Any] = {
        name: (info.annotation, info) for name, info in model.model_fields.items() if name not in without
    }
    # The input's docstring speaks to REST's readers, so the schema carries none.
    return create_model(model.__name__, __base__=Arguments, **{**kept, **fields})
