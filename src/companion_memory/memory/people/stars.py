"""The people as stars of the star map: their own kind (``person``), as bright as they
are familiar, each with an ``about`` line to every shown memory about them. The nodes and
edges take the shape of the memories' own (store/admin_views.py), so the panel and the
SVG/Mermaid files (api/starmap_file.py) draw both alike."""

from __future__ import annotations

from collections.abc import Iterable

from ...domain.star_map import StarEdge, StarGraph, StarNode
from .registry import People

# A circle of acquaintance is small: the star map shows at most this many people.
STAR_MAP_PEOPLE = 200
ABOUT_WEIGHT = 0.5


async def constellation(people: People, namespace: str, memory_ids: Iterable[str]) -> StarGraph:
    """The nodes of the namespace's people and their lines to the memories ``memory_ids``
    (those the map shows)."""
    shown_people = [people.shown(p) for p in await people.store.active(namespace, STAR_MAP_PEOPLE)]
    shown = set(memory_ids)
    nodes = [
        StarNode(
            id=p.id,
            kind="person",
            type="person",
            content=f"{p.name} ({p.relation})" if p.relation else p.name,
            fact_key=None,
            importance=p.familiarity,
            confidence=1.0,
            pinned=False,
            tags=p.aliases,
            recall_count=p.mentions,
            updated_at=p.updated_at,
        )
        for p in shown_people
    ]
    edges = [
        StarEdge(
            id=f"about:{person_id}:{memory_id}",
            source_id=person_id,
            target_id=memory_id,
            relation="about",
            weight=ABOUT_WEIGHT,
        )
        for person_id, memory_id in await people.store.links([p.id for p in shown_people])
        if memory_id in shown
    ]
    return StarGraph(nodes=nodes, edges=edges)
