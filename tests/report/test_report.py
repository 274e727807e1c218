"""`evalkit report`: the terminal text, the self-contained HTML page, model drift first, and the charts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import pytest

from evalkit._baseline import accept, load_reference
from evalkit._report import (
    build_report,
    cost_latency_chart,
    format_report,
    render_html,
    slice_delta_chart,
    slice_deltas,
    slice_pass_rate_chart,
    to_svg,
)
from evalkit._results import CaseResult, CheckResult, Manifest, RunDir, read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.stats import case_verdicts, compare_runs, cost_latency, newcombe_paired, pass_rate
from evalkit.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
N = 60
SLICES = ("easy", "hard", "tricky")
XSS = "<script>alert(1)</script>"
EVIL_OUTPUT = '<img src=x onerror="alert(2)">'


def write_suite(root: Path) -> Path:
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(N):
        text = XSS if i == 0 else f"ticket {i} see http://example.com/{i}" if i == 1 else f"ticket {i}"
        lines.append(json.dumps({"id": f"c{i:02d}", "input": {"body": text}, "expected": "yes"}))
    (suite / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite


def make_run(
    root: Path,
    run_id: str,
    passes: Any,
    *,
    repeats: int = 1,
    model_version: str | None = None,
    judge_version: str | None = None,
    prompt_hash: str = "p1",
    suite_version: str = "v1",
) -> Path:
    """A run of the synthetic suite; ``passes(i, repeat)`` says whether case i passes."""
    suite = write_suite(root)
    results = []
    for i in range(N):
        for r in range(repeats):
            ok = bool(passes(i, r))
            checks = [
                CheckResult(
                    index=0,
                    kind="exact",
                    name="exact",
                    tier="exact",
                    status="pass" if ok else "fail",
                    passed=ok,
                    detail="matches" if ok else "expected 'yes', got <b>no</b>",
                )
            ]
            if judge_version:
                checks.append(
                    CheckResult(
                        index=1,
                        kind="judge",
                        name="tone",
                        tier="judge",
                        status="pass",
                        passed=True,
                        judge_model="claude-judge",
                        judge_model_version=judge_version,
                        judge_cost_usd=0.001,
                        judge_latency_s=0.5,
                    )
                )
            results.append(
                CaseResult(
                    run_id=run_id,
                    suite="synthetic",
                    suite_version=suite_version,
                    case_id=f"c{i:02d}",
                    slice=SLICES[i % 3],
                    split="holdout" if i % 5 == 0 else "dev",
                    repeat=r,
                    status="pass" if ok else "fail",
                    output="yes" if ok else EVIL_OUTPUT,
                    system="claude",
                    system_model="claude-x",
                    system_model_version=model_version,
                    cost_usd=0.002,
                    latency_s=0.2 + 0.01 * i,
                    checks=checks,
                )
            )
    run = RunDir(root / "runs" / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite="synthetic",
            suite_version=suite_version,
            suite_path=str(suite),
            cases=N,
            repeats=repeats,
            system={"kind": "claude", "name": "claude", "model": "claude-x", "prompt_hash": prompt_hash},
            judge={"model": "claude-judge"} if judge_version else None,
            status="complete",
        )
    )
    run.finalize(results)
    return run.path


def base_passes(i: int, r: int) -> bool:
    return i < 45


def worse_passes(i: int, r: int) -> bool:
    # c00..c07 regress (c00 carries the script input), c50 and c51 are fixed.
    return (8 <= i < 45) or i in (50, 51)


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    return make_run(root, "before", base_passes), make_run(root, "after", worse_passes)


@pytest.fixture(scope="module")
def page(pair: tuple[Path, Path]) -> str:
    before, after = pair
    manifest, rows = read_run(after)
    return render_html(build_report(manifest, rows, load_reference(before)))


def test_html_is_self_contained(page: str) -> None:
    parser = Tags()
    parser.feed(page)
    names = [t for t, _ in parser.tags]
    assert "link" not in names and "iframe" not in names and "img" not in names
    assert all("src" not in a and "href" not in a for _, a in parser.tags)
    # one inline script, the failures table's filters: user text (a case input holds <script>) stays escaped
    assert names.count("script") == 1 and page.lower().count("<script") == 1
    assert page.index("<script>") > page.index("</main>")
    assert "http" not in page.replace("http://example.com", "")  # the one URL is a case's escaped text
    assert "url(" not in page and "@import" not in page
    assert page.count("<svg") >= 3  # slice rates, slice deltas, cost and latency


def test_html_escapes_user_text_and_lists_flipped_cases(page: str) -> None:
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    assert "&lt;b&gt;no&lt;/b&gt;" in page
    flipped = page[page.index("<h2>Flipped cases</h2>") :]
    for cid in [f"c{i:02d}" for i in range(8)] + ["c50", "c51"]:
        assert f"<code>{cid}</code>" in flipped
    assert flipped.index("c07") < flipped.index("c50")  # regressions first
    assert "10 flipped (8 pass→fail, 2 fail→pass)" in flipped
    for section in ("Pass rate by slice", "Change by slice", "Minimum detectable effect", "Dev vs holdout"):
        assert f"<h2>{section}</h2>" in page
    assert "Cost and latency" in page and "p95 latency" in page


def test_flipped_list_is_capped_with_a_count(pair: tuple[Path, Path]) -> None:
    before, after = pair
    manifest, rows = read_run(after)
    page = render_html(build_report(manifest, rows, load_reference(before)), max_flipped=3)
    flipped = page[page.index("<h2>Flipped cases</h2>") :]
    assert "showing the first 3" in flipped and "10 flipped" in flipped
    assert "<code>c02</code>" in flipped and "<code>c03</code>" not in flipped


def test_terminal_report_with_baseline(pair: tuple[Path, Path]) -> None:
    before, after = pair
    manifest, rows = read_run(after)
    text = format_report(build_report(manifest, rows, load_reference(before)))
    assert text.startswith("synthetic · system claude")
    assert "75.0% -> 65.0%" in text and "McNemar exact p" in text
    assert "8 pass->fail, 2 fail->pass" in text and "pass->fail  c00" in text
    assert "slices that moved" in text and "minimum detectable effect" in text


def test_model_drift_comes_first(tmp_path: Path) -> None:
    a = make_run(tmp_path, "a", base_passes, model_version="claude-x-0101", judge_version="judge-1")
    b = make_run(tmp_path, "b", base_passes, model_version="claude-x-0601", judge_version="judge-2")
    manifest, rows = read_run(b)
    report = build_report(manifest, rows, load_reference(a))
    text = format_report(report)
    first, second = text.splitlines()[:2]
    assert first.startswith("MODEL DRIFT") and "system model" in first
    assert "claude-x-0101" in first and "claude-x-0601" in first
    assert second.startswith("MODEL DRIFT") and "judge model" in second
    page = render_html(report)
    assert page.index("MODEL DRIFT") < page.index("<h1>")

    # A new prompt is a change of ours, not drift.
    c = make_run(tmp_path, "c", base_passes, model_version="claude-x-0601", prompt_hash="p2")
    manifest, rows = read_run(c)
    assert "MODEL DRIFT" not in format_report(build_report(manifest, rows, load_reference(a)))


def test_slice_deltas_match_compare_runs_per_slice(pair: tuple[Path, Path]) -> None:
    before, after = pair
    verdicts = case_verdicts(pl.concat([read_run(before)[1], read_run(after)[1]]))
    deltas = slice_deltas(verdicts, "before", "after")
    assert deltas.get_column("slice").to_list() == sorted(SLICES)
    for r in deltas.iter_rows(named=True):
        c = compare_runs(verdicts.filter(pl.col("slice") == r["slice"]), "before", "after")
        assert r["n"] == c.n and r["diff"] == pytest.approx(c.diff)
        assert r["ci_low"] == pytest.approx(c.ci_low) and r["pass_to_fail"] == c.only_a


def test_repeats_show_the_noise_floor(tmp_path: Path) -> None:
    flaky = make_run(tmp_path, "flaky", lambda i, r: i < 30 or (i < 50 and r != i % 3), repeats=3)
    manifest, rows = read_run(flaky)
    report = build_report(manifest, rows)
    assert report.noise is not None and report.noise["flaky_cases"] == 20
    assert "flaky case" in format_report(report)
    page = render_html(report)
    assert "<h2>Noise floor</h2>" in page and "clustered by case" in page


def test_charts_build_from_real_frames(tmp_path: Path) -> None:
    suite = load_suite(ROOT / "goldens" / "support-triage")
    options = RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False)
    outcome = Runner(suite, load_system("baseline", suite), options).run()
    _, rows = read_run(outcome.run_dir)
    run_id = rows.get_column("run_id")[0]
    # A variant of the same run: every third case's verdict flipped.
    flip = pl.col("case_id").str.extract(r"(\d+)$").cast(pl.Int64) % 3 == 0
    variant = rows.with_columns(
        pl.lit("variant").alias("run_id"),
        pl.when(flip & (pl.col("status") == "pass"))
        .then(pl.lit("fail"))
        .when(flip & (pl.col("status") == "fail"))
        .then(pl.lit("pass"))
        .otherwise(pl.col("status"))
        .alias("status"),
    )
    verdicts = case_verdicts(pl.concat([rows, variant]))
    charts: list[alt.Chart | alt.LayerChart] = [
        slice_pass_rate_chart(pass_rate(verdicts.filter(pl.col("run_id") == run_id), by="slice")),
        slice_pass_rate_chart(pass_rate(verdicts, by=["slice", "run_id"]).rename({"run_id": "run"})),
        slice_delta_chart(slice_deltas(verdicts, run_id, "variant")),
        cost_latency_chart(cost_latency(pl.concat([rows, variant])).by_run),
    ]
    for chart in charts:
        spec = chart.to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert to_svg(chart).startswith("<svg")
    with pytest.raises(ValueError, match="missing columns"):
        slice_delta_chart(pl.DataFrame({"slice": ["a"]}))


def test_report_cli_against_a_baseline_json(pair: tuple[Path, Path], tmp_path: Path) -> None:
    before, after = pair
    baseline = accept(before, to=tmp_path / "baseline.json").path
    html_path = tmp_path / "out" / "report.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalkit.cli",
            "report",
            str(after),
            "--baseline",
            str(baseline),
            "--html",
            str(html_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"against baseline {baseline}" in proc.stdout and "change -10.0 pts" in proc.stdout
    page = html_path.read_text(encoding="utf-8")
    assert "<svg" in page
    # the baseline file stores outputs: c00's row shows the baseline's "yes" beside this run's (escaped) output
    flipped = page[page.index("<h2>Flipped cases</h2>") :]
    row = flipped[flipped.index("<code>c00</code>") :].split("</tr>")[0]
    baseline_cell, this_cell = row.split("<td>")[-2:]
    assert "<pre>yes</pre>" in baseline_cell and "its check passed" in baseline_cell
    assert "&lt;img src=x" in this_cell and "outputs are not stored" not in page
    assert not list(html_path.parent.glob(".*.tmp"))  # written atomically, no temp file left behind


def test_slice_intervals_stay_within_what_the_change_can_be() -> None:
    import polars as pl

    from evalkit._report import slice_deltas

    rows = []
    for i in range(6):  # a small slice that collapses from 5/6 to 0/6: a t interval would run past -100 pts
        for run, passed in (("A", i != 0), ("B", False)):
            rows.append(
                {
                    "run_id": run,
                    "case_id": f"c{i}",
                    "repeat": 0,
                    "slice": "tiny",
                    "split": "dev",
                    "status": "pass" if passed else "fail",
                    "passed": passed,
                }
            )
    deltas = slice_deltas(pl.DataFrame(rows), "A", "B").row(0, named=True)
    assert deltas["diff"] == pytest.approx(-5 / 6)
    # bounded where a change ends (-100 pts), not at the observed -rate_a: that is an estimate, not a bound
    assert -1.0 <= deltas["ci_low"] < -deltas["rate_a"] and deltas["ci_high"] <= 1.0
    assert (deltas["ci_low"], deltas["ci_high"]) == newcombe_paired(0, 5, 0, 1)


def test_flipped_against_an_old_baseline_json_says_to_re_save_it(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    before, after = pair
    target = accept(before, to=tmp_path / "baseline.json", outputs=False).path
    # what an older evalkit wrote: the verdicts-only file, as format 1
    target.write_text(
        re.sub(r'  "digest": "[^"]*",\n', "", target.read_text(encoding="utf-8")).replace(
            '"format_version": 2', '"format_version": 1'
        ),
        encoding="utf-8",
    )
    manifest, rows = read_run(after)
    page = render_html(build_report(manifest, rows, load_reference(target)))
    flipped = page[page.index("<h2>Flipped cases</h2>") :]
    row = flipped[flipped.index("<code>c00</code>") :].split("</tr>")[0]
    baseline_cell, this_cell = row.split("<td>")[-2:]
    assert "outputs are not stored in baseline.json" in baseline_cell
    # why, and what to do, said once above the table
    note = flipped[: flipped.index("<table>")]
    assert (
        "format-1 baseline.json" in note
        and "Re-save the baseline" in note
        and "evalkit baseline accept" in note
    )
    assert flipped.count("Re-save the baseline") == 1
    assert "<pre>" not in baseline_cell and "&lt;img src=x" in this_cell
