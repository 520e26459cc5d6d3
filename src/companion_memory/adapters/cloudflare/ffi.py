"""The one place where values cross between Python and JavaScript.

Inside a Python Worker (Pyodide) ``to_js`` and ``to_py`` use ``pyodide.ffi``. Outside
Pyodide (tests, local tooling) they work on plain Python values, and JS ``null`` is
represented by the ``JS_NULL`` sentinel, so fakes of the bindings can check that the
adapters convert exactly what the real runtime needs converted.

Two facts drive this module:
- Pyodide passes Python ``None`` to JS as ``undefined``, which D1 refuses
  (``D1_TYPE_ERROR: Type 'undefined' not supported``); SQL NULL must be sent as JS
  ``null``, i.e. ``pyodide.ffi.jsnull`` (Pyodide >= 0.28, Python 3.13 Workers).
- Results come back either as ``JsProxy`` objects needing ``.to_py()`` (in which JS
  ``null`` stays ``jsnull``) or, with newer ``workers`` SDKs, already as Python
  dicts/lists with ``None``. ``to_py`` accepts all of these.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import Any

try:  # pragma: no cover - only inside Pyodide
    from pyodide.ffi import JsProxy as _JsProxy
    from pyodide.ffi import to_js as _pyodide_to_js

    IN_PYODIDE = True
except ImportError:
    _JsProxy = None
    _pyodide_to_js = None
    IN_PYODIDE = False


class _HostJsNull:
    """Stand-in for JS ``null`` outside Pyodide."""

    _instance: _HostJsNull | None = None

    def __new__(cls) -> _HostJsNull:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "jsnull"

    def __bool__(self) -> bool:
        return False


JS_NULL: Any
if IN_PYODIDE:  # pragma: no cover
    try:
        from pyodide.ffi import jsnull as JS_NULL  # type: ignore[no-redef]
    except ImportError:  # Pyodide < 0.28 (Python 3.12 Workers) has no way to hold JS null
        JS_NULL = None
else:
    JS_NULL = _HostJsNull()

_PLAIN = (str, int, float, bool)


def _unwrap(value: Any, convert: Callable[[Any], Any], cache: Any) -> Any:
    # The workers SDK wraps bindings (and their statements) in Python objects that keep the
    # JS object in ``js_object`` or ``_binding``; hand JS the underlying object.
    for attribute in ("js_object", "_binding"):
        inner = getattr(value, attribute, None)
        if inner is not None:
            return inner
    return value


def _nulls_to_js(value: Any) -> Any:
    if value is None:
        if JS_NULL is None:  # pragma: no cover - old runtime
            raise RuntimeError(
                "this Pyodide cannot pass JS null (needs Pyodide >= 0.28 / Python 3.13 Workers); "
                "raise the Worker's compatibility_date"
            )
        return JS_NULL
    if isinstance(value, dict):
        return {key: _nulls_to_js(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulls_to_js(item) for item in value]
    return value


def to_js(value: Any) -> Any:
    """Convert a Python value for a JS call: None → null, dict → Object, list → Array,
    bytes → Uint8Array (D1 stores any ArrayBuffer view as a BLOB)."""
    if value is None or isinstance(value, _PLAIN):
        return _nulls_to_js(value)
    if IN_PYODIDE:  # pragma: no cover
        import js

        if isinstance(value, _JsProxy):
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _pyodide_to_js(bytes(value))
        return _pyodide_to_js(_nulls_to_js(value), dict_converter=js.Object.fromEntries, default_converter=_unwrap)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return _nulls_to_js(value)


def is_js_nullish(value: Any) -> bool:
    """True for Python None, JS null (``jsnull``) and JS undefined (which Pyodide gives as None)."""
    return value is None or (JS_NULL is not None and value is JS_NULL)


# A list of nothing but these is taken as it is: a BLOB comes back from D1 as a list of
# its byte values, and converting a MiB of them one call each took 1.7 s of CPU in Pyodide.
_SCALARS = frozenset({int, float, str, bool})


def to_py(value: Any) -> Any:
    """Convert a value returned by JS into plain Python (dict, list, str, int, float, None)."""
    if is_js_nullish(value):
        return None
    to_py_method = getattr(value, "to_py", None)
    if callable(to_py_method) and not isinstance(value, (dict, list, tuple, str, bytes)):
        value = to_py_method()
    if isinstance(value, dict):
        return {key: to_py(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if set(map(type, value)) <= _SCALARS:
            return list(value)
        return [to_py(item) for item in value]
    if is_js_nullish(value):
        return None
    return value


def js_bytes(value: Any) -> bytes:
    """A JS ``Uint8Array`` (a chunk of a response body) as Python bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    to_bytes = getattr(value, "to_bytes", None)
    if callable(to_bytes):
        return bytes(to_bytes())
    return bytes(to_py(value))


async def stream_chunks(stream: Any) -> AsyncGenerator[bytes, None]:
    """The bytes of a JS ``ReadableStream`` as they arrive; the stream is cancelled if the
    reader stops early."""
    reader = stream.getReader()
    finished = False
    try:
        while True:
            chunk = await reader.read()
            if chunk.done:
                finished = True
                return
            yield js_bytes(chunk.value)
    finally:
        if not finished:
            with contextlib.suppress(Exception):  # already errored or closed
                await reader.cancel()
