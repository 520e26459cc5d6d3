"""The star map as files to keep or paste anywhere: a standalone SVG, and Mermaid text
(GitHub and most Markdown tools draw it), drawn from the graph the ``admin.starmap`` use
case reads, for the REST route and the command line alike. Memories are stars coloured by type, relations
lines between them, as in the panel's star map; people (kind ``person``) are four-pointed
stars of their own, with a dashed ``about`` line to each memory about them.

Memory text is whatever was said or written, so it is never markup here: every piece of
it is escaped for the format it lands in, and node ids are our own (``n0``, ``n1``…),
never a stored value.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

from pydantic import Field

from ..application.admin_views import GraphNode, StarMap
from ..application.use_case import Output
from ..pacing import HeavyReads

# The panel's palette, so a file looks like the page it came from. The panel declares it
# in admin/js/format.js: the panel's static files are not part of the Worker's Python,
# nor Python part of the panel, so each side has its own copy, and
# tests/test_starmap.py holds the two to the same colours.
TYPE_COLOURS = {
    "fact": "#3b82f6",
    "event": "#f59e0b",
    "preference": "#ec4899",
    "relationship": "#10b981",
    "boundary": "#ef4444",
    "habit": "#8b5cf6",
    "decision": "#06b6d4",
    "note": "#64748b",
    "identity": "#eab308",
    "persona": "#f97316",
    "plan": "#14b8a6",
    "person": "#f0abfc",
}
RELATION_COLOURS = {
    "supports": "#10b981",
    "contradicts": "#ef4444",
    "cause_effect": "#f59e0b",
    "derived_from": "#8b5cf6",
    "same_thread": "#64748b",
    "supersedes": "#94a3b8",
    "about": "#f0abfc",
}
OTHER_COLOUR = "#64748b"
# Labels are cut to this many characters; the whole text is in the SVG's tooltip.
LABEL_CHARS = 40
# Up to this many stars every one is labelled; beyond, the pinned and important ones.
LABEL_ALL_UP_TO = 40
GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))
# Characters XML 1.0 cannot hold at all (escaping does not help): dropped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class StarMapFile(Output):
    format: Literal["svg", "mermaid"]
    media_type: str
    filename: str
    content: str = Field(description="The file itself; memory text in it is escaped, never markup.")
    nodes: int
    edges: int
    truncated: bool = Field(description="More live memories exist than ``limit`` stars show.")


async def star_map_file(star_map: StarMap, heavy: HeavyReads) -> StarMapFile:
    """The star map drawn in its format: a heavy read's work, so in a turn of theirs, a
    slice of lines at a time (``pacing``)."""
    if star_map.format == "svg":
        title = f"companion-memory · {star_map.namespace} · {star_map.day}"
        lines, media_type, suffix = star_map_svg(star_map, title=title), "image/svg+xml", "svg"
    else:
        lines, media_type, suffix = star_map_mermaid(star_map), "text/vnd.mermaid", "mmd"
    async with heavy.turn():
        content = "\n".join([line async for line in heavy.paced(lines)]) + "\n"
    return StarMapFile(
        format=star_map.format,
        media_type=media_type,
        filename=f"starmap-{star_map.namespace}-{star_map.day}.{suffix}",
        content=content,
        nodes=len(star_map.nodes),
        edges=len(star_map.edges),
        truncated=star_map.truncated,
    )


def _colour(palette: Mapping[str, str], name: str) -> str:
    return palette.get(name, OTHER_COLOUR)


def _short(text: str, size: int = LABEL_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def _xml(text: str) -> str:
    return html.escape(_NOT_XML.sub("", text), quote=True)


def _radius(node: GraphNode) -> float:
    return 4 + node.importance * 8 + (2 if node.pinned else 0)


def _sparkle(x: float, y: float, r: float) -> str:
    """A four-pointed star's points: a person, not a memory."""
    inner = r * 0.4
    points = []
    for step in range(8):
        angle = step * math.pi / 4 - math.pi / 2
        reach = r * 1.6 if step % 2 == 0 else inner
        points.append(f"{x + reach * math.cos(angle):.1f},{y + reach * math.sin(angle):.1f}")
    return " ".join(points)


def layout(nodes: Sequence[GraphNode]) -> dict[str, tuple[float, float]]:
    """Each type a cluster around its own point on a ring, the most important stars at
    its centre (a sunflower spiral): deterministic, and linear in the number of stars."""
    types = sorted({n.type for n in nodes})
    sizes = {t: sum(1 for n in nodes if n.type == t) for t in types}
    ring = 0.0 if len(types) == 1 else max(160.0, 40 * math.sqrt(len(nodes)) + 60)
    placed: dict[str, tuple[float, float]] = {}
    for index, kind in enumerate(types):
        angle = index / len(types) * 2 * math.pi - math.pi / 2
        cx, cy = ring * math.cos(angle), ring * math.sin(angle)
        members = sorted((n for n in nodes if n.type == kind), key=lambda n: (-n.importance, n.id))
        spacing = 18 if sizes[kind] < 200 else 12
        for position, node in enumerate(members):
            distance = spacing * math.sqrt(position)
            turn = position * GOLDEN_ANGLE
            placed[node.id] = (cx + distance * math.cos(turn), cy + distance * math.sin(turn))
    return placed


