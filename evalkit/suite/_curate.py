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


def case_text(case: Case, *, field: str | None = None) -> str:
    """The text of a case's input that near-duplicates are found on: every string in it (or in `field`),
    joined with spaces."""
    value = case.input if field is None else _at(case.input, field)
    return " ".join(_leaves(value))


def near_duplicates(
    suite: Suite | Sequence[Case],
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
    bounded (about 32 MB) and no Python loop runs over the pairs; the work is still all pairs, about a
    second for 10,000 short inputs. A text that normalises to nothing (an empty ticket) pairs with nothing.

    Parameters
    ----------
    suite:
        A suite, or a list of cases.
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

    cases = list(suite.cases if isinstance(suite, Suite) else suite)
    texts = [utils.default_process(case_text(c, field=field)) for c in cases]
    keep = [i for i, t in enumerate(texts) if t]
    kept = [texts[i] for i in keep]
    same = [content_hash(cases[i].input if field is None else _at(cases[i].input, field)) for i in keep]
    rows_a: list[int] = []
    rows_b: list[int] = []
    scores: list[float] = []
    n = len(kept)
    block = max(1, _BLOCK_CELLS // max(n, 1))
    for start in range(0, n, block):
        stop = min(n, start + block)
        # only the columns from `start` on: pairs (i, j) with j > i, each once
        matrix = process.cdist(
            kept[start:stop],
            kept[start:],
            scorer=fuzz.token_sort_ratio,
            score_cutoff=threshold,
            dtype=np.float32,
            workers=-1,
        )
        r, c = np.nonzero(matrix >= threshold)
        i, j = r + start, c + start
        upper = j > i
        rows_a.extend(i[upper].tolist())
        rows_b.extend(j[upper].tolist())
        scores.extend(matrix[r[upper], c[upper]].tolist())
    method = [
        "same input" if same[a] == same[b] else "token_sort_ratio"
        for a, b in zip(rows_a, rows_b, strict=True)
    ]
    return pl.DataFrame(
        {
            "case_a": [cases[keep[a]].id for a in rows_a],
            "case_b": [cases[keep[b]].id for b in rows_b],
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
