"""Where a Messages body carries its prompt-cache breakpoints.

Anthropic renders a request as tools -> system -> messages and caches the prefix up to
each block that carries ``cache_control``; a later request reads the cache only when its
prefix is byte-identical (``request`` keeps tools and system stable for that). So:

- the stable anchors are the last tool and the last system block;
- the tail breakpoint sits on the current user turn's own last block, the bridge on a
  history message whose position only moves every ``window`` messages (the server looks
  back about 20 blocks from a breakpoint for an earlier entry; the bridge keeps one
  within reach in long histories);
- at most four breakpoints; over budget the bridge goes first, then the tail;
- the memory patch, which changes every turn, is appended after all of them as the last
  text block of the current user turn and never carries ``cache_control``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MAX_CACHE_BREAKPOINTS = 4

Block = dict[str, Any]


@dataclass(frozen=True)
class CachePolicy:
    """What the breakpoints depend on (from ``ANTHROPIC_CACHE_TTL`` and
    ``ANTHROPIC_ROLLING_CACHE_*``)."""

    ttl: Literal["5m", "1h"] = "5m"
    rolling: bool = True  # tail and bridge breakpoints in the history
    window: int = 20  # messages between the bridge's moves

    def marker(self) -> dict[str, str]:
        # The 5-minute default is sent without ``ttl``, as the API's own default.
        return {"type": "ephemeral", "ttl": "1h"} if self.ttl == "1h" else {"type": "ephemeral"}


def place_breakpoints(result: dict[str, Any], current: int | None, own_blocks: int, policy: CachePolicy) -> None:
    """Up to four breakpoints on the body ``result``, most stable first: tools, system,
    tail, bridge. ``current`` is the index of the user turn being answered (None when
    there is none) and ``own_blocks`` how many of its blocks the client sent."""
    messages: list[dict[str, Any]] = result["messages"]
    candidates: list[tuple[str, Block]] = []
    if result.get("tools"):
        candidates.append(("tools", result["tools"][-1]))
    if result.get("system"):
        candidates.append(("system", result["system"][-1]))
    if policy.rolling and messages:
        tail = _tail_block(messages, current, own_blocks)
        if tail is not None:
            candidates.append(("tail", tail))
        history = current if current is not None else len(messages)
        bridge = _bridge_block(messages, history, policy.window)
        if bridge is not None and bridge is not tail:
            candidates.append(("bridge", bridge))
    for dropped in ("bridge", "tail"):
        if len(candidates) <= MAX_CACHE_BREAKPOINTS:
            break
        candidates = [c for c in candidates if c[0] != dropped]
    for _, block in candidates[:MAX_CACHE_BREAKPOINTS]:
        block["cache_control"] = policy.marker()


def _tail_block(messages: list[dict[str, Any]], current: int | None, own_blocks: int) -> Block | None:
    """The current user turn's own last block; without one, the last block before it."""
    if current is not None and own_blocks:
        return messages[current]["content"][own_blocks - 1]
    end = current if current is not None else len(messages)
    for index in range(end - 1, -1, -1):
        if messages[index]["content"]:
            return messages[index]["content"][-1]
    return None


def _bridge_block(messages: list[dict[str, Any]], history: int, window: int) -> Block | None:
    """In a history longer than ``window`` messages, the last block of the message at
    a multiple of ``window``: it stays put for ``window`` messages, so the entry it
    writes is read by the following turns, and it is never the history's last message."""
    if history <= window:
        return None
    index = ((history - 1) // window) * window - 1
    return messages[index]["content"][-1] if index >= 0 else None


def append_patch(messages: list[dict[str, Any]], current: int | None, patch: str) -> None:
    """The memory patch as the last block of the current user turn (a user turn of its
    own when there is none), after every breakpoint and without one of its own."""
    block = {"type": "text", "text": patch}
    if current is None:
        messages.append({"role": "user", "content": [block]})
    else:
        messages[current]["content"].append(block)
