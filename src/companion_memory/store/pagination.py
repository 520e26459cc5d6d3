"""Opaque keyset cursors for lists ordered by (timestamp DESC, id DESC)."""

from __future__ import annotations

import base64
import json

from ..domain.json_value import is_text
from ..errors import InvalidInput


def encode_cursor(timestamp: str, id_: str) -> str:
    raw = json.dumps([timestamp, id_], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        timestamp, id_ = json.loads(raw)
        if not isinstance(timestamp, str) or not isinstance(id_, str) or not is_text(timestamp + id_):
            raise ValueError
        return timestamp, id_
    except (ValueError, TypeError, RecursionError):
        raise InvalidInput("cursor is not one this server issued", code="invalid_cursor") from None


def page_of(rows: list[dict], limit: int, timestamp_column: str) -> tuple[list[dict], str | None]:
    """Trim the one extra row fetched to learn whether another page exists."""
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_cursor(last[timestamp_column], last["id"])
