"""The machine's own time zone: where the local server cuts its days when DREAM_TIME_ZONE is
not set (the Worker, which has no machine of its own, keeps the reference's Asia/Singapore).
An IANA name from ``TZ``, else from what /etc/localtime links to, else /etc/timezone."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ...clock import zone

ZONEINFO = "zoneinfo/"


def machine_time_zone(environ: Mapping[str, str], etc: Path = Path("/etc")) -> str | None:
    """None when the machine names no zone we know (a POSIX ``TZ`` such as ``UTC0``, Windows)."""
    if environ.get("TZ"):
        return _known(environ["TZ"].removeprefix(":"))
    try:
        target = os.readlink(etc / "localtime")
    except OSError:
        target = ""
    if ZONEINFO in target:
        return _known(target.rsplit(ZONEINFO, 1)[1])
    try:
        return _known((etc / "timezone").read_text().strip())
    except OSError:
        return None


def _known(name: str) -> str | None:
    try:
        zone(name)
    except ValueError:
        return None
    return name
