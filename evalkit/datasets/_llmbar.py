"""LLMBar (Zeng et al. 2023): pairwise items with a gold label, and judges' stored verdicts in both orders.

Read in place from the folder the user names. Layout, as in the LLMBar repository::

    <folder>/Dataset/<set>/dataset.json
    <folder>/Dataset/<set>/evaluators/<judge>/<method>/result.json       (verdicts, both orders)
    <folder>/Dataset/<set>/evaluators/<judge>/<method>/statistics.json   (published figures)

Output 1 is called A and output 2 is B. In ``result.json`` the last entry of each item's ``results``
holds ``"swap = False"`` (A shown first) and ``"swap = True"`` (B shown first), each with a winner
"1", "2" or null already in the original labels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalkit.calibration import cohen_kappa_labels, write_ratings
from evalkit.errors import EvalkitError
from evalkit.probes import write_verdicts

LAYOUT = (
    "expected <folder>/Dataset/<set>/dataset.json and "
    "<folder>/Dataset/<set>/evaluators/<judge>/<method>/result.json, as in the LLMBar repository"
)
_WINNER = {"1": "A", "2": "B", None: None}
_VERDICTS = {"item": pl.String, "judge": pl.String, "shown_first": pl.String, "winner": pl.String}


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EvalkitError(f"{path}: no such file; {LAYOUT}") from exc
    except json.JSONDecodeError as exc:
        raise EvalkitError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc


@dataclass(frozen=True)
class JudgeFigures:
    """One judge on one set, computed from its stored verdicts as LLMBar's evaluate.py does.

    ``correct_*`` count a null winner as wrong; ``equal`` counts two null winners as equal and divides
    by all items. The kappas are Cohen's kappa of the judge's winner against the gold label with both
    coded the same way and null winners left out (``n_*`` items used) — the ``kappa_*`` fields in
    statistics.json code the judge's "2" as 0 against a gold 2, so they are not this.
    """

    n: int
    correct_false: int
    correct_true: int
    correct_both: int
    equal: int
    missing_false: int
    missing_true: int
    kappa_false: float | None
    kappa_true: float | None

    @property
    def correct_average(self) -> float:
        """Accuracy averaged over the two orders, as a share (upstream prints it as a percentage)."""
        return (self.correct_false + self.correct_true) / 2 / self.n

    @property
    def kappa_average(self) -> float | None:
        """Mean of the two orders' kappas."""
        if self.kappa_false is None or self.kappa_true is None:
            return None
        return (self.kappa_false + self.kappa_true) / 2

    def upstream_strings(self) -> dict[str, str]:
        """The ``correct_*`` and ``equal`` figures formatted exactly as statistics.json has them."""
        n = self.n

        def share(k: int) -> str:
            return f"{k} / {n} = {k / n * 100}%"

        return {
            "correct_False": share(self.correct_false),
            "correct_True": share(self.correct_true),
            "correct_average": f"{(self.correct_false + self.correct_true) / 2 / n * 100}%",
            "correct_both": share(self.correct_both),
            "equal": share(self.equal),
        }

    def to_json(self) -> dict[str, Any]:
        """Counts, shares and corrected kappas as JSON."""
        return {
            "n": self.n,
            "correct_false": self.correct_false / self.n,
            "correct_true": self.correct_true / self.n,
            "correct_average": self.correct_average,
            "correct_both": self.correct_both / self.n,
            "equal": self.equal / self.n,
            "missing_false": self.missing_false,
            "missing_true": self.missing_true,
            "kappa_false": self.kappa_false,
            "kappa_true": self.kappa_true,
            "kappa_average": self.kappa_average,
        }


@dataclass(frozen=True)
class LLMBarSet:
    """One LLMBar set: gold labels and, per judge, verdicts in both orders and the published statistics."""

    name: str
    gold: pl.DataFrame
    verdicts: dict[str, pl.DataFrame]
    statistics: dict[str, dict[str, Any]] = field(default_factory=dict)

    def figures(self, judge: str) -> JudgeFigures:
        """The figures of `judge` on this set, recomputed from its verdicts."""
        wide = (
            self.verdicts[judge]
            .pivot(on="shown_first", index="item", values="winner", aggregate_function="first")
            .join(self.gold, on="item", how="right")
        )
        ok_f = pl.col("A") == pl.col("label")
        ok_t = pl.col("B") == pl.col("label")
        row = wide.select(
            n=pl.len(),
            cf=ok_f.fill_null(False).sum(),
            ct=ok_t.fill_null(False).sum(),
            cb=(ok_f & ok_t).fill_null(False).sum(),
            # upstream compares the two winners with ==, so two nulls count as equal
            eq=((pl.col("A") == pl.col("B")) | (pl.col("A").is_null() & pl.col("B").is_null()))
            .fill_null(False)
            .sum(),
            mf=pl.col("A").is_null().sum(),
            mt=pl.col("B").is_null().sum(),
        ).row(0, named=True)

        def kappa(order: str) -> float | None:
            used = wide.filter(pl.col(order).is_not_null())
            if not used.height:
                return None
            return cohen_kappa_labels(used[order].to_list(), used["label"].to_list())

        return JudgeFigures(
            n=int(row["n"]),
            correct_false=int(row["cf"]),
            correct_true=int(row["ct"]),
            correct_both=int(row["cb"]),
            equal=int(row["eq"]),
            missing_false=int(row["mf"]),
            missing_true=int(row["mt"]),
            kappa_false=kappa("A"),
            kappa_true=kappa("B"),
        )


