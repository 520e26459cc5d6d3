"""Big answers written as JSON a slice at a time.

FastAPI turns a returned model into JSON in one go, and checks it again first (it dumps
the model and validates the dump against the answer's model): for the star map's 2,000
nodes that held the event loop for 70 ms in one piece, behind which every other request
waited. A route that answers a big model writes it with ``paced_json`` instead: the model
was validated when it was made, and its lists of models are dumped a slice of items at a
time (``HeavyReads.paced``); the bytes are the same as FastAPI's.
"""

from __future__ import annotations

import json

from fastapi import Response
from pydantic import BaseModel

from ..pacing import HeavyReads


async def paced_json(model: BaseModel, heavy: HeavyReads) -> Response:
    fields = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, list) and all(isinstance(item, BaseModel) for item in value):
            items = [item.model_dump_json() async for item in heavy.paced(value)]
            fields.append(f"{json.dumps(name)}:[{','.join(items)}]")
        else:
            fields.append(model.model_dump_json(include={name})[1:-1])
    return Response("{" + ",".join(fields) + "}", media_type="application/json")
