"""The position probe over many judges and sets at once: one probe per (set, judge), and a table of them."""

from __future__ import annotations

import polars as pl

from evalkit.probes._position import PositionProbe, position_probe


def position_by(
    verdicts: pl.DataFrame, by: str | pl.Expr, *, confidence: float = 0.95
) -> list[tuple[str, PositionProbe]]:
    """`position_probe` for every judge within every group of `verdicts`.

    Parameters
    ----------
    verdicts:
        A pairwise verdicts frame (item, judge, shown_first, winner).
    by:
        A column, or an expression, naming each verdict's group (e.g. its data set).
    confidence:
        Coverage of the intervals.

    Returns
    -------
    (group, probe) pairs, sorted by group and judge.
    """
    keyed = verdicts.with_columns((pl.col(by) if isinstance(by, str) else by).cast(pl.String).alias("_group"))
    out: list[tuple[str, PositionProbe]] = []
    for (group, judge), part in keyed.sort("_group", "judge").group_by(
        "_group", "judge", maintain_order=True
    ):
        out.append((str(group), position_probe(part.drop("_group"), judge=str(judge), confidence=confidence)))
    return out


def position_table(probes: list[tuple[str, PositionProbe]]) -> pl.DataFrame:
    """One row per (group, judge): consistency with its interval, first/second/tie rates, bias with interval and p."""
    rows = []
    for group, p in probes:
        cl, ch = p.consistency_ci or (None, None)
        bl, bh = p.position_bias_ci or (None, None)
        rows.append(
            {
                "set": group,
                "judge": p.judge,
                "pairs": p.pairs,
                "consistency": p.consistency,
                "consistency_low": cl,
                "consistency_high": ch,
                "first": p.first_position_rate,
                "second": p.second_position_rate,
                "tie": p.tie_rate,
                "missing": p.missing,
                "position_bias": p.position_bias,
                "bias_low": bl,
                "bias_high": bh,
                "bias_p": p.position_bias_p,
            }
        )
    schema = {
        "set": pl.String,
        "judge": pl.String,
        "pairs": pl.Int64,
        **dict.fromkeys(
            ["consistency", "consistency_low", "consistency_high", "first", "second", "tie"], pl.Float64
        ),
        "missing": pl.Int64,
        **dict.fromkeys(["position_bias", "bias_low", "bias_high", "bias_p"], pl.Float64),
    }
    return pl.DataFrame(rows, schema=schema, orient="row")
