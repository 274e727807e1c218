"""PandaLM's test set (Wang et al. 2023): 999 pairwise items, three human raters and two judges.

Read in place from the folder the user names::

    <folder>/data/testset-v1.json                 annotator1..3: 0 (tie), 1 or 2 (the better response)
    <folder>/data/gpt-3.5-turbo-testset-v1.json   gpt_result: "1", "2", "Tie" or "garbage" (unparseable)
    <folder>/data/pandalm-7b-testset-v1.json      pandalm_result: 0, 1 or 2

The three files line up by ``idx``. Labels are kept as PandaLM codes them (0 tie, 1, 2); a
"garbage" verdict is a missing rating, never a tie.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalkit.calibration import write_ratings
from evalkit.errors import EvalkitError

FILES = {
    "human": "testset-v1.json",
    "gpt-3.5-turbo": "gpt-3.5-turbo-testset-v1.json",
    "PandaLM-7B": "pandalm-7b-testset-v1.json",
}
LAYOUT = (
    "expected <folder>/data/" + ", <folder>/data/".join(FILES.values()) + ", as in the PandaLM repository"
)
HUMANS = ("annotator1", "annotator2", "annotator3")
_GPT = {"1": 1, "2": 2, "Tie": 0, "garbage": None}


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EvalkitError(f"{path}: no such file; {LAYOUT}") from exc
    except json.JSONDecodeError as exc:
        raise EvalkitError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, list):
        raise EvalkitError(f"{path}: expected a list of items; {LAYOUT}")
    return data


@dataclass(frozen=True)
class PandaLM:
    """One row per item: idx, annotator1..3, majority, gpt-3.5-turbo, gpt_garbage, PandaLM-7B."""

    folder: Path
    items: pl.DataFrame

    @property
    def no_majority(self) -> int:
        """Items where all three humans disagree (each label once); their majority is missing."""
        return int(self.items["majority"].is_null().sum())

    def majority_counts(self) -> dict[str, int]:
        """Items per majority label: "tie" (0), "1", "2", and "none" for items without a majority."""
        counts = dict(self.items.group_by("majority").len().iter_rows())
        return {
            "tie": counts.get(0, 0),
            "1": counts.get(1, 0),
            "2": counts.get(2, 0),
            "none": counts.get(None, 0),
        }

    def ratings(self) -> pl.DataFrame:
        """Every rater's labels as a ratings frame: annotator1..3, majority, gpt-3.5-turbo, PandaLM-7B.

        Items are ``pandalm/<idx>``; values are the integers 0 (tie), 1, 2; gpt's "garbage" is null.
        """
        raters = [*HUMANS, "majority", "gpt-3.5-turbo", "PandaLM-7B"]
        long = self.items.select("idx", *raters).unpivot(index="idx", on=raters, variable_name="rater")
        return long.select(
            pl.format("pandalm/{}", pl.col("idx")).alias("item"),
            "rater",
            pl.col("value").cast(pl.String).alias("value"),
            pl.when(pl.col("value").is_not_null()).then(pl.lit("int")).alias("kind"),
            pl.col("value").cast(pl.Float64).alias("number"),
            pl.lit(None, dtype=pl.String).alias("criterion"),
            pl.lit(None, dtype=pl.String).alias("slice"),
        )

    def write_ratings(self, path: str | Path) -> Path:
        """Write `ratings` to a ratings file (atomic)."""
        return write_ratings(path, self.ratings())


def load_pandalm(folder: str | Path) -> PandaLM:
    """Load PandaLM's human annotations and the two judges' verdicts from `folder`, read in place.

    Parameters
    ----------
    folder:
        The PandaLM folder (holding ``data/``), or its ``data`` folder.

    Returns
    -------
    A `PandaLM`. The majority label is the one at least two of the three humans gave; with three
    different labels there is no majority and it is null (none of the 999 items is so).

    Raises
    ------
    EvalkitError
        When the folder or a file is missing or the files do not line up, naming the path.
    """
    base = Path(folder)
    data = base / "data" if (base / "data").is_dir() else base
    if not data.is_dir():
        raise EvalkitError(f"{base}: no such folder; {LAYOUT}")
    human, gpt, panda = (_load(data / FILES[k]) for k in ("human", "gpt-3.5-turbo", "PandaLM-7B"))
    if not len(human) == len(gpt) == len(panda):
        raise EvalkitError(
            f"{data}: the three files hold {len(human)}, {len(gpt)} and {len(panda)} items; {LAYOUT}"
        )
    rows = []
    for i, (h, g, p) in enumerate(zip(human, gpt, panda, strict=True)):
        if not h.get("idx") == g.get("idx") == p.get("idx"):
            raise EvalkitError(
                f"{data}: item {i} has idx {h.get('idx')}, {g.get('idx')}, {p.get('idx')}; {LAYOUT}"
            )
        votes = [h[a] for a in HUMANS]
        if any(v not in (0, 1, 2) for v in votes):
            raise EvalkitError(
                f"{data / FILES['human']}: idx {h['idx']}: annotators gave {votes}; expected 0, 1 or 2"
            )
        if g.get("gpt_result") not in _GPT or p.get("pandalm_result") not in (0, 1, 2):
            raise EvalkitError(
                f"{data}: idx {h['idx']}: unexpected judge verdicts {g.get('gpt_result')!r}, "
                f"{p.get('pandalm_result')!r}"
            )
        majority = next((v for v in (0, 1, 2) if votes.count(v) >= 2), None)
        rows.append(
            {
                "idx": h["idx"],
                **dict(zip(HUMANS, votes, strict=True)),
                "majority": majority,
                "gpt-3.5-turbo": _GPT[g["gpt_result"]],
                "gpt_garbage": g["gpt_result"] == "garbage",
                "PandaLM-7B": p["pandalm_result"],
            }
        )
    schema = {
        "idx": pl.Int64,
        **dict.fromkeys(HUMANS, pl.Int64),
        "majority": pl.Int64,
        "gpt-3.5-turbo": pl.Int64,
        "gpt_garbage": pl.Boolean,
        "PandaLM-7B": pl.Int64,
    }
    return PandaLM(folder=base, items=pl.DataFrame(rows, schema=schema, orient="row"))
