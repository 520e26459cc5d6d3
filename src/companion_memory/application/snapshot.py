"""The whole memory as one JSON document: export, and import by id."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from ..domain.scopes import EXPORT, OWNER
from ..memory.snapshot import FORMAT, VERSION
from ..runtime import Runtime
from ..store.snapshot import TABLES
from .fields import Namespace
from .principal import Principal
from .use_case import Input, Output, use_case


class ExportScope(Input):
    namespace: Annotated[Namespace | None, Field(description="One namespace; null for every namespace.")] = "default"


def document_schema() -> dict[str, Any]:
    """What an import must look like (memory/snapshot.py checks it): an export document,
    each table a list of rows whose key, namespace and created_at are not empty."""
    present = {"not": {"enum": [None, ""]}}

    def rows(table: Any) -> dict[str, Any]:
        required = sorted(set(table.key) | {"namespace", "created_at"} & set(table.columns))
        properties = {column: present if column in required else {} for column in table.columns}
        return {"type": "array", "items": {"type": "object", "required": required, "properties": properties}}

    return {
        "type": "object",
        "required": ["format", "version"],
        "properties": {"format": {"const": FORMAT}, "version": {"const": VERSION}, **{t.name: rows(t) for t in TABLES}},
    }


class ExportDocument(Output):
    """Every table's rows under the table's name, beside these fields."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, list[dict[str, Any]]] = Field(init=False)
    format: str
    version: int
    exported_at: str
    namespace: str | None
    skipped: list[dict[str, Any]] = Field([], description="Rows that could not be read back, and why.")


class ImportDocument(Input):
    """An export document; checked row by row by the import itself."""

    model_config = ConfigDict(extra="allow")
    document: Any


class ImportAnswer(Output):
    imported: dict[str, int] = Field(description="Rows upserted, by table.")
    refused: dict[str, int] = Field(description="Rows refused, by table.")


@use_case("export.namespace", EXPORT, heavy=True)
async def export(runtime: Runtime, _: Principal, scope: ExportScope) -> ExportDocument:
    """Everything in a namespace (or all of them): memories, history, precious, glossary,
    diary, her todos, moods, people, messages."""
    return ExportDocument.model_validate(await runtime.snapshots.export(scope.namespace))


async def export_json(runtime: Runtime, principal: Principal, scope: ExportScope) -> AsyncIterator[str]:
    """``export``'s document as JSON text, a page of rows at a time, for a surface that
    sends it as it is made (REST): never the whole export in memory at once. Admitted as
    ``export`` is, before the first piece."""
    await export.admit(runtime, principal, scope)
    async for piece in runtime.snapshots.export_json(scope.namespace):
        yield piece


@use_case("export.import", OWNER)
async def import_document(runtime: Runtime, _: Principal, upload: ImportDocument) -> ImportAnswer:
    """Upsert every row of an export by id; vectors are rebuilt in the background."""
    return ImportAnswer.model_validate(await runtime.snapshots.import_(upload.document))
