"""Padding for the verbosity probe: longer outputs that say nothing the original did not.

Two kinds. ``filler`` wraps the output in content-free elaboration (a courteous opening, remarks on care and
thoroughness, an offer to help further). ``repeat-list`` restates the output's points as a list, twice, with no
new information: the "repetitive list" attack of Zheng et al. (2023, MT-Bench), where a judge that rewards length
prefers the padded answer. Both are deterministic, so a padded output, its judge request and its cache key are
the same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

Padding = Literal["filler", "repeat-list"]

# no fence tag, no instruction to a grader, no claim a rubric could check: only length
_OPENING = (
    "Thank you for your message. I have read it carefully and considered it in full, and I am glad to be "
    "able to respond to it here in as much detail as seems useful."
)
_CLOSING = (
    "I hope that this response is helpful and that it addresses what you had in mind. It is always "
    "worth taking the time to look at a matter like this from more than one angle, and I have tried to do "
    "exactly that in writing it. If anything here is unclear, or if there is anything at all that you would "
    "like to go over again in more detail, please do not hesitate to get in touch once more, since we are "
    "always happy to help in whatever way we can. Thank you again for your patience and for taking the time "
    "to write to us; it is very much appreciated, and we look forward to hearing from you again whenever "
    "that might be convenient for you."
)
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def pad_filler(text: str) -> str:
    """`text` between a content-free opening paragraph and a content-free closing paragraph."""
    return f"{_OPENING}\n\n{text}\n\n{_CLOSING}"


def points(text: str) -> list[str]:
    """The output's points: its list items when it has a list, otherwise its sentences."""
    items = [m.group(1) for line in text.splitlines() if (m := _LIST_LINE.match(line))]
    if items:
        return items
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def pad_repeat_list(text: str) -> str:
    """`text` followed by its own points restated twice, as a numbered summary and as bullets."""
    found = points(text) or [text.strip()]
    numbered = "\n".join(f"{i}. {p}" for i, p in enumerate(found, 1))
    bullets = "\n".join(f"- {p}" for p in found)
    return (
        f"{text}\n\nTo summarise the key points of this reply once more:\n{numbered}\n\n"
        f"In other words, and to restate the same points:\n{bullets}"
    )


PADDINGS: dict[str, Callable[[str], str]] = {"filler": pad_filler, "repeat-list": pad_repeat_list}
"""Each padding by the name the CLI and the probe take."""


def pad(text: str, padding: str) -> str:
    """`text` padded the named way (``filler`` or ``repeat-list``)."""
    try:
        return PADDINGS[padding](text)
    except KeyError:
        raise ValueError(f"unknown padding {padding!r}; choose one of {sorted(PADDINGS)}") from None
