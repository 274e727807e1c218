"""Probe effects as frames: one row per probe, attack, or set and judge, with the effect and its interval.

A notebook can filter them before drawing them with ``evalkit.charts.effect_chart``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from evalkit.probes._effects import InjectionEffect, VerbosityEffect
from evalkit.probes._position import PositionProbe
from evalkit.stats import Interval

ROWS_SCHEMA = {
    "label": pl.String,
    "group": pl.String,
    "effect": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "n": pl.Int64,
}


def _rows(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=ROWS_SCHEMA, orient="row")


def _interval(ci: Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if ci is None else ci


def position_rows(probes: Mapping[str, PositionProbe] | Sequence[tuple[str, PositionProbe]]) -> pl.DataFrame:
    """Position bias per probe: label (e.g. the set), group (the judge), effect, its interval, decisive items."""
    items = probes.items() if isinstance(probes, Mapping) else probes
    return _rows(
        [
            {
                "label": label,
                "group": p.judge,
                "effect": p.position_bias,
                "ci_low": _interval(p.position_bias_ci)[0],
                "ci_high": _interval(p.position_bias_ci)[1],
                "n": p.decisive_pairs,
            }
            for label, p in items
        ]
    )


def consistency_rows(
    probes: Mapping[str, PositionProbe] | Sequence[tuple[str, PositionProbe]],
) -> pl.DataFrame:
    """Position consistency per probe, with its Wilson interval and the items judged in both orders."""
    items = probes.items() if isinstance(probes, Mapping) else probes
    return _rows(
        [
            {
                "label": label,
                "group": p.judge,
                "effect": p.consistency,
                "ci_low": _interval(p.consistency_ci)[0],
                "ci_high": _interval(p.consistency_ci)[1],
                "n": p.pairs,
            }
            for label, p in items
        ]
    )


def verbosity_rows(effects: Mapping[str, VerbosityEffect]) -> pl.DataFrame:
    """Pass rate padded minus original per padding (or per probe), with Newcombe's interval."""
    return _rows(
        [
            {
                "label": label,
                "group": "verbosity",
                "effect": e.pass_rate.difference,
                "ci_low": _interval(e.pass_rate.ci)[0],
                "ci_high": _interval(e.pass_rate.ci)[1],
                "n": e.pass_rate.n,
            }
            for label, e in effects.items()
        ]
    )


def injection_rows(effect: InjectionEffect) -> pl.DataFrame:
    """Attack success rate per attack and pooled, with Wilson's interval and the failing outputs attacked."""
    return _rows(
        [
            {
                "label": a.attack,
                "group": "injection",
                "effect": a.success_rate,
                "ci_low": _interval(a.ci)[0],
                "ci_high": _interval(a.ci)[1],
                "n": a.failing,
            }
            for a in [*effect.attacks, effect.overall]
        ]
    )
