"""The star map as files: a standalone SVG and Mermaid text, from REST (both databases)
and the command line; memory text in them is always inert, and their colours are the
panel's."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import httpx
import pytest

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.api.starmap_file import RELATION_COLOURS, TYPE_COLOURS, star_map_mermaid, star_map_svg
from companion_memory.application import memories
from companion_memory.application.admin_views import GraphEdge, GraphNode, StarMap
from companion_memory.application.principal import SYSTEM
from companion_memory.clock import FixedClock
from companion_memory.hosts import cli
from tests.conftest import GUIDE_DOG_KEY, MCP_KEY, all_keys_settings, auth
from tests.memory.test_doctor import EMBEDDER, cli_clock  # noqa: F401  # the fixture, for the command line

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> "]] --> n9 %% `md` & <img src=x onerror=alert(1)>\x01'


PANEL_PALETTE = Path(__file__).resolve().parents[2] / "admin" / "js" / "format.js"


def graph(*contents: str, types: tuple[str, ...] = ()) -> StarMap:
    nodes = [
        GraphNode(
            id=f"id-{i}",
            type=types[i] if i < len(types) else "fact",
            content=c,
            fact_key=None,
            importance=0.8,
            confidence=1.0,
            pinned=False,
            tags=[],
            recall_count=0,
            updated_at="2026-11-30T00:00:00Z",
        )
        for i, c in enumerate(contents)
    ]
    edges = [GraphEdge(id="r", source_id="id-0", target_id="id-1", relation="supports", weight=1.0)] * (len(nodes) > 1)
    return StarMap(nodes=nodes, edges=edges, truncated=False, format="svg", namespace="default", day="2026-11-30")


def test_hostile_text_makes_inert_svg() -> None:
    drawn = "\n".join(star_map_svg(graph(HOSTILE, "plain"), title=HOSTILE))
    root = ElementTree.fromstring(drawn)  # well-formed: the control character is gone
    tags = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert tags <= {"svg", "title", "rect", "text", "g", "line", "circle"}
    assert "<script" not in drawn and "<img" not in drawn and "onerror=alert" in drawn  # as text only
    titles = [element.text for element in root.iter(f"{SVG}title")]
    assert f"fact · {HOSTILE.replace(chr(1), '')}" in titles


def test_hostile_text_makes_inert_mermaid() -> None:
    drawn = "\n".join(star_map_mermaid(graph(HOSTILE, "plain", types=("fact", "end"))))
    nodes = [line for line in drawn.splitlines() if re.match(r"^  n\d+\[", line)]
    assert len(nodes) == 2
    for line in nodes:  # one quoted label each, nothing in it that could end it or carry markup
        assert re.fullmatch(r'  n\d+\["[^"\[\]<>`%&;]*(#\d+;[^"\[\]<>`%&;]*)*"\]', line), line
    assert "#60;script#62;" in nodes[0] and "<" not in drawn.split("flowchart LR", 1)[1]
    assert '  n0 -->|"supports"| n1' in drawn
    assert "classDef type0" in drawn and "classDef end" not in drawn  # a type named like a keyword


def test_an_empty_map_is_still_a_file() -> None:
    empty = graph()
    assert ElementTree.fromstring("\n".join(star_map_svg(empty, title="none"))).tag == f"{SVG}svg"
    assert list(star_map_mermaid(empty))[1] == "flowchart LR"


def panel_palette(name: str) -> dict[str, str]:
    """A colour table of the panel's, read out of its JavaScript."""
    found = re.search(rf"const {name} = \{{(.*?)\}};", PANEL_PALETTE.read_text(encoding="utf-8"), re.S)
    assert found, name
    return dict(re.findall(r'(\w+): "(#[0-9a-f]{6})"', found.group(1)))


def test_a_file_has_the_panels_colours() -> None:
    assert panel_palette("TYPE_COLOURS") == TYPE_COLOURS
    assert panel_palette("RELATION_COLOURS") == RELATION_COLOURS


async def test_the_panel_downloads_the_map(client: httpx.AsyncClient) -> None:
    ids = []
    for key, content, kind in [("a", HOSTILE, "fact"), ("b", "Likes jasmine tea", "preference")]:
        body = {"fact_key": key, "content": content, "type": kind}
        ids.append((await client.post("/v1/memories", json=body, headers=auth())).json()["memory"]["id"])
    related = await client.post(
        f"/v1/memories/{ids[0]}/relations", json={"target_id": ids[1], "relation": "supports"}, headers=auth()
    )
    assert related.status_code == 201, related.text

    svg = await client.get("/v1/admin/starmap", params={"format": "svg"}, headers=auth(MCP_KEY))
    assert svg.status_code == 200, svg.text
    drawn = svg.json()
    assert (drawn["media_type"], drawn["nodes"], drawn["edges"]) == ("image/svg+xml", 2, 1)
    assert drawn["filename"] == "starmap-default-2026-11-30.svg"
    root = ElementTree.fromstring(drawn["content"])
    assert len(list(root.iter(f"{SVG}circle"))) == 2 + 2 and len(list(root.iter(f"{SVG}line"))) == 1  # + the legend
    assert "<script" not in drawn["content"]

    mermaid = (await client.get("/v1/admin/starmap", params={"format": "mermaid"}, headers=auth())).json()
    assert mermaid["filename"].endswith(".mmd") and '-->|"supports"|' in mermaid["content"]
    only = (await client.get("/v1/admin/starmap?format=mermaid&type=preference", headers=auth())).json()
    assert only["nodes"] == 1 and only["edges"] == 0
    assert (await client.get("/v1/admin/starmap", headers=auth(GUIDE_DOG_KEY))).status_code == 403
    bad = await client.get("/v1/admin/starmap", params={"format": "png"}, headers=auth())
    assert bad.status_code == 400, bad.text


def test_the_command_line_writes_both_files(
    cli_clock: FixedClock,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def seed() -> None:
        runtime = await build_local_runtime(all_keys_settings(), tmp_path / "data", embedder=EMBEDDER, clock=cli_clock)
        await memories.upsert_memory(runtime, SYSTEM, memories.MemoryUpsert(fact_key="tea", content=HOSTILE))

    asyncio.run(seed())
    data = ["--data-dir", str(tmp_path / "data")]
    assert cli.main(["starmap", "--format", "svg", "-o", str(tmp_path / "map.svg"), *data]) == 0
    assert "wrote" in capsys.readouterr().err
    root = ElementTree.fromstring((tmp_path / "map.svg").read_text(encoding="utf-8"))
    assert root.tag == f"{SVG}svg"
    assert cli.main(["starmap", "--format", "mermaid", *data]) == 0
    assert capsys.readouterr().out.startswith("%% companion-memory star map: 1 memories")
    assert cli.main(["starmap", "--limit", "0", *data]) == 2
