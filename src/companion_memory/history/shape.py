"""Checks of a decoded value's shape that name the JSON path when it is wrong, so that a
file of another format or a damaged export is an error at its place, never a KeyError."""

from __future__ import annotations

from typing import Any

from ..clock import shown
from ..errors import UnreadableHistory


def obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UnreadableHistory(f"{where}: expected a JSON object, found {shown(value)}")
    return value


def array(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise UnreadableHistory(f"{where}: expected a JSON array, found {shown(value)}")
    return value


def text(value: Any, where: str) -> str:
    """A string; absent (null) is empty."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UnreadableHistory(f"{where}: expected a string, found {shown(value)}")
    return value


def key(value: Any, where: str) -> str:
    """An id: a non-empty string (a number is taken as its digits)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise UnreadableHistory(f"{where}: expected an id, found {shown(value)}")
    return value
