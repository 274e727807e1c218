"""The terminal summary printed after a run: pass rate with its interval, per slice, checks, cost, latency."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit._baseline import run_info
from evalkit._report._failures import (
    DEFAULT_SHOW_FAILURES,
    ShowFailures,
    count_failures,
    failure_lines,
    failures,
)
from evalkit._results import Manifest
from evalkit.errors import clip
from evalkit.stats import case_verdicts, clustered_pass_rate, pass_rate

if TYPE_CHECKING:
    from evalkit.calibration import JudgeTrust


def _pct(x: float | None) -> str:
    return "  n/a" if x is None or x != x else f"{100 * x:5.1f}%"


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def asked_and_got(asked: str | None, got: tuple[str, ...]) -> str:
    """`asked`, with the versions the API answered with where they differ from it (a simulated server's too)."""
    other = [v for v in got if v and v != asked]
    return f"{asked} -> {', '.join(other)}" if asked and other else (asked or ", ".join(other))


def _head(manifest: Manifest, rows: pl.DataFrame) -> str:
    info = run_info(manifest, rows)
    model = asked_and_got(info.system_model, info.system_model_versions)
    judged = (
        info.judge_model
        and "judge_model" in rows.columns
        and rows.get_column("judge_model").drop_nulls().len()
    )
    return (
        f"{manifest.suite} · system {info.system_name or '?'}{f' ({model})' if model else ''}"
        + (f" · judge {asked_and_got(info.judge_model, info.judge_model_versions)}" if judged else "")
        + f" · suite version {manifest.suite_version}"
        + (
            f" · shard {manifest.shard[0]}/{manifest.shard[1]}: {manifest.cases} of the suite's cases (merge the shards to gate)"
            if manifest.shard
            else ""
        )
        + (f" · merged from {len(manifest.merged_from)} shard runs" if manifest.merged_from else "")
    )


def format_summary(
    manifest: Manifest,
    rows: pl.DataFrame,
    *,
    show_failures: ShowFailures = DEFAULT_SHOW_FAILURES,
    criteria: dict[tuple[str, int, int], list[dict[str, Any]]] | None = None,
    judge: JudgeTrust | None = None,
    prompt_cache: Any = None,
) -> str:
    """A plain-text summary of one run's check-level rows.

    Parameters
    ----------
    manifest, rows: the run.
    show_failures: how many failing cases to list (each with its first problem), or "all".
    criteria: the judge's per-criterion verdicts (``judge_criteria(run_dir)``), to show the criteria not met.
    judge: the judge's calibration state and corrected pass rates (``evalkit.calibration.judge_trust``), shown
        under the pass rate.
    prompt_cache: the system calls' prompt-cache split (``evalkit._results.prompt_cache_use``), shown under the
        cost.

    Returns
    -------
    The summary, lines joined by newlines.
    """
    lines: list[str] = []
    lines.append(_head(manifest, rows))
    if rows.is_empty():
        return "\n".join([*lines, "no results"])
    verdicts = case_verdicts(rows)
    n_cases = verdicts["case_id"].n_unique()
    repeats = verdicts["repeat"].n_unique()
    # repeats of a case are not independent draws: with more than one, the interval is clustered by case
    rate_of = clustered_pass_rate if repeats > 1 else pass_rate
    overall = rate_of(verdicts).row(0, named=True)
    if overall["not_scored"]:
        # the unscored cases are exactly the ones that passed their cheap checks: a rate over the scored ones
        # alone would be biased low, so give the bounds the unscored cases allow
        total = overall["n"] + overall["not_scored"]
        low, high = overall["passes"] / total, (overall["passes"] + overall["not_scored"]) / total
        lines.append(
            f"pass rate not known yet: between {_pct(low).strip()} and {_pct(high).strip()} — "
            f"{overall['not_scored']} of {total} cases passed every check that ran but await the judge"
        )
    label = "scored cases" if overall["not_scored"] else "pass rate"
    lines.append(
        f"{label} {_pct(overall['rate'])}  95% CI {_pct(overall['ci_low']).strip()}–{_pct(overall['ci_high']).strip()}"
        f"  ({overall['passes']}/{overall['n']} scored; {n_cases} cases x {repeats} repeat{'s' if repeats > 1 else ''})"
        f"  errors {overall['errors']}  not scored {overall['not_scored']}"
    )
    if judge is not None:  # a run with no judged check has no trust to state, nor its module to load
        from evalkit._report._calibration import trust_lines

        lines.extend(trust_lines(judge))
    lines.append("")
    per_slice = rate_of(verdicts, by="slice").sort("slice")
    width = max(12, *(len(s) for s in per_slice["slice"].to_list()))
    waiting = bool(overall["not_scored"])
    extra = f"  {'await judge':>11}" if waiting else ""
    # n counts scored cases: with repeats a case's rows are one unit, not several (the interval is clustered)
    n_col = "n_cases" if repeats > 1 else "n"
    each = f"  (n: cases, {repeats} repeats each)" if repeats > 1 else ""
    lines.append(f"  {'slice':<{width}}  {'n':>4}  {'pass':>6}  {'95% CI':<13}{extra}{each}".rstrip())
    for r in per_slice.iter_rows(named=True):
        ci = f"{_pct(r['ci_low']).strip()}–{_pct(r['ci_high']).strip()}" if r["n"] else ""
        extra = f"  {r['not_scored']:>11}" if waiting else ""
        lines.append(f"  {r['slice']:<{width}}  {r[n_col]:>4}  {_pct(r['rate'])}  {ci:<13}{extra}".rstrip())
    lines.append("")
    by_check = (
        rows.group_by("check_kind", "tier")
        .agg(
            (pl.col("status") == "pass").sum().alias("pass"),
            (pl.col("status") == "fail").sum().alias("fail"),
            (pl.col("status") == "error").sum().alias("error"),
            (pl.col("status") == "not_judged").sum().alias("not_judged"),
            (pl.col("status") == "skipped").sum().alias("skipped"),
        )
        .with_columns(
            pl.col("tier").replace_strict({"exact": 0, "code": 1, "judge": 2}, default=3).alias("_o")
        )
        .sort("_o", "check_kind")
    )
    lines.append("  checks: " + "; ".join(_check_line(r) for r in by_check.iter_rows(named=True)))
    not_judged = int(by_check["not_judged"].sum())
    if not_judged:
        lines.append(
            f"  {not_judged} judge checks not judged: run with ANTHROPIC_API_KEY set (and without --judge off) to "
            "judge them"
        )
    case_rows = rows.unique(["case_id", "repeat"])
    lines.extend(_error_lines(rows))
    limit = None if show_failures == "all" else int(show_failures)
    lines.extend(failure_lines(failures(rows, criteria, limit=limit), count_failures(rows), show_failures))
    judged = rows.filter(pl.col("judge_model").is_not_null())
    calls = pl.concat(
        [
            case_rows.select(
                pl.col("cost_usd").alias("cost"),
                pl.col("cache_hit").alias("hit"),
                (pl.col("input_tokens").fill_null(0) + pl.col("output_tokens").fill_null(0)).alias("tokens"),
                pl.col("input_tokens").is_not_null().alias("replied"),
            ),
            judged.select(
                pl.col("judge_cost_usd").alias("cost"),
                pl.col("judge_cache_hit").fill_null(False).alias("hit"),
                (
                    pl.col("judge_input_tokens").fill_null(0) + pl.col("judge_output_tokens").fill_null(0)
                ).alias("tokens"),
                pl.col("judge_input_tokens").is_not_null().alias("replied"),
            ),
        ]
    )
    paid, cached = calls.filter(~pl.col("hit")), calls.filter(pl.col("hit"))
    # a call that ended in an error was not answered, so not charged: its price is not unknown, it is nothing
    unknown = paid.filter(pl.col("replied") & pl.col("cost").is_null()).height
    spent = f"${float(paid['cost'].drop_nulls().sum()):.4f}" + (
        f" (+{unknown} calls of unknown price)" if unknown else ""
    )
    models = [
        str(m)
        for col in ("system_model_version", "judge_model_version")
        if col in rows.columns
        for m in rows.get_column(col).drop_nulls().unique().to_list()
    ]
    if any(m.startswith("simulated-") for m in models):
        spent += " (simulated server: nothing billed)"
    saved = ""
    if cached.height:
        saved = f" (the cache saved ${float(cached['cost'].drop_nulls().sum()):.4f}, {int(cached['tokens'].sum())} tokens)"
    made = calls.filter(pl.col("replied") | pl.col("hit")).height  # model calls; a Python system makes none
    lat = case_rows["latency_s"].drop_nulls()
    p50 = float(lat.quantile(0.5, "linear") or 0) if len(lat) else None
    p95 = float(lat.quantile(0.95, "linear") or 0) if len(lat) else None
    lines.append(
        # hits and savings over the same calls (the system's and the judge's), so the two figures agree
        f"  spent {spent}{saved}   cache hits {cached.height}/{made}   latency p50 {_ms(p50)}  p95 {_ms(p95)}"
    )
    if prompt_cache is not None:
        lines.append(prompt_cache.line())
    return "\n".join(lines)


def _error_lines(rows: pl.DataFrame, kinds: int = 3, width: int = 800) -> list[str]:
    """What went wrong in the cases that ended in errors: a count and the first message of each error kind."""
    errors = (
        rows.filter(pl.col("case_status") == "error")
        .sort("case_id", "repeat", "check_index")
        # a case whose output was had but one of its checks failed to run (a judge's replay miss) has its
        # message on that check
        .group_by("case_id", "repeat", maintain_order=True)
        .agg(
            pl.coalesce(pl.col("case_error").first(), pl.col("error").drop_nulls().first()).alias(
                "case_error"
            ),
            pl.coalesce(pl.col("case_error_kind").first(), pl.col("error_kind").drop_nulls().first()).alias(
                "kind"
            ),
        )
    )
    if errors.is_empty():
        return []
    grouped = (
        errors.with_columns(
            pl.col("case_error").fill_null("unknown error"), pl.col("kind").fill_null("error")
        )
        .group_by("kind", maintain_order=True)
        .agg(pl.len().alias("n"), pl.col("case_error").first().alias("example"))
        .sort("n", descending=True, maintain_order=True)
    )
    lines = [f"  {errors.height} case{'s' if errors.height > 1 else ''} ended in an error (not scored):"]
    for r in grouped.head(kinds).iter_rows(named=True):
        lines.append(f"    {r['n']} x {clip(_short_paths(r['example']), width)}")
    if grouped.height > kinds:
        lines.append(f"    and {grouped.height - kinds} other kinds of error")
    return lines


_LONG_WORD = re.compile(r"\S{201,}")


def _short_paths(text: str, head: int = 60, tail: int = 100) -> str:
    """`text` with each word over 200 characters (a path under a long temp folder) cut in its middle: the
    message keeps its cause, its fix and the end of each path (the file), whatever the folder's length."""

    def cut(word: str) -> str:
        keep = max(tail, len(word.rsplit("/", 1)[-1]) + 1)  # the file's own name is never cut
        return word if head + keep + 1 >= len(word) else word[:head] + "…" + word[-keep:]

    return _LONG_WORD.sub(lambda m: cut(m.group()), text)


def _check_line(r: dict[str, int | str]) -> str:
    parts = [f"{r['pass']} pass", f"{r['fail']} fail"]
    for key in ("error", "skipped", "not_judged"):
        if r[key]:
            parts.append(f"{r[key]} {key.replace('_', ' ')}")
    return f"{r['check_kind']} " + ", ".join(parts)
