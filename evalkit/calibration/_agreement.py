"""Agreement between raters on a ratings frame: pairwise kappas, Krippendorff's alpha, bootstrap intervals."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit.calibration import _alpha, _pairwise
from evalkit.calibration._ratings import label_of, read_ratings
from evalkit.errors import EvalkitError, Problem, RecordsError
from evalkit.stats import Interval

KAPPA_MIN_ITEMS = 100
"""Below this many items a kappa's or alpha's bootstrap interval is flagged: it covers less than it says.

From bench/coverage/calibration.py (percentile bootstrap, 1,000 resamples; a binary human label with pass rate
0.1-0.5 against a judge of TPR/TNR 0.8/0.7 to 0.95/0.95, true kappa 0.40-0.90; 2,000 simulated calibrations a
setting, counted where kappa is defined), the coverage of the 95% interval ranges over the settings from
40.5-90.1% at 10 items, 63.8-95.0% at 20, 77.2-94.9% at 30, 90.5-94.8% at 50 and 94.2-96.0% at 100: only from
100 items does it hold in every setting (a high-agreement judge is the worst).
"""

Scale = Literal["nominal", "ordinal"]
By = Literal["slice", "criterion"]


class Confusion(BaseModel):
    """Counts of (rater a's label, rater b's label); rows are a."""

    model_config = ConfigDict(frozen=True)
    labels: list[str]
    counts: list[list[int]]


class PairAgreement(BaseModel):
    """Agreement of two raters on the items both rated."""

    model_config = ConfigDict(frozen=True)
    a: str
    b: str
    n: int
    percent_agreement: float | None
    cohen_kappa: float | None
    cohen_kappa_ci: Interval | None
    scott_pi: float | None
    weighted_kappa: float | None
    confusion: Confusion
    cohen_kappa_dropped: int = 0
    """Bootstrap resamples in which kappa was undefined (a rater gave one label only), left out of the interval."""


class GroupAgreement(BaseModel):
    """Agreement within one set of ratings (the whole file, or one slice or criterion)."""

    model_config = ConfigDict(frozen=True)
    raters: list[str]
    scale: Scale
    items: int
    missing: dict[str, int]
    seed: int
    pairs: list[PairAgreement]
    krippendorff_alpha: float | None
    krippendorff_alpha_ci: Interval | None
    krippendorff_alpha_dropped: int = 0
    """Bootstrap resamples in which alpha was undefined (one label only), left out of the interval."""
    levels: list[str] | None = None
    """The declared ordinal scale, lowest first (``levels=``), or None when the labels present were used."""
    notes: list[str] = []

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape (notes are for the text view and not part of it)."""
        return self.model_dump(mode="json", exclude={"notes"})


class Agreement(GroupAgreement):
    """Agreement over all ratings, and per group when asked for with `by`."""

    by: dict[str, GroupAgreement] | None = None

    def to_json(self) -> dict[str, Any]:
        """The documented JSON shape; ``by`` is null unless grouping was asked for."""
        out = super().to_json()
        out["by"] = None if self.by is None else {k: g.to_json() for k, g in self.by.items()}
        return out


def _num(x: float | np.floating[Any]) -> float | None:
    return None if math.isnan(float(x)) else float(x)


def _interval(
    replicates: npt.NDArray[np.float64], confidence: float, what: str, notes: list[str]
) -> tuple[Interval | None, int]:
    """The percentile interval of the defined replicates, and how many were undefined (NaN) and left out."""
    finite = replicates[~np.isnan(replicates)]
    dropped = int(replicates.size - finite.size)
    if finite.size == 0:
        notes.append(f"{what}: every one of {replicates.size} resamples undefined; no interval")
        return None, dropped
    if dropped:
        notes.append(f"{what}: {dropped} of {replicates.size} resamples undefined, left out")
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(finite, [tail, 1.0 - tail])
    return Interval(float(lo), float(hi)), dropped


