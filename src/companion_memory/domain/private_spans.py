"""``<private>…</private>``: what the user marked as never to be kept.

The span goes to the model with the turn (the user said it in the chat), but it is cut
out before anything is stored: the message, its episode, a memory or a candidate. A
span left open runs to the end of the text, so a forgotten closing tag keeps the rest
private rather than storing it.
"""

from __future__ import annotations

import re

_SPAN = re.compile(r"[ \t]*<private\b[^>]*>.*?(?:</private\s*>|\Z)[ \t]*", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """``text`` without its private spans: words the span stood between with spaces meet
    at one space, words it was glued to (as in Chinese) stay glued."""
    if "<" not in text:
        return text

    def seam(match: re.Match[str]) -> str:
        inside = match.start() > 0 and match.end() < len(text)
        spaced = match.group(0)[:1] in " \t" or match.group(0)[-1:] in " \t"
        return " " if inside and spaced else ""

    return _STRAY_CLOSE.sub("", _SPAN.sub(seam, text))
