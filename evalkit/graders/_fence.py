"""Fencing untrusted text in judge prompts: fence tags it cannot know, and no spelling of one left inside it.

Two layers. Each request's untrusted fences are named with a suffix hashed from the untrusted text itself, so a
candidate would have to contain the hash of its own text to close its fence. And any look-alike of a fence tag
inside untrusted text (fullwidth or small-form brackets, zero-width or other format characters, soft hyphens,
combining marks, Cyrillic or Greek letters, angle brackets such as ⟨ 〈 ❮) is found on a folded "skeleton" of
the text and its bracket replaced by '‹', which the skeleton does not read as a bracket. The suffix is a pure
function of the prompt's inputs, so the prompt, and with it the cache key, stays the same run after run.
"""

from __future__ import annotations

import re
import unicodedata

from evalkit._hashing import sha256_hex

FENCE_TAGS = ("candidate_output", "case_input", "reference", "rubric", "criteria", "output_a", "output_b")
#: fences around text the suite did not write (the rubric and criteria are the suite author's)
UNTRUSTED_FENCES = ("candidate_output", "case_input", "reference", "output_a", "output_b")
INERT = "‹"  # what a look-alike tag's bracket becomes; deliberately not in _CONFUSABLE

_CONFUSABLE = str.maketrans(
    {
        **dict.fromkeys("˂ᐸ⟨〈〈《❮❬❰⦑⧼﹤＜", "<"),
        **dict.fromkeys("˃ᐳ⟩〉〉》❯❭❱⦒⧽﹥＞›", ">"),
        **dict.fromkeys("⁄∕⧸╱／", "/"),
        **dict.fromkeys("‗ˍ＿", "_"),
        # Cyrillic and Greek letters that render like the Latin letters of the tag names
        **{
            "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
            "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "т": "t", "п": "n", "м": "m",
            "к": "k", "в": "b", "н": "h", "ց": "g", "ս": "u", "ο": "o", "α": "a", "ε": "e", "ι": "i",
            "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ԍ": "g", "ɡ": "g",
            "ı": "i", "ℓ": "l",
        },
    }
)  # fmt: skip
_DROPPED = {"Cf", "Mn", "Me", "Cs", "Co", "Cn"}
_LOOKALIKE_TAG = re.compile(r"<\s*/?\s*(?:" + "|".join(FENCE_TAGS) + r")")


def skeleton(text: str) -> tuple[str, list[int]]:
    """The text folded for matching (NFKC, casefolded, format and combining characters dropped, confusables
    mapped), and for each of its characters the index in `text` it came from."""
    if text.isascii():  # the common case: nothing to fold but case
        return text.lower(), list(range(len(text)))
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if unicodedata.category(c) in _DROPPED:
                continue
            for folded in unicodedata.normalize("NFKC", c.translate(_CONFUSABLE)):
                out.append(folded)
                origin.append(i)
    return "".join(out), origin


def neutralise(text: str) -> str:
    """Make every spelling of a fence tag inside untrusted text inert: its bracket becomes '‹'."""
    folded, origin = skeleton(text)
    brackets = {origin[m.start()] for m in _LOOKALIKE_TAG.finditer(folded)}
    if not brackets:
        return text
    return "".join(INERT if i in brackets else ch for i, ch in enumerate(text))


def fence_suffix(*untrusted: str) -> str:
    """A suffix for this prompt's untrusted fences, hashed from their contents (no secret, no randomness)."""
    return sha256_hex("evalkit judge fence v1\0" + "\0".join(untrusted))[:10]


def suffixed(template: str, suffix: str) -> str:
    """The template with its untrusted fences renamed `<name_suffix>` ... `</name_suffix>`."""
    names = "|".join(UNTRUSTED_FENCES)
    return re.sub(rf"<(/?)({names})>", rf"<\1\2_{suffix}>", template)
