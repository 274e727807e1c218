"""Retrieve-and-extract baseline: quote the chunk sentence that shares the most words with the question."""

from __future__ import annotations

import re
from typing import Any

NOT_COVERED = "I don't know: the policy excerpts do not cover this."

# Function words and question filler carry no topic, so they must not count as overlap.
_STOPWORD_TEXT = """
    a about after again all also am an and any are as at be been before being but by can could did do does
    doing don done during each for from get gets got had has have having he her here hers him his how i if
    in into is it its just me might more most must my no nor not now of off on once only or other our ours
    out over own please same she should so some such than that the their them then there these they this
    those through to too under until up us very was we were what when where which while who whom why will
    with would yes yet you your yours
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# The retriever already matched every chunk on the question's topic, so one shared word ("return",
# "delivery") is what every sentence has in common. Two distinct shared content words is the smallest
# count that says a sentence is about this question rather than about the same topic.
MIN_OVERLAP = 2

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def predict(input: Any) -> str:
    """Answer with the best-overlapping sentence and its chunk id, or say the excerpts do not cover it."""
    question = _content_words(str(input.get("question", "")))
    best_score, best = 0, None
    for chunk in input.get("chunks", []):
        for sentence in _sentences(str(chunk.get("text", ""))):
            score = len(question & _content_words(sentence))
            # Strictly greater: on a tie the retriever's higher-ranked chunk wins.
            if score > best_score:
                best_score, best = score, (sentence, chunk.get("id", ""))
    if best is None or best_score < MIN_OVERLAP:
        return NOT_COVERED
    sentence, chunk_id = best
    return f"{sentence} [{chunk_id}]"
