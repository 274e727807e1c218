"""Calibration prints and records the same intervals as before its Wilson interval moved to `evalkit.stats`.

The expected values were computed on these inputs before the change (through calibration's own Wilson wrapper
and its own interval type); the text must match exactly.
"""

from __future__ import annotations

import polars as pl

from evalkit.calibration import (
    Calibration,
    Confusion,
    ConfusionRates,
    Figures,
    LabelComparison,
    PPIEstimate,
    agreement,
    calibration_record,
    format_agreement,
    format_calibration,
    ppi_pass_rate,
)
from evalkit.stats import Interval


def _ppi() -> PPIEstimate:
    return ppi_pass_rate([1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0], [1, 1, 0, 1, 0], [1, 0, 0, 1, 1])


def _figures(group: str, n: int, kappa: float | None, ci: tuple[float, float] | None) -> Figures:
    rates = ConfusionRates(
        n=n,
        human_pass=3,
        human_fail=1,
        true_positive_rate=0.667,
        true_negative_rate=1.0,
        coverage=None,
        false_failure_rate=None,
    )
    return Figures.model_validate(
        {
            "group": group,
            "n": n,
            "missing": {"human": 1, "machine": 0},
            "percent_agreement": 0.75,
            "cohen_kappa": kappa,
            "cohen_kappa_ci": ci,
            "confusion": Confusion(labels=["false", "true"], counts=[[1, 0], [1, 2]]),
            "rates": rates,
        }
    )


def test_ppi_human_only_interval_is_wilsons_as_before() -> None:
    est = _ppi()
    assert isinstance(est.human_only_ci, Interval)
    assert est.to_json()["human_only_ci"] == [0.23072428127601297, 0.8823792257673521]
    # 5 labels is too few for a corrected rate (it printed 0.611 [0.185, 1.000] before): the human-only one
    assert not est.corrected
    assert (est.rate, est.ci_low, est.ci_high) == (0.6, 0.23072428127601297, 0.8823792257673521)


def test_agreement_prints_as_before() -> None:
    ratings = pl.DataFrame(
        {
            "item": [f"i{k}" for k in range(8) for _ in range(2)] + ["j0", "j0", "j1", "j1"],
            "rater": ["h", "m"] * 10,
            # pairs (h, m): items i0-i7 in slice s, then j0, j1 in slice t
            "value": [*"yynyyynnyn", *"yynnyyyyyy"],
            "slice": ["s"] * 16 + ["t"] * 4,
        }
    )
    a = agreement(ratings, by="slice", n_boot=200)
    # since issue 23: intervals on fewer than 100 items are marked, dropped resamples counted, "undefined" said
    assert format_agreement(a) == "\n".join(
        [
            "Agreement, nominal scale, raters h, m",
            "pair    n   agree  kappa [boot CI]         pi     w.kappa",
            "h vs m  10  0.800  0.524 [-0.154, 1.000]*  0.524  —",
            "Krippendorff's alpha (nominal, 2 raters): 0.548 [-0.118, 1.000]*",
            "items rated by every rater: 10; missing (null) ratings: h 0, m 0",
            "note: h vs m kappa: 15 of 200 resamples undefined, left out",
            "note: h vs m kappa: few items (10 < 100): the bootstrap interval covers less often than its 95% (see "
            "docs/statistics.md); read it as rough",
            "note: alpha: few items (10 < 100): the bootstrap interval covers less often than its 95% (see "
            "docs/statistics.md); read it as rough",
            "",
            "-- s",
            "pair    n  agree  kappa [boot CI]         pi     w.kappa",
            "h vs m  8  0.750  0.467 [-0.200, 1.000]*  0.467  —",
            "Krippendorff's alpha (nominal, 2 raters): 0.500 [-0.190, 1.000]*",
            "items rated by every rater: 8; missing (null) ratings: h 0, m 0",
            "note: h vs m kappa: 8 of 200 resamples undefined, left out",
            "note: h vs m kappa: few items (8 < 100): the bootstrap interval covers less often than its 95% (see "
            "docs/statistics.md); read it as rough",
            "note: alpha: few items (8 < 100): the bootstrap interval covers less often than its 95% (see "
            "docs/statistics.md); read it as rough",
            "",
            "-- t",
            "pair    n  agree  kappa [boot CI]  pi  w.kappa",
            "h vs m  2  1.000  undefined        —   —",
            "Krippendorff's alpha (nominal, 2 raters): undefined",
            "items rated by every rater: 2; missing (null) ratings: h 0, m 0",
            "note: h vs m: h and m gave one label only; kappa is undefined (no interval)",
            "note: alpha: fewer than two pairable ratings, or one label only; alpha is undefined",
            "intervals: percentile bootstrap over items, seed 0; * marks an interval on fewer than 100 items, which "
            "covers less often than it says",
        ]
    )
    js = a.to_json()
    assert js["pairs"][0]["cohen_kappa_ci"] == [-0.1538461538461535, 1.0]
    assert js["krippendorff_alpha_ci"] == [-0.11764705882352944, 1.0]
    assert (
        js["by"]["t"]["pairs"][0]["cohen_kappa_ci"] is None and js["by"]["t"]["krippendorff_alpha_ci"] is None
    )


def test_calibration_prints_and_records_as_before() -> None:
    c = Calibration.model_validate(
        {
            "run_id": "r1",
            "run_path": "runs/r1",
            "suite": "s",
            "suite_version": "1",
            "labels_path": "labels/x.jsonl",
            "judge": {"model": "m", "prompt": "p", "prompt_hash": "abc", "pass_rule": "all"},
            "labels": 5,
            "joined": 4,
            "unlabelled": 0,
            "skipped": 1,
            "stale": [],
            "unmatched": [],
            "verdicts_from_run": 4,
            "verdicts_extra": 0,
            "no_verdict": 0,
            "extra_errors": [],
            "comparisons": [
                LabelComparison(
                    machine="faith",
                    kind="judge",
                    labelled_check="faith",
                    overall=_figures("all", 4, 0.5, (-0.25, 1.0)),
                    by_slice=[_figures("a", 3, None, None), _figures("b", 1, 0.2, (0.1, 0.3))],
                )
            ],
            "disagreements": [],
            "items": [],
            "corrected": {"faith": _ppi(), "other": "no labels"},
            "confidence": 0.95,
            "n_boot": 200,
            "seed": 0,
            "made_at": "2024-01-01T00:00:00+00:00",
        }
    )
    assert format_calibration(c).split("\n")[5:14] == [
        "faith (judge) vs human labels of faith",
        "       n  missing h/m  agree  kappa [boot CI]         TPR    TNR    confusion h\\m f/t",
        "  all  4  1/0          0.750  0.500 [-0.250, 1.000]*  0.667  1.000  f:1/0 t:1/2",
        "  by slice:",
        "  slice  n  missing h/m  agree  kappa [boot CI]        TPR    TNR    confusion h\\m f/t",
        "  a      3  1/0          0.750  undefined              0.667  1.000  f:1/0 t:1/2",
        "  b      1  1/0          0.750  0.200 [0.100, 0.300]*  0.667  1.000  f:1/0 t:1/2",
        "",
        "pass rate of faith: judge only 0.667 on 12; human only 0.600 on 5 [0.231, 0.882] (95%, Wilson); too "
        "few labels for a corrected rate: 10 needed, 5 given; the human-only Wilson interval is shown",
    ]
    record = calibration_record(c)
    assert isinstance(record.checks["faith"].kappa_ci, Interval)
    assert record.model_dump(mode="json")["checks"]["faith"]["kappa_ci"] == [-0.25, 1.0]
