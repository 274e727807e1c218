"""The position probe: does a pairwise judge keep its verdict when the two outputs swap places?"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit._report import pval
from evalkit.errors import EvalkitError
from evalkit.probes._paired import difference_interval, mcnemar_exact_p
from evalkit.probes._verdicts import read_verdicts
from evalkit.stats import Interval, wilson_interval


class PositionProbe(BaseModel):
    """Position consistency and position bias of one judge.

    consistency: share of items judged in both orders (both verdicts usable) with the same winner.
    first/second_position_rate, tie_rate: shares of all usable verdicts whose winner was shown
    first, shown second, or a tie. position_bias: on items with a decisive verdict in both orders,
    P(A wins | A shown first) - P(A wins | A shown second), equal to the share won by the first-shown
    output twice minus the share won by the second-shown twice; 0 means no pull, and it is twice the
    excess over 0.5 of the first-shown output's win rate on those items.
    """

    model_config = ConfigDict(frozen=True)
    judge: str
    pairs: int
    consistency: float | None
    consistency_ci: Interval | None
    first_position_rate: float | None
    second_position_rate: float | None
    tie_rate: float | None
    missing: int
    position_bias: float | None
    position_bias_ci: Interval | None
    position_bias_p: float | None
    decisive_pairs: int

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def position_probe(
    verdicts: pl.DataFrame, *, judge: str | None = None, confidence: float = 0.95, seed: int = 0
) -> PositionProbe:
    """Position consistency and bias from pairwise verdicts in both orders.

    Parameters
    ----------
    verdicts:
        A frame as from `read_verdicts` (item, judge, shown_first, winner).
    judge:
        The judge to probe; may be left out when the frame holds one judge only.
    confidence:
        Coverage of the intervals: Wilson for consistency, Newcombe's paired method 10 for the bias
        (with McNemar's exact p-value).
    seed:
        Accepted for a stable call signature; every interval here is closed-form, so nothing is drawn.

    Returns
    -------
    A `PositionProbe`; ``missing`` counts verdicts whose winner is null (they are left out of every rate).
    """
    del seed
    judges = sorted(set(verdicts["judge"].to_list()))
    if judge is None:
        if len(judges) != 1:
            raise EvalkitError(f"these verdicts hold judges {judges}; choose one with judge=")
        judge = judges[0]
    if judge not in judges:
        raise EvalkitError(f"no verdicts from judge {judge!r}; the judges present are {judges}")
    own = verdicts.filter(pl.col("judge") == judge)
    usable = own.filter(pl.col("winner").is_not_null())
    counts = usable.select(
        first=(pl.col("winner") == pl.col("shown_first")).sum(),
        tie=(pl.col("winner") == "tie").sum(),
        total=pl.len(),
    ).row(0, named=True)
    total = int(counts["total"])
    second = total - int(counts["first"]) - int(counts["tie"])

    wide = (
        usable.pivot(on="shown_first", index="item", values="winner", aggregate_function="first")
        if usable.height
        else pl.DataFrame(schema={"item": pl.String})
    )
    for order in ("A", "B"):
        if order not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.String).alias(order))
    both = wide.filter(pl.col("A").is_not_null() & pl.col("B").is_not_null())
    same = int(both.filter(pl.col("A") == pl.col("B")).height)
    decisive = both.filter((pl.col("A") != "tie") & (pl.col("B") != "tie"))
    # x1: A wins when A is shown first; x2: A wins when A is shown second
    table = decisive.select(
        a=((pl.col("A") == "A") & (pl.col("B") == "A")).sum(),
        b=((pl.col("A") == "A") & (pl.col("B") == "B")).sum(),
        c=((pl.col("A") == "B") & (pl.col("B") == "A")).sum(),
        d=((pl.col("A") == "B") & (pl.col("B") == "B")).sum(),
    ).row(0, named=True)
    a, b, c, d = (int(table[k] or 0) for k in "abcd")
    n_dec = a + b + c + d
    return PositionProbe(
        judge=judge,
        pairs=both.height,
        consistency=same / both.height if both.height else None,
        consistency_ci=wilson_interval(same, both.height, confidence=confidence),
        first_position_rate=int(counts["first"]) / total if total else None,
        second_position_rate=second / total if total else None,
        tie_rate=int(counts["tie"]) / total if total else None,
        missing=own.height - usable.height,
        position_bias=(b - c) / n_dec if n_dec else None,
        position_bias_ci=difference_interval(a, b, c, d, confidence=confidence),
        position_bias_p=mcnemar_exact_p(b, c),
        decisive_pairs=n_dec,
    )


def position_from_file(
    path: str | Path, *, judge: str | None = None, confidence: float = 0.95, seed: int = 0
) -> PositionProbe:
    """`position_probe` on the pairwise verdicts file at `path`."""
    return position_probe(read_verdicts(path), judge=judge, confidence=confidence, seed=seed)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Interval | None) -> str:
    return "" if ci is None else f" [{100 * ci[0]:.1f}%, {100 * ci[1]:.1f}%]"


def _ci_points(ci: Interval | None) -> str:
    """The interval of a difference of rates, in signed points as the difference itself."""
    return "" if ci is None else f" [{100 * ci[0]:+z.1f}, {100 * ci[1]:+z.1f}]"


def format_position(p: PositionProbe) -> str:
    """A few terminal lines for `p`."""
    bias = "—" if p.position_bias is None else f"{100 * p.position_bias:+z.1f} points"
    p_text = "" if p.position_bias_p is None else f", McNemar exact p = {pval(p.position_bias_p, digits=3)}"
    return "\n".join(
        [
            f"Position probe, judge {p.judge}",
            f"  consistent in both orders: {_pct(p.consistency)}{_ci(p.consistency_ci)} of {p.pairs} items (Wilson)",
            f"  winner shown first {_pct(p.first_position_rate)}, second {_pct(p.second_position_rate)}, "
            f"tie {_pct(p.tie_rate)}",
            f"  position bias: {bias}{_ci_points(p.position_bias_ci)} on {p.decisive_pairs} items (Newcombe){p_text}",
            f"  missing verdicts: {p.missing}",
        ]
    )
