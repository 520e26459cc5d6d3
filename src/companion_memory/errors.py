"""Errors the domain services raise; each surface maps them to its own convention."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details or {}


class InvalidInput(ServiceError):
    code = "invalid_request"


class NotFound(ServiceError):
    code = "not_found"


class Conflict(ServiceError):
    code = "conflict"


class SensitiveContent(ServiceError):
    code = "sensitive_content"


class PermissionDenied(ServiceError):
    code = "forbidden"


class Unauthenticated(ServiceError):
    code = "unauthorized"
