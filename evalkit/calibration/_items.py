"""What people label: each distinct output of a judged check, with its input, rubric and the judge's verdict."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from evalkit.suite import Suite


@dataclass(frozen=True)
class LabelItem:
    """One output to label for one judged check."""

    case_id: str
    check: str
    output_hash: str
    slice: str
    input: Any
    output: Any
    rubric: list[str] = field(default_factory=list)
    judge_passed: bool | None = None
    judge_reasoning: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case_id, self.check, self.output_hash)


def label_items(
    rows: pl.DataFrame,
    suite: Suite,
    *,
    check: str | None = None,
    only: Iterable[tuple[str, str, str]] | None = None,
    judged_first: bool = False,
) -> list[LabelItem]:
    """The outputs of a run's judged checks, once each (repeats with the same output are one item).

    Every judged check's output is listed, whether or not the judge ran on it (a cheaper check that failed
    first skips the judge, but a person can still say whether the output was good).

    Parameters
    ----------
    rows:
        The run's check rows (``Run.checks()``).
    suite:
        The suite the run was of: the cases' inputs and rubrics come from it.
    check:
        Only this check (by name).
    only:
        Only these (case id, check name, output hash) keys, e.g. the entries of a review sample's labels file.
    judged_first:
        Put the outputs the judge gave a verdict on first, its passes and fails taking turns, so that the first
        ten labels already give a kappa (it needs both verdicts, and both human labels, to be measured).

    Returns
    -------
    list[LabelItem]
        In case order, then check order (with `judged_first`, judged outputs first).
    """
    import polars as pl

    judged = rows.filter((pl.col("check_kind") == "judge") & pl.col("output_hash").is_not_null())
    if check is not None:
        judged = judged.filter(pl.col("check_name") == check)
    if only is not None:
        keys = pl.DataFrame(
            list(only),
            schema={"case_id": pl.String, "check_name": pl.String, "output_hash": pl.String},
            orient="row",
        )
        judged = judged.join(keys.unique(), on=["case_id", "check_name", "output_hash"], how="semi")
    judged = judged.sort("repeat").unique(
        ["case_id", "check_name", "output_hash"], keep="first", maintain_order=True
    )
    cases = {c.id: c for c in suite.cases}
    order = {c.id: i for i, c in enumerate(suite.cases)}
    items = []
    for r in judged.iter_rows(named=True):
        case = cases.get(r["case_id"])
        rubric: list[str] = []
        if case is not None and r["check_index"] is not None and r["check_index"] < len(case.checks):
            rubric = list(getattr(case.checks[r["check_index"]], "rubric", []) or [])
        ran = r["status"] in ("pass", "fail")
        items.append(
            LabelItem(
                case_id=r["case_id"],
                check=r["check_name"],
                output_hash=r["output_hash"],
                slice=r["slice"],
                input=case.input if case is not None else None,
                output=json.loads(r["output"]) if r["output"] is not None else None,
                rubric=rubric,
                judge_passed=r["passed"] if ran else None,
                judge_reasoning=r.get("judge_reasoning"),
            )
        )
    items.sort(key=lambda it: (order.get(it.case_id, len(order)), it.check))
    if judged_first:
        passed = [it for it in items if it.judge_passed is True]
        failed = [it for it in items if it.judge_passed is False]
        turns = [it for pair in itertools.zip_longest(passed, failed) for it in pair if it is not None]
        items = turns + [it for it in items if it.judge_passed is None]
    return items
