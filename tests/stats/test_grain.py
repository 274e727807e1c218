"""Each statistic takes one grain of frame, check rows or case verdicts, and refuses the other in words."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalkit.stats as stats
from evalkit._results import read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.errors import EvalkitError, GrainError
from evalkit.suite import load_suite

GOLDENS = Path(__file__).resolve().parents[2] / "goldens"


@pytest.fixture(scope="module")
def invoice_rows(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """Check rows of the invoice-extraction suite's shipped baseline system (offline, deterministic)."""
    tmp = tmp_path_factory.mktemp("invoice")
    suite = load_suite(GOLDENS / "invoice-extraction")
    options = RunOptions(out_root=tmp / "runs", cache_dir=tmp / "cache", progress=False)
    outcome = Runner(suite, load_system("baseline", suite), options).run()
    return read_run(outcome.run_dir)[1]


def test_invoice_baseline_pass_rate_is_per_case_not_per_check(invoice_rows: pl.DataFrame) -> None:
    # 74 cases with several checks each: a per-check rate read 79.5% where the case pass rate is 32.4%.
    assert invoice_rows.height > 74
    with pytest.raises(GrainError) as raised:
        stats.pass_rate(invoice_rows)
    assert str(raised.value) == (
        "pass_rate needs one row per (case, repeat); this frame has one row per check (it has a "
        '`check_index` column): pass case_verdicts(rows), or group by a check column (by="tier") for a '
        "per-check rate"
    )
    row = stats.pass_rate(stats.case_verdicts(invoice_rows)).row(0, named=True)
    assert (row["passes"], row["n"]) == (24, 74)
    assert round(100 * row["rate"], 1) == 32.4
    # A per-check rate is still there for whoever asks for it by check column.
    by_tier = stats.pass_rate(invoice_rows, by="tier")
    assert (
        by_tier.get_column("n").sum() == invoice_rows.filter(pl.col("status").is_in(["pass", "fail"])).height
    )


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("pass_rate", lambda f: stats.pass_rate(f, by="slice")),
        ("clustered_pass_rate", lambda f: stats.clustered_pass_rate(f)),
        ("flip_rates", lambda f: stats.flip_rates(f)),
        ("noise_floor", lambda f: stats.noise_floor(f)),
        ("compare_runs", lambda f: stats.compare_runs(f, "r", "r")),
        ("estimate_mde", lambda f: stats.estimate_mde(f, "r")),
        ("dev_vs_holdout", lambda f: stats.dev_vs_holdout(f)),
    ],
)
def test_statistics_of_cases_refuse_check_rows(name: str, call: object, invoice_rows: pl.DataFrame) -> None:
    assert callable(call)
    with pytest.raises(GrainError, match=rf"^{name} needs one row per \(case, repeat\);.*case_verdicts"):
        call(invoice_rows)
    # Without the check columns the same frame is taken for what it claims to be.
    call(stats.case_verdicts(invoice_rows))


@pytest.mark.parametrize("name", ["case_verdicts", "cost_latency"])
def test_statistics_of_checks_refuse_case_verdicts(name: str, invoice_rows: pl.DataFrame) -> None:
    verdicts = stats.case_verdicts(invoice_rows)
    with pytest.raises(GrainError, match=rf"^{name} needs one row per \(case, repeat, check\)") as raised:
        getattr(stats, name)(verdicts)
    assert "`n_checks` column" in str(raised.value) and "pass the check rows" in str(raised.value)


def test_grain_error_is_a_user_error_and_a_value_error() -> None:
    assert issubclass(GrainError, EvalkitError) and issubclass(GrainError, ValueError)
