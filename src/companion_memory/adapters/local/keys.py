"""The owner key of a local server started without CHATBOX_API_KEY."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_FILE = "owner-api-key"


def load_or_create_owner_key(data_dir: Path) -> tuple[str, bool]:
    """The stored key, or a new one written with owner-only permissions; says if new."""
    path = data_dir / KEY_FILE
    if path.exists():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key, False
    key = "cm-" + secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(key + "\n")
    return key, True
