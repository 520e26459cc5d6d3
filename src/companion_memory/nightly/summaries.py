"""Summaries for the rollups: a week of diary days, a month of weeks.

With DREAM_MODEL configured a model writes them; without one (or when the model fails)
the entries are joined and cut, so rollups never wait on a model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from ..memory.model_call import JobModel
from ..ports import UpstreamError

log = logging.getLogger("companion_memory.summaries")
SUMMARY_CHARS = 300

INSTRUCTIONS = f"""You keep the diary of a personal AI companion. Summarise the diary entries below into one
paragraph of at most {SUMMARY_CHARS} characters, in the language of the entries: what happened, how the user
was, what changed. Answer with the summary only, no title, no quotes."""


def cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"


# What a summary is made of: a diary day or a week, as (its day or week, title, summary).
Entry = tuple[str, str, str]


def entry_lines(entries: Sequence[Entry]) -> list[str]:
    return [f"{when}: {title} — {summary}".strip(" —") for when, title, summary in entries]


def joined(entries: Sequence[Entry]) -> str:
    return cut("; ".join(entry_lines(entries)))


class Summarizer(Protocol):
    name: str

    async def summarize(self, period: str, entries: Sequence[Entry]) -> str: ...


class JoinedSummaries:
    name = "joined"

    async def summarize(self, period: str, entries: Sequence[Entry]) -> str:
        return joined(entries)


class ModelSummaries:
    def __init__(self, model: JobModel) -> None:
        self.model = model
        self.name = f"model:{model.model}"

    async def summarize(self, period: str, entries: Sequence[Entry]) -> str:
        body = {
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": "\n".join([f"Period: {period}", "", *entry_lines(entries)])},
            ],
            "max_tokens": 400,
            "temperature": 0.3,
        }
        try:
            answer = await self.model.ask(body)
            if not answer.text.strip():
                raise ValueError("the model answered nothing")
            return cut(answer.text)
        except (UpstreamError, ValueError) as error:  # a summary is never worth a missing rollup
            log.warning("summary of %s by %s failed (%s); joining the entries instead", period, self.name, error)
            return joined(entries)
