"""Read views the admin panel needs and no other use case gives: the star map's graph
(also to be drawn as an SVG or Mermaid file: api/starmap_file.py) and the diary by day,
week or month."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..clock import local_date
from ..domain.scopes import MEMORY_READ
from ..domain.star_map import StarGraph
from ..memory.people.stars import constellation
from ..runtime import Runtime
from ..store.admin_views import AdminViews, Period
from .fields import Namespace, ShortPageLimit, TypeFilter
from .memories import known_types
from .principal import Principal
from .use_case import Input, Output, use_case


class GraphNode(BaseModel):
    id: str
    kind: Literal["memory", "person"] = Field(
        "memory",
        description="person: someone in the owner's life (type 'person', content their name, importance their "
        "familiarity, tags their aliases, recall_count their mentions).",
    )
    type: str
    content: str
    fact_key: str | None
    importance: float
    confidence: float
    pinned: bool
    tags: list[str]
    recall_count: int
    updated_at: str


class GraphEdge(BaseModel):
    id: str
    source_id: str
    target_id: str
    relation: str = Field(description="A memory relation, or 'about': from a person to a memory about them.")
    weight: float


# How many memories one graph or star map draws at most.
GraphLimit = Annotated[int, Field(ge=1, le=2000)]


class GraphQuery(Input):
    namespace: Namespace = "default"
    types: Annotated[list[TypeFilter], Field(default_factory=list, max_length=20, description="Only these types.")]
    limit: GraphLimit = 500
    people: Annotated[
        bool, Field(description="Also the people, as stars of their own, linked to the memories about them.")
    ] = True


class Graph(Output):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool = Field(description="More live memories exist than ``limit`` nodes show.")


async def _graph(runtime: Runtime, query: GraphQuery) -> StarGraph:
    """The graph's rows; the caller holds a heavy read's turn (``pacing``)."""
    view = await AdminViews(runtime.db, runtime.heavy_reads).graph(
        query.namespace, types=known_types(query.types), limit=query.limit
    )
    if query.people:
        people = await constellation(runtime.people, query.namespace, (n.id for n in view.nodes))
        view = replace(view, nodes=[*view.nodes, *people.nodes], edges=[*view.edges, *people.edges])
    return view


async def _validated(runtime: Runtime, view: StarGraph) -> Graph:
    """``Graph.model_validate(view)``, a slice of nodes and edges at a time."""
    paced = runtime.heavy_reads.paced
    return Graph.model_construct(
        nodes=[GraphNode.model_validate(node, from_attributes=True) async for node in paced(view.nodes)],
        edges=[GraphEdge.model_validate(edge, from_attributes=True) async for edge in paced(view.edges)],
        truncated=view.truncated,
    )


class StarMapQuery(GraphQuery):
    format: Annotated[Literal["svg", "mermaid"], Field(description="svg: a standalone image; mermaid: flowchart text.")]


class StarMap(Graph):
    """A graph to draw as a file, and what the file is called after."""

    format: Literal["svg", "mermaid"]
    namespace: str
    day: str = Field(description="The local day (DREAM_TIME_ZONE) it is drawn on.")


class DayEntry(BaseModel):
    date: str
    title: str
    summary: str
    message_count: int
    updated_at: str


class WeekEntry(BaseModel):
    week: str
    start_date: str
    end_date: str
    title: str
    summary: str
    updated_at: str


class MonthEntry(BaseModel):
    month: str
    title: str
    summary: str
    updated_at: str


class DiaryQuery(Input):
    period: Period = "day"
    namespace: Namespace = "default"
    limit: ShortPageLimit = 30
    before: Annotated[
        str | None, Field(max_length=10, description="Page back: entries before this date, week or month.")
    ] = None


class DiaryPage(Output):
    period: Period
    entries: list[DayEntry] | list[WeekEntry] | list[MonthEntry]
    count: int
    next_before: str | None


@use_case("admin.graph", MEMORY_READ, heavy=True)
async def graph(runtime: Runtime, _: Principal, query: GraphQuery) -> Graph:
    """Live memories as nodes (pinned and most important first, at most ``limit``) and
    the relation edges between them, and the people with a line to each memory about
    them; ``truncated`` says whether more memories exist."""
    async with runtime.heavy_reads.turn():
        return await _validated(runtime, await _graph(runtime, query))


@use_case("admin.starmap", MEMORY_READ, heavy=True)
async def starmap(runtime: Runtime, _: Principal, query: StarMapQuery) -> StarMap:
    """The star map to draw as a file (a standalone SVG or Mermaid text: stars coloured by
    type, relations as lines): the same memories the graph shows, and today's date."""
    day = local_date(runtime.clock.now(), runtime.settings.DREAM_TIME_ZONE).isoformat()
    async with runtime.heavy_reads.turn():
        graph = await _validated(runtime, await _graph(runtime, query))
    return StarMap.model_construct(
        nodes=graph.nodes,
        edges=graph.edges,
        truncated=graph.truncated,
        format=query.format,
        namespace=query.namespace,
        day=day,
    )


@use_case("admin.diary", MEMORY_READ)
async def diary(runtime: Runtime, _: Principal, query: DiaryQuery) -> DiaryPage:
    """Diary entries newest first: days (``date``), ISO weeks (``week``) or months (``month``)."""
    entries, next_before = await AdminViews(runtime.db, runtime.heavy_reads).diary(
        query.namespace, query.period, limit=query.limit, before=query.before
    )
    return DiaryPage.model_validate(
        {"period": query.period, "entries": entries, "count": len(entries), "next_before": next_before},
        from_attributes=True,
    )
