"""The people in the boot package: the most familiar first, each with a familiarity word in
the block and a number in ``people``, as they stood when the local day began, so that the
package a conversation starts from (and a prompt cached on it) is the same all day."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.clock import FixedClock
from companion_memory.domain.person import familiarity_word
from companion_memory.runtime import Runtime
from tests.conftest import auth
from tests.memory.test_plans import tool

# The test clock reads 2026-11-30 12:00 UTC, 20:00 in Singapore: the local day began at
# 2026-11-29T16:00Z.
DAY_START = "2026-11-29T16:00:00.000Z"


async def person(client: httpx.AsyncClient, runtime: Runtime, familiarity: float, **fields: Any) -> None:
    answer = await client.post("/v1/people", json=fields, headers=auth())
    assert answer.status_code == 201, answer.text
    await runtime.db.run(
        "UPDATE people SET familiarity = ?, familiarity_at = ? WHERE id = ?",
        (familiarity, DAY_START, answer.json()["person"]["id"]),
    )


def test_familiarity_words() -> None:
    assert [familiarity_word(f) for f in (1.0, 0.75, 0.74, 0.5, 0.3, 0.25, 0.1, 0.0)] == [
        "close",
        "close",
        "familiar",
        "familiar",
        "known",
        "known",
        "distant",
        "distant",
    ]


async def test_the_boot_package_names_the_people_with_their_familiarity(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await person(client, runtime, 0.3, name="Bo", relation="colleague")
    await person(client, runtime, 0.8, name="Ana", relation="sister", aliases=["安娜", "my sister"])
    await person(client, runtime, 0.05, name="Cy")
    for boot in ((await client.get("/v1/memory_boot", headers=auth())).json(), await tool(client, "memory_boot", {})):
        assert [(p["name"], p["familiarity"], p["familiarity_word"]) for p in boot["people"]] == [
            ("Ana", 0.8, "close"),
            ("Bo", 0.3, "known"),
            ("Cy", 0.05, "distant"),
        ]
        assert boot["people"][0]["aliases"] == ["安娜", "my sister"] and boot["people"][0]["relation"] == "sister"
        assert (
            "People in the user's life (the most familiar first):\n"
            "- Ana (sister; also 安娜, my sister): close\n"
            "- Bo (colleague): known\n"
            "- Cy: distant"
        ) in boot["context"]["text"].split("What we are doing")[0]


async def test_the_package_stays_the_same_all_day_and_fades_by_the_day(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await person(client, runtime, 0.8, name="Ana", relation="sister")
    assert isinstance(runtime.clock, FixedClock)

    async def boot() -> tuple[str, list[dict[str, Any]]]:
        answer = (await client.get("/v1/memory_boot", headers=auth())).json()
        return answer["context"]["text"], answer["people"]

    morning = await boot()
    runtime.clock.advance(hours=3, minutes=59)  # 23:59 in Singapore: the same day
    assert await boot() == morning
    runtime.clock.advance(minutes=2)  # the next day: a day of fading
    text, people = await boot()
    assert people[0]["familiarity"] == 0.78 and "- Ana (sister): close" in text
    runtime.clock.advance(days=3)
    text, people = await boot()
    assert people[0]["familiarity"] == 0.73 and "- Ana (sister): familiar" in text
