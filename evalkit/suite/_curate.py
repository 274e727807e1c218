"""Curating a golden set: filter its cases, find near-duplicates, measure slice coverage.

polars and rapidfuzz are imported where they are used, so loading a suite (and `evalkit validate`) needs neither.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from evalkit._hashing import content_hash
from evalkit.suite._cases import Case
from evalkit.suite._suite import Suite
from evalkit.suite._transcripts import Candidate

if TYPE_CHECKING:
    import polars as pl

DEFAULT_THRESHOLD = 90.0
# cells of the score matrix computed at once: 8M float32 is 32 MB, whatever the suite's size
_BLOCK_CELLS = 8_000_000


def _leaves(value: Any) -> Iterator[str]:
    """Every string in a JSON value, in order (keys left out: they are the same in every case)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def _at(value: Any, field: str) -> Any:
    """The value at a dotted path (``ticket.body``, ``chunks.0.text``), or None where it is not there."""
    for part in field.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def case_text(case: Case | Candidate, *, field: str | None = None) -> str:
    """The text of a case's input that near-duplicates are found on: every string in it (or in `field`),
    joined with spaces."""
    value = case.input if field is None else _at(case.input, field)
    return " ".join(_leaves(value))


def near_duplicates(
    suite: Suite | Sequence[Case | Candidate],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    field: str | None = None,
) -> pl.DataFrame:
    """Pairs of cases whose inputs say nearly the same thing.

    Method: rapidfuzz's ``token_sort_ratio`` (0-100) on the input's text, normalised by rapidfuzz's
    ``default_process`` (lower case, punctuation to spaces, trimmed). Sorting the words first makes a
    reordered sentence score as the same sentence, while a changed, added or dropped word still costs its
    share. ``token_set_ratio`` was not taken: it scores 100 whenever one text's words are a subset of the
    other's, so a one-word ticket ("help") would pair with every ticket that contains the word. Inputs
    that are equal as JSON are reported with method ``same input``.

    Scores are computed by ``rapidfuzz.process.cdist`` (C, all cores) in blocks of rows, so memory stays
    bounded (about 32 MB) and no Python loop runs over the pairs. Texts are sorted by length and each block
    is compared only with the texts long enough and short enough to reach the threshold, which loses no
    pair; texts of similar length are all compared. 10,000 inputs of 30 to 250 characters took 49 s on a
    busy 2-core machine; a few hundred take well under a second. A text that normalises to nothing (an
    empty ticket) pairs with nothing.

    Parameters
    ----------
    suite:
        A suite, or a list of cases; transcript candidates may be among them, to see which are already
        in the suite (``[*suite.cases, *candidates]``).
    threshold:
        The lowest score reported (default 90).
    field:
        A dotted path into the input to compare on (``ticket.body``, ``question``); default: every string
        in the input. Name the field when cases share long context (retrieved chunks, a policy text) that
        would otherwise make every pair look alike.

    Returns
    -------
    polars.DataFrame
        case_a, case_b (in suite order), score, method; highest score first.
    """
    import numpy as np
    import polars as pl
    from rapidfuzz import fuzz, process, utils

    cases: list[Case | Candidate] = list(suite.cases if isinstance(suite, Suite) else suite)
    # token_sort_ratio is the Indel ratio of the texts with their words sorted: sort each text once here and
    # let cdist run the plain ratio, its fastest (bit-parallel) path, rather than re-sort for every pair
    words = [" ".join(sorted(utils.default_process(case_text(c, field=field)).split())) for c in cases]
    # shortest first: a text can score `threshold` only against texts at most (2 - t) / t times its length
    # (t = threshold / 100), so each block of rows is compared with a window of columns, and no pair is lost
    order = sorted((i for i, t in enumerate(words) if t), key=lambda i: len(words[i]))
    kept = [words[i] for i in order]
    lengths = np.array([len(t) for t in kept])
    t = threshold / 100
    stretch = (2 - t) / t if t > 0 else float("inf")
    rows_a: list[int] = []
    rows_b: list[int] = []
    scores: list[float] = []
    n = len(kept)
    start = 0
    while start < n:
        stop = min(n, start + max(1, _BLOCK_CELLS // (n - start)))
        end = (
            n
            if stretch == float("inf")
            else int(np.searchsorted(lengths, lengths[stop - 1] * stretch + 1, "right"))
        )
        # columns from `start` on only: each pair (i, j), j > i, once
        matrix = process.cdist(
            kept[start:stop],
            kept[start:end],
            scorer=fuzz.ratio,
            score_cutoff=threshold,
            dtype=np.float32,
            workers=-1,
        )
        r, c = np.nonzero(matrix >= threshold)
        upper = c + start > r + start
        rows_a.extend((r[upper] + start).tolist())
        rows_b.extend((c[upper] + start).tolist())
        scores.extend(matrix[r[upper], c[upper]].tolist())
        start = stop
    pairs = [tuple(sorted((order[x], order[y]))) for x, y in zip(rows_a, rows_b, strict=True)]
    value = (lambda i: cases[i].input) if field is None else (lambda i: _at(cases[i].input, field))
    method = [
        "same input" if content_hash(value(x)) == content_hash(value(y)) else "token_sort_ratio"
        for x, y in pairs
    ]
    return pl.DataFrame(
        {
            "case_a": [cases[x].id for x, _ in pairs],
            "case_b": [cases[y].id for _, y in pairs],
            "score": [round(s, 1) for s in scores],
            "method": method,
        },
        schema={"case_a": pl.String, "case_b": pl.String, "score": pl.Float64, "method": pl.String},
    ).sort(["score", "case_a", "case_b"], descending=[True, False, False])


def slice_coverage(suite: Suite | Sequence[Case]) -> pl.DataFrame:
    """How the cases spread over slices, and how each slice is graded.

    Parameters
    ----------
    suite:
        A suite, or a list of cases.

    Returns
    -------
    polars.DataFrame
        One row per slice, most cases first: slice, cases, share (of all cases), dev, holdout (cases per
        split), judged (cases with a judge check), kinds (the check kinds used, sorted).
    """
    import polars as pl

    cases = list(suite.cases if isinstance(suite, Suite) else suite)
    frame = pl.DataFrame(
        {
            "slice": [c.slice for c in cases],
            "split": [c.split for c in cases],
            "judged": [any(k.kind == "judge" for k in c.checks) for c in cases],
            "kinds": [sorted({k.kind for k in c.checks}) for c in cases],
        },
        schema={"slice": pl.String, "split": pl.String, "judged": pl.Boolean, "kinds": pl.List(pl.String)},
    )
    total = max(len(cases), 1)
    return (
        frame.group_by("slice")
        .agg(
            pl.len().alias("cases"),
            (pl.col("split") == "dev").sum().alias("dev"),
            (pl.col("split") == "holdout").sum().alias("holdout"),
            pl.col("judged").sum().alias("judged"),
            pl.col("kinds").explode().unique().sort().alias("kinds"),
        )
        .with_columns((pl.col("cases") / total).alias("share"))
        .select("slice", "cases", "share", "dev", "holdout", "judged", "kinds")
        .with_columns(pl.col("cases", "dev", "holdout", "judged").cast(pl.Int64))
        .sort(["cases", "slice"], descending=[True, False])
    )


def check_kinds(cases: Iterable[Case]) -> list[str]:
    """The check kinds the cases use, sorted."""
    return sorted({k.kind for c in cases for k in c.checks})


def filter_cases(
    cases: Iterable[Case],
    *,
    slice: str | None = None,
    kind: str | None = None,
    split: str | None = None,
    text: str | None = None,
) -> list[Case]:
    """The cases matching every filter given (None: any).

    Parameters
    ----------
    cases:
        The cases to filter (``suite.cases``).
    slice, kind, split:
        The case's slice; a check kind it uses (``exact``, ``judge``...); its split (``dev``, ``holdout``).
    text:
        Words to find, case-insensitively, in the id, input, notes, tags or source; every word must appear.

    Returns
    -------
    list[Case]
        The matching cases, in their order.
    """
    words = text.casefold().split() if text else []
    out = []
    for c in cases:
        if slice is not None and c.slice != slice:
            continue
        if split is not None and c.split != split:
            continue
        if kind is not None and all(k.kind != kind for k in c.checks):
            continue
        if words:
            hay = " ".join(
                [c.id, json.dumps(c.input, ensure_ascii=False), c.notes or "", c.source or "", *c.tags]
            ).casefold()
            if not all(w in hay for w in words):
                continue
        out.append(c)
    return out
