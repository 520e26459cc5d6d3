"""The secrets handed to clients (codes and tokens): opaque random strings, of which
only the SHA-256 digests are stored."""

from __future__ import annotations

import hashlib
import secrets


def new_secret(prefix: str) -> str:
    """A fresh secret; ``prefix`` says what it is to whoever finds it in a log."""
    return prefix + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
