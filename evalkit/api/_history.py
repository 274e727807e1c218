"""What changed between two runs, and a suite's runs over time: the frames a notebook reads drift from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import polars as pl


# (what, RunInfo field), in the order and with the names `evalkit._baseline.run_changes` words them, so a
# changed row here reads as that line of the report: "<what>: <before> -> <after>"
_HISTORY_COLUMNS = (
    "started_at",
    "run_id",
    "suite",
    "suite_version",
    "status",
    "system",
    "system_model",
    "system_model_version",
    "judge_model",
    "judge_model_version",
    "repeats",
    "n",
    "passes",
    "rate",
    "ci_low",
    "ci_high",
    "errors",
    "version_change",
    "path",
)


def _resolved(path: str) -> tuple[str | None, str | None]:
    from evalkit._baseline import run_info
    from evalkit.api._run import Run

    run = Run(path)
    info = run_info(run.manifest, run.checks())
    return (", ".join(info.system_model_versions) or None, ", ".join(info.judge_model_versions) or None)


def _change_expr(who: str, column: str) -> pl.Expr:
    """ "system model a -> b" where this run resolved another version than the last run that recorded one."""
    import polars as pl

    now = pl.col(column)
    before = now.forward_fill().shift(1).over("system")
    moved = now.is_not_null() & before.is_not_null() & (now != before)
    return pl.when(moved).then(pl.format(f"{who} {{}} → {{}}", before, now)).otherwise(None)


def history(
    runs_dir: str | Path = "runs",
    *,
    suite: str | None = None,
    system: str | None = None,
    complete_only: bool = True,
) -> pl.DataFrame:
    """A suite's runs in the order they started, with each pass rate, its interval and the model versions.

    Built on `ek.runs`. A run whose resolved system or judge model version differs from the previous run
    (of the same system) that recorded one gets a ``version_change`` label ("system claude-x-1 → claude-x-2"): with an unchanged
    suite and prompt, a move in the pass rate there is the model's, not yours (what a nightly run shows).

    Parameters
    ----------
    runs_dir:
        The folder runs are written to (searched as `ek.runs` searches it).
    suite:
        The suite's name. May be left out when every run in the folder is of one suite.
    system:
        Only the runs of the system of this name (as the manifest records it: "baseline", "claude", or
        "module:function"); default every system, told apart by the ``system`` column.
    complete_only:
        Leave out running and interrupted runs (their rate is of the cases they reached).

    Returns
    -------
    polars.DataFrame
        One row per run, oldest first: started_at (UTC datetime), run_id, suite, suite_version, status,
        system, system_model, system_model_version, judge_model, judge_model_version (resolved versions,
        comma-joined when a run saw several), repeats, n, passes, rate, ci_low, ci_high, errors,
        version_change, path.
    """
    import polars as pl

    from evalkit.api._runs import runs

    listed = runs(runs_dir)
    if suite is None:
        names = sorted({s for s in listed.get_column("suite").to_list() if s is not None})
        if len(names) > 1:
            raise EvalkitError(
                f"{runs_dir}: holds runs of several suites ({', '.join(names)}); pass suite= to pick one"
            )
    else:
        listed = listed.filter(pl.col("suite") == suite)
    if system is not None:
        listed = listed.filter(pl.col("system") == system)
    if complete_only:
        listed = listed.filter(pl.col("status") == "complete")
    listed = listed.sort("started_at", nulls_last=True)
    versions = [_resolved(p) for p in listed.get_column("path").to_list()]
    frame = listed.with_columns(
        pl.Series("system_model_version", [v[0] for v in versions], dtype=pl.String),
        pl.Series("judge_model_version", [v[1] for v in versions], dtype=pl.String),
        pl.col("started_at").str.to_datetime(time_zone="UTC", strict=False),
    )
    change = pl.concat_str(
        [_change_expr("system", "system_model_version"), _change_expr("judge", "judge_model_version")],
        separator="; ",
        ignore_nulls=True,
    )
    frame = frame.with_columns(pl.when(change != "").then(change).otherwise(None).alias("version_change"))
    return frame.select(_HISTORY_COLUMNS)