@dataclass(frozen=True)
class LLMBar:
    """Every set found under the folder, by name (e.g. ``LLMBar/Natural``, ``Processed/MT-Bench``)."""

    folder: Path
    method: str
    sets: dict[str, LLMBarSet]

    def verdicts(self) -> pl.DataFrame:
        """All judges' verdicts on all sets, in the pairwise verdicts shape (item = ``<set>/<index>``)."""
        frames = [f for s in self.sets.values() for f in s.verdicts.values()]
        return pl.concat(frames) if frames else pl.DataFrame(schema=_VERDICTS)

    def ratings(self, *, shown_first: str = "A") -> pl.DataFrame:
        """Gold and judges as raters (values "A"/"B"), each judge from the run with `shown_first` first.

        Parameters
        ----------
        shown_first:
            "A" for LLMBar's original order (swap = False), "B" for the swapped run.

        Returns
        -------
        A ratings frame (item, rater, value, kind, number, criterion, slice, ...) with slice = set name;
        a null winner is a missing rating.
        """
        gold = [
            s.gold.select(
                "item",
                pl.lit("gold").alias("rater"),
                pl.col("label").alias("value"),
                pl.lit(name).alias("slice"),
            )
            for name, s in self.sets.items()
        ]
        judged = [
            v.filter(pl.col("shown_first") == shown_first).select(
                "item",
                pl.col("judge").alias("rater"),
                pl.col("winner").alias("value"),
                pl.lit(name).alias("slice"),
            )
            for name, s in self.sets.items()
            for v in s.verdicts.values()
        ]
        frame = pl.concat(gold + judged)
        return frame.with_columns(
            pl.when(pl.col("value").is_not_null()).then(pl.lit("str")).alias("kind"),
            pl.lit(None, dtype=pl.Float64).alias("number"),
            pl.lit(None, dtype=pl.String).alias("criterion"),
        )

    def write_ratings(self, path: str | Path, *, shown_first: str = "A") -> Path:
        """Write `ratings` to a ratings file (atomic)."""
        return write_ratings(path, self.ratings(shown_first=shown_first))

    def write_verdicts(self, path: str | Path) -> Path:
        """Write `verdicts` to a pairwise verdicts file (atomic)."""
        return write_verdicts(path, self.verdicts())


def _read_set(root: Path, folder: Path, method: str) -> LLMBarSet:
    name = folder.relative_to(root).as_posix()
    items = _load_json(folder / "dataset.json")
    if not isinstance(items, list):
        raise EvalkitError(f"{folder / 'dataset.json'}: expected a list of items; {LAYOUT}")
    ids = [f"{name}/{i}" for i in range(len(items))]
    labels = []
    for i, item in enumerate(items):
        if item.get("label") not in (1, 2):
            raise EvalkitError(
                f"{folder / 'dataset.json'}: item {i}: label must be 1 or 2, not {item.get('label')!r}"
            )
        labels.append("A" if item["label"] == 1 else "B")
    gold = pl.DataFrame({"item": ids, "label": labels})
    verdicts: dict[str, pl.DataFrame] = {}
    statistics: dict[str, dict[str, Any]] = {}
    evaluators = folder / "evaluators"
    for result in sorted(evaluators.glob(f"*/{method}/result.json")) if evaluators.is_dir() else []:
        judge = result.parent.parent.name
        judged = _load_json(result)
        if not isinstance(judged, list) or len(judged) != len(items):
            raise EvalkitError(f"{result}: expected {len(items)} items, one per item of dataset.json")
        rows = []
        for i, (item, verdict) in enumerate(zip(items, judged, strict=True)):
            if verdict.get("label") != item["label"] or verdict.get("input") != item["input"]:
                raise EvalkitError(f"{result}: item {i} is not item {i} of {folder / 'dataset.json'}")
            last = verdict["results"][-1]
            for key, first in (("swap = False", "A"), ("swap = True", "B")):
                winner = last[key]["winner"]
                if winner not in _WINNER:
                    raise EvalkitError(f"{result}: item {i}: {key} winner {winner!r} is not '1', '2' or null")
                rows.append({"item": ids[i], "judge": judge, "shown_first": first, "winner": _WINNER[winner]})
        verdicts[judge] = pl.DataFrame(rows, schema=_VERDICTS)
        stats_path = result.with_name("statistics.json")
        if stats_path.exists():
            statistics[judge] = _load_json(stats_path)
    return LLMBarSet(name=name, gold=gold, verdicts=verdicts, statistics=statistics)


def load_llmbar(folder: str | Path, *, method: str = "Vanilla_NoRules") -> LLMBar:
    """Load LLMBar's sets, gold labels and stored judge verdicts from `folder`, read in place.

    Parameters
    ----------
    folder:
        The LLMBar folder (holding ``Dataset/``), or its ``Dataset`` folder.
    method:
        The evaluator method folder whose verdicts to read.

    Returns
    -------
    An `LLMBar` with every set that has a dataset.json.

    Raises
    ------
    EvalkitError
        When the folder or a file is missing or malformed, naming the path and the expected layout.
    """
    base = Path(folder)
    root = base / "Dataset" if (base / "Dataset").is_dir() else base
    if not root.is_dir():
        raise EvalkitError(f"{base}: no such folder; {LAYOUT}")
    found = sorted(p.parent for p in root.rglob("dataset.json"))
    if not found:
        raise EvalkitError(f"{root}: no dataset.json found; {LAYOUT}")
    sets = {s.name: s for s in (_read_set(root, f, method) for f in found)}
    return LLMBar(folder=base, method=method, sets=sets)
