"""A term of the owner's glossary, as the services hand it around: a plain dataclass in
the column order of ``glossary``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class Term:
    """The owner's own word for something ("bbt", "珍奶"), its other names and what it means."""

    id: str
    namespace: str
    term: str
    aliases: list[str] = field(default_factory=list)
    definition: str = ""
    created_at: str
    updated_at: str

    @property
    def names(self) -> list[str]:
        return [self.term, *self.aliases]


@dataclass(frozen=True, kw_only=True)
class MentionedTerm(Term):
    """A term a text mentions, and the name (the term or an alias) it used."""

    matched: str
