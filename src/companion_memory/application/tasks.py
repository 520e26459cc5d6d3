"""The task queue's deliveries: vector-mirror retries, reindex, the retention backlog."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field, SkipValidation
from pydantic.json_schema import SkipJsonSchema

from ..domain.scopes import OWNER
from ..ports import QueueMessage
from ..runtime import Runtime
from .principal import Principal
from .use_case import Input, Output, use_case


class Deliveries(Input):
    """Messages as the queue delivered them; each is settled (acked or retried) in place."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    # The queue's own objects, not data: a Protocol cannot be checked, nor put in a schema.
    messages: SkipJsonSchema[SkipValidation[Sequence[QueueMessage]]]


class Handled(Output):
    messages: int = Field(description="Deliveries settled.")


@use_case("tasks.handle", OWNER)
async def handle(runtime: Runtime, _: Principal, deliveries: Deliveries) -> Handled:
    """Run each delivered task; ack it when done, retry it with backoff when it failed."""
    await runtime.tasks.handle(deliveries.messages)
    return Handled(messages=len(deliveries.messages))