def _one_label(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Per confusion matrix (..., k, k): whether either rater gave one label only (kappa is then undefined)."""
    total = counts.sum(axis=(-2, -1))
    return (counts.sum(axis=-1).max(axis=-1) == total) | (counts.sum(axis=-2).max(axis=-1) == total)


def pair_kappa(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], k: int, *, confidence: float, n_boot: int, seed: int
) -> tuple[float, Interval | None, int]:
    """Cohen's kappa of two aligned code arrays with its percentile bootstrap interval, and the resamples dropped.

    Kappa is NaN (undefined) when either rater gave one label only: it is then 0 or 0/0 by its formula, which
    says nothing about agreement. A resample in which either rater gave one label only is undefined for the
    same reason, and is counted and left out. The resamples are drawn by `_pairwise.bootstrap_counts`.
    """
    counts = _pairwise.confusion(a, b, k)
    if _one_label(counts):
        return float("nan"), None, 0
    kappa = float(_pairwise.cohen_kappa(counts))
    boot = _pairwise.bootstrap_counts(a, b, k, n_boot=n_boot, seed=seed)
    replicates = np.where(_one_label(boot), np.nan, _pairwise.cohen_kappa(boot))
    ci, dropped = _interval(replicates, confidence, "kappa", [])
    return kappa, ci, dropped


Level = bool | int | str


def _declared(rated: pl.DataFrame, levels: Sequence[Level]) -> list[str]:
    """The declared levels as labels; every rating outside them is an error located at its file and line."""
    labels = [label_of(level)[0] for level in levels]
    if len(set(labels)) != len(labels) or len(labels) < 2:
        raise EvalkitError(f"levels must be at least two distinct values, lowest first, not {list(levels)}")
    outside = rated.filter(~pl.col("value").is_in(labels))
    if outside.height:
        shown = ",".join(labels)
        problems = [
            Problem(
                str(row.get("file") or "ratings"),
                row.get("line"),
                "value",
                f"{row['value']!r} (item {row['item']!r}, rater {row['rater']!r}) is not one of the declared "
                f"levels {shown}",
                "correct the rating, or add its level to --levels / levels=",
            )
            for row in outside.head(20).iter_rows(named=True)
        ]
        if outside.height > 20:
            problems.append(
                Problem("ratings", None, "value", f"and {outside.height - 20} more outside the levels")
            )
        raise RecordsError(problems)
    return labels


def _labels(
    frame: pl.DataFrame, scale: Scale, order: Sequence[str] | None, levels: Sequence[Level] | None = None
) -> list[str]:
    rated = frame.filter(pl.col("value").is_not_null())
    if levels is not None:
        return _declared(rated, levels)
    present = set(rated["value"].to_list())
    if order is not None:
        unknown = sorted(present - set(order))
        if unknown:
            raise EvalkitError(f"labels {unknown} are not in the given order {list(order)}; add them to it")
        return list(order)
    kinds = set(rated["kind"].drop_nulls().to_list()) if "kind" in rated.columns else {"str"}
    if scale == "ordinal" and not kinds <= {"int", "bool"}:
        raise EvalkitError(
            "an ordinal scale needs integer or true/false values to order the labels; "
            "these ratings have string labels: pass order=[...] lowest first, or use scale='nominal'"
        )
    if "number" in rated.columns and kinds <= {"int", "bool"}:
        pairs = rated.select("value", "number").unique().sort("number")
        return pairs["value"].to_list()
    return sorted(present)


def _few(what: str, n: int, confidence: float) -> str:
    return (
        f"{what}: few items ({n} < {KAPPA_MIN_ITEMS}): the bootstrap interval covers less often than its "
        f"{round(100 * confidence)}% (see docs/statistics.md); read it as rough"
    )


def few_items(n: int) -> bool:
    """Whether a kappa or alpha bootstrap interval on `n` items is flagged as covering less than it says."""
    return n < KAPPA_MIN_ITEMS


def _group(
    frame: pl.DataFrame,
    raters: list[str],
    labels: list[str],
    *,
    scale: Scale,
    confidence: float,
    n_boot: int,
    seed: int,
) -> GroupAgreement:
    k = len(labels)
    notes: list[str] = []
    missing = {
        r: int(frame.filter((pl.col("rater") == r) & pl.col("value").is_null()).height) for r in raters
    }
    code_of = pl.DataFrame(
        {"value": labels, "code": list(range(k))}, schema={"value": pl.String, "code": pl.Int64}
    )
    coded = frame.join(code_of, on="value", how="left").select("unit", "rater", "code")
    wide = (
        coded.pivot(on="rater", index="unit", values="code", aggregate_function="first")
        if coded.height
        else pl.DataFrame({"unit": []}, schema={"unit": pl.String})
    )
    for r in raters:
        if r not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(r))
    codes = wide.select(raters).fill_null(-1).to_numpy().astype(np.int64).reshape(wide.height, len(raters))
    items = int((codes >= 0).all(axis=1).sum())

    pairs = []
    for i, j in itertools.combinations(range(len(raters)), 2):
        both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
        a, b = codes[both, i], codes[both, j]
        counts = _pairwise.confusion(a, b, k) if k else np.zeros((0, 0), dtype=np.int64)
        name = f"{raters[i]} vs {raters[j]}"
        if a.size == 0:
            notes.append(f"{name}: no item rated by both; nothing to compare")
            kappa = pi = wk = pa = float("nan")
            ci: Interval | None = None
            dropped = 0
        else:
            pa = float(_pairwise.percent_agreement(counts))
            pi = float(_pairwise.scott_pi(counts))
            wk = float(_pairwise.quadratic_kappa(counts)) if scale == "ordinal" else float("nan")
            kappa, ci, dropped = pair_kappa(a, b, k, confidence=confidence, n_boot=n_boot, seed=seed)
            if math.isnan(kappa):
                alone = [r for r, x in ((raters[i], a), (raters[j], b)) if np.unique(x).size == 1]
                notes.append(
                    f"{name}: {' and '.join(alone)} gave one label only; kappa is undefined (no interval)"
                )
            elif ci is None:
                notes.append(f"{name} kappa: every one of {n_boot} resamples undefined; no interval")
            else:
                if dropped:
                    notes.append(f"{name} kappa: {dropped} of {n_boot} resamples undefined, left out")
                if a.size < KAPPA_MIN_ITEMS:
                    notes.append(_few(f"{name} kappa", int(a.size), confidence))
        pairs.append(
            PairAgreement(
                a=raters[i],
                b=raters[j],
                n=int(a.size),
                percent_agreement=_num(pa),
                cohen_kappa=_num(kappa),
                cohen_kappa_ci=ci,
                scott_pi=_num(pi),
                weighted_kappa=_num(wk),
                confusion=Confusion(labels=labels, counts=counts.tolist()),
                cohen_kappa_dropped=0 if a.size == 0 else dropped,
            )
        )

    per_unit = _alpha.unit_coincidences(codes, k)
    alpha = float(_alpha.alpha_from_coincidence(per_unit.sum(axis=0), scale)) if k else float("nan")
    alpha_ci: Interval | None = None
    alpha_dropped = 0
    if math.isnan(alpha):
        notes.append("alpha: fewer than two pairable ratings, or one label only; alpha is undefined")
    else:
        boot_alpha = _alpha.bootstrap_alpha(per_unit, scale, n_boot=n_boot, seed=seed)
        alpha_ci, alpha_dropped = _interval(boot_alpha, confidence, "alpha", notes)
        pairable = int((per_unit.sum(axis=(1, 2)) > 0).sum())
        if alpha_ci is not None and pairable < KAPPA_MIN_ITEMS:
            notes.append(_few("alpha", pairable, confidence))
    return GroupAgreement(
        raters=raters,
        scale=scale,
        items=items,
        missing=missing,
        seed=seed,
        pairs=pairs,
        krippendorff_alpha=_num(alpha),
        krippendorff_alpha_ci=alpha_ci,
        krippendorff_alpha_dropped=alpha_dropped,
        notes=notes,
    )


def agreement(
    ratings: pl.DataFrame,
    *,
    raters: Sequence[str] | None = None,
    scale: Scale | None = None,
    by: By | None = None,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
    order: Sequence[str] | None = None,
    levels: Sequence[Level] | None = None,
) -> Agreement:
    """Agreement between raters.

    Parameters
    ----------
    ratings:
        A frame as from `read_ratings` (item, rater, value; kind/number/criterion/slice optional).
        A unit is an (item, criterion) pair.
    raters:
        The raters to compare, in the order pairs are listed; all raters in the frame when omitted.
    scale:
        "nominal", or "ordinal" (adds quadratic weighted kappa, and alpha uses the ordinal metric). Default:
        ordinal when `levels` is given, nominal otherwise.
    by:
        Also report each "slice" or "criterion" separately.
    confidence:
        Coverage of the percentile bootstrap intervals (resampling units).
    n_boot, seed:
        Number of bootstrap resamples and the seed that makes them reproducible.
    order:
        Label order, lowest first, for an ordinal scale with string labels.
    levels:
        The ordinal scale, lowest first (e.g. ``[1, 2, 3, 4, 5]``), used levels or not: weighted kappa weighs
        the distance on this scale (as scikit-learn's ``cohen_kappa_score(..., labels=levels)``) and alpha's
        ordinal metric runs over it (as ``krippendorff.alpha(..., value_domain=levels)``). A rating outside it
        is an error naming its file and line.

    Returns
    -------
    An `Agreement`: pairwise figures on the units both raters rated (missing is never paired), alpha
    over all listed raters, per-rater counts of null (missing) ratings, and notes on undefined figures.
    """
    if levels is not None and order is not None:
        raise EvalkitError("give levels or order, not both (levels is the full scale, lowest first)")
    if scale is None:
        scale = "ordinal" if levels is not None else "nominal"
    if scale not in ("nominal", "ordinal"):
        raise EvalkitError(f"scale must be 'nominal' or 'ordinal', not {scale!r}")
    if by not in (None, "slice", "criterion"):
        raise EvalkitError(f"by must be None, 'slice' or 'criterion', not {by!r}")
    if not 0.0 < confidence < 1.0:
        raise EvalkitError(f"confidence must be between 0 and 1, not {confidence}")
    frame = ratings
    for name in ("criterion", "slice"):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(name))
    present = sorted(set(frame["rater"].to_list()))
    chosen = list(raters) if raters is not None else present
    unknown = [r for r in chosen if r not in present]
    if unknown:
        raise EvalkitError(f"raters {unknown} have no ratings here; the raters present are {present}")
    if len(chosen) < 2:
        raise EvalkitError(f"agreement needs at least two raters, got {chosen}")
    frame = frame.filter(pl.col("rater").is_in(chosen)).with_columns(
        pl.concat_str([pl.col("item"), pl.col("criterion").fill_null("")], separator="\x1f").alias("unit")
    )
    labels = _labels(frame, scale, order, levels)
    options: dict[str, Any] = {"scale": scale, "confidence": confidence, "n_boot": n_boot, "seed": seed}
    whole = _group(frame, chosen, labels, **options).model_copy(
        update={"levels": labels if levels is not None else None}
    )
    groups = None
    if by is not None:
        keyed = frame.with_columns(pl.col(by).fill_null("(none)").alias("_group"))
        groups = {
            str(name): _group(keyed.filter(pl.col("_group") == name), chosen, labels, **options)
            for name in sorted(set(keyed["_group"].to_list()))
        }
    return Agreement(**whole.model_dump(), by=groups)


def agreement_from_files(
    paths: Sequence[str | Path],
    *,
    raters: Sequence[str] | None = None,
    scale: Scale | None = None,
    by: By | None = None,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
    order: Sequence[str] | None = None,
    levels: Sequence[Level] | None = None,
) -> Agreement:
    """`agreement` on the ratings files at `paths` (read with `read_ratings`); the options are the same."""
    return agreement(
        read_ratings(*paths),
        raters=raters,
        scale=scale,
        by=by,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        order=order,
        levels=levels,
    )


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _fmt_ci(ci: Interval | None, n: int | None = None) -> str:
    if ci is None:
        return ""
    flag = "*" if n is not None and few_items(n) else ""
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]{flag}"


def _fmt_kappa(value: float | None, n: int) -> str:
    return ("undefined" if n else "—") if value is None else f"{value:.3f}"


def _format_group(g: GroupAgreement, confidence_note: str) -> list[str]:
    rows = [("pair", "n", "agree", f"kappa {confidence_note}", "pi", "w.kappa")]
    for p in g.pairs:
        rows.append(
            (
                f"{p.a} vs {p.b}",
                str(p.n),
                _fmt(p.percent_agreement),
                _fmt_kappa(p.cohen_kappa, p.n) + _fmt_ci(p.cohen_kappa_ci, p.n),
                _fmt(p.scott_pi),
                _fmt(p.weighted_kappa),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append(
        f"Krippendorff's alpha ({g.scale}, {len(g.raters)} raters): "
        f"{_fmt_kappa(g.krippendorff_alpha, g.items)}{_fmt_ci(g.krippendorff_alpha_ci, g.items)}"
    )
    missing = ", ".join(f"{r} {n}" for r, n in g.missing.items())
    lines.append(f"items rated by every rater: {g.items}; missing (null) ratings: {missing}")
    lines.extend(f"note: {n}" for n in g.notes)
    return lines


def format_agreement(a: Agreement) -> str:
    """A small terminal table of `a`: one line per pair, then alpha, missing counts, notes and the seed."""
    declared = f" (levels {','.join(a.levels)})" if a.levels else ""
    lines = [f"Agreement, {a.scale} scale{declared}, raters {', '.join(a.raters)}"]
    lines += _format_group(a, "[boot CI]")
    for name, g in (a.by or {}).items():
        lines += ["", f"-- {name}", *_format_group(g, "[boot CI]")]
    lines.append(
        f"intervals: percentile bootstrap over items, seed {a.seed}; * marks an interval on fewer than "
        f"{KAPPA_MIN_ITEMS} items, which covers less often than it says"
    )
    return "\n".join(lines)