def star_map_svg(graph: StarMap, *, title: str) -> Iterator[str]:
    """A standalone SVG (no script, no external reference): stars, lines, a legend; its
    lines, to be joined with line breaks (a heavy read goes through them a slice at a time)."""
    nodes, edges = graph.nodes, graph.edges
    at = layout(nodes)
    margin = 60.0
    xs = [x for x, _ in at.values()] or [0.0]
    ys = [y for _, y in at.values()] or [0.0]
    left, top = min(xs) - margin, min(ys) - margin - 40
    width = max(xs) - min(xs) + 2 * margin + 220  # the labels to the right of the stars
    height = max(ys) - min(ys) + 2 * margin + 60
    label_all = len(nodes) <= LABEL_ALL_UP_TO
    yield from [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{_xml(title)}">',
        f"<title>{_xml(title)}</title>",
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" fill="#0b1020"/>',
        f'<text x="{left + 20:.1f}" y="{top + 30:.1f}" fill="#e2e8f0" font-family="sans-serif" font-size="16">'
        f"{_xml(title)}</text>",
        '<g class="edges" stroke-opacity="0.7">',
    ]
    for edge in edges:
        source, target = at.get(edge.source_id), at.get(edge.target_id)
        if source is None or target is None:
            continue
        relation = edge.relation
        yield (
            f'<line x1="{source[0]:.1f}" y1="{source[1]:.1f}" x2="{target[0]:.1f}" y2="{target[1]:.1f}" '
            f'stroke="{_colour(RELATION_COLOURS, relation)}" '
            + ('stroke-dasharray="4 3" ' if relation == "about" else "")
            + f'stroke-width="{1 + edge.weight * 1.5:.2f}"><title>{_xml(relation)}</title></line>'
        )
    yield '</g><g class="stars">'
    for node in nodes:
        x, y = at[node.id]
        kind, content = node.type, node.content
        tooltip = f"<title>{_xml(f'{kind} · {content}')}</title>"
        if node.kind == "person":
            yield (
                f'<polygon class="person" points="{_sparkle(x, y, _radius(node))}" '
                f'fill="{_colour(TYPE_COLOURS, kind)}">{tooltip}</polygon>'
            )
        else:
            yield (
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_radius(node):.1f}" fill="{_colour(TYPE_COLOURS, kind)}">'
                f"{tooltip}</circle>"
            )
        if label_all or node.pinned or node.importance >= 0.7:
            yield (
                f'<text x="{x + _radius(node) + 4:.1f}" y="{y + 4:.1f}" fill="#cbd5e1" font-family="sans-serif" '
                f'font-size="11">{_xml(_short(content))}</text>'
            )
    yield "</g>"
    present = sorted({n.type for n in nodes})
    for index, kind in enumerate(present):
        y = top + 60 + index * 18
        yield (
            f'<circle cx="{left + 26:.1f}" cy="{y:.1f}" r="5" fill="{_colour(TYPE_COLOURS, kind)}"/>'
            f'<text x="{left + 38:.1f}" y="{y + 4:.1f}" fill="#94a3b8" font-family="sans-serif" font-size="11">'
            f"{_xml(kind)}</text>"
        )
    yield "</svg>"


def _mermaid_text(text: str) -> str:
    """Text inside a quoted Mermaid label: letters, digits and plain punctuation as they
    are; anything else (quotes, brackets, angle brackets, backticks, #, ;, line breaks)
    as Mermaid's entity code, so no label can close its node or carry markup."""
    return "".join(ch if ch.isalnum() or ch in " .,-_'!?:()" else f"#{ord(ch)};" for ch in _NOT_XML.sub("", text))


def star_map_mermaid(graph: StarMap) -> Iterator[str]:
    """A Mermaid flowchart: one node per memory (labelled with its type and the start of
    its text) or person, one arrow per relation, a class per type for its colour; its
    lines, as ``star_map_svg``'s."""
    nodes, edges = graph.nodes, graph.edges
    ids = {node.id: f"n{index}" for index, node in enumerate(nodes)}
    people = sum(1 for node in nodes if node.kind == "person")
    counts = f"{len(nodes) - people} memories, {len(edges)} relations" + (f", {people} people" if people else "")
    yield from (f"%% companion-memory star map: {counts}", "flowchart LR")
    classes: dict[str, list[str]] = {}
    for node in nodes:
        kind = node.type
        name = ids[node.id]
        label = f"{_mermaid_text(kind)}: {_mermaid_text(_short(node.content))}"
        # A person is a circle, a memory a box.
        yield f'  {name}(("{label}"))' if node.kind == "person" else f'  {name}["{label}"]'
        # Class names of our own: Mermaid keywords (end, default) can never be one.
        classes.setdefault(kind, []).append(name)
    for edge in edges:
        source, target = ids.get(edge.source_id), ids.get(edge.target_id)
        if source and target:
            relation = edge.relation
            arrow = "-.->" if relation == "about" else "-->"
            yield f'  {source} {arrow}|"{_mermaid_text(relation)}"| {target}'
    for index, (kind, members) in enumerate(sorted(classes.items())):
        yield f"  classDef type{index} fill:{_colour(TYPE_COLOURS, kind)},stroke:#0f172a,color:#ffffff"
        yield f"  class {','.join(members)} type{index}"
