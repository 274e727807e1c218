"""The regression gate for CI: fail when a run's pass rate falls further below its baseline than allowed.

The drop is measured on the case ids both sides share and scored (paired, B - A), so a suite that grew or
lost cases is still compared like for like. With ``require_significant`` a drop must also be significant by
McNemar's exact test, so a noisy suite does not fail a pull request on a coin flip.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalkit._fs import atomic_write_text
from evalkit.baseline import load_reference, majority_verdicts, max_repeats, run_info
from evalkit.errors import EvalkitError
from evalkit.report import Comparison, compare, comparison_lines, pts, pval
from evalkit.results import Manifest, load_run
from evalkit.stats import PairedComparison, case_verdicts

ALPHA = 0.05
DEFAULT_MAX_DROP = 0.02
# Float subtraction leaves dust: 0.80 - 0.78 is 0.0200000000000000178; a drop equal to the limit passes.
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class GateDecision:
    """Whether the gate failed, and the numbers it decided on."""

    failed: bool
    drop: float
    max_drop: float
    require_significant: bool
    p: float
    alpha: float
    reason: str


def decide(
    paired: PairedComparison,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    alpha: float = ALPHA,
) -> GateDecision:
    """Fail when the pass rate drops by more than ``max_drop``; with ``require_significant``, only when
    McNemar's exact p is also below ``alpha``."""
    if paired.n == 0:
        raise EvalkitError("the run and the baseline share no scored case; there is nothing to gate on")
    drop = -paired.diff
    p = paired.mcnemar_exact_p
    too_far = drop > max_drop + _TOLERANCE
    significant = p < alpha
    failed = too_far and (significant or not require_significant)
    drop_text = f"{100 * drop:.1f} pts"
    limit = f"{100 * max_drop:.1f} pts"
    if failed:
        why = f"FAIL: the pass rate dropped {drop_text}, more than the allowed {limit}"
        if require_significant:
            why += f", and McNemar's exact test calls the drop significant (p = {pval(p)} < {alpha:g})"
    elif too_far:
        why = (
            f"PASS: the pass rate dropped {drop_text}, more than the allowed {limit}, but McNemar's exact "
            f"test does not call it significant (p = {pval(p)} >= {alpha:g}), and --require-significant is set"
        )
    elif drop > 0:
        why = f"PASS: the pass rate dropped {drop_text}, within the allowed {limit}"
    else:
        why = f"PASS: the pass rate changed {pts(paired.diff)} (allowed drop {limit})"
    return GateDecision(failed, drop, max_drop, require_significant, p, alpha, why)


@dataclass(frozen=True, eq=False)
class GateOutcome:
    """The decision, the comparison behind it, and the text the command prints."""

    decision: GateDecision
    comparison: Comparison
    text: str

    @property
    def exit_code(self) -> int:
        return 1 if self.decision.failed else 0


def run_gate(
    run: str | Path,
    baseline: str | Path,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    junit: str | Path | None = None,
    alpha: float = ALPHA,
) -> GateOutcome:
    """Gate a finished run against a baseline (run directory or baseline.json); write JUnit XML if asked."""
    if not 0.0 <= max_drop < 1.0:
        raise EvalkitError(f"--max-drop must be a fraction in [0, 1), got {max_drop}")
    manifest, rows = load_run(run)
    if rows.is_empty():
        raise EvalkitError(f"{run}: the run has no results")
    if manifest.status != "complete":
        raise EvalkitError(
            f"run {manifest.run_id} is {manifest.status}, not complete: a gate on part of the suite would "
            f"pass on missing cases. Finish it with `evalkit run --resume {run}`."
        )
    reference = load_reference(baseline)
    info = run_info(manifest, rows)
    verdicts = case_verdicts(rows)
    comparison = compare(info, verdicts, reference)
    decision = decide(comparison.paired, max_drop, require_significant, alpha)

    lines = list(comparison.drift)
    if comparison.version_warning:
        lines.append(f"warning: {comparison.version_warning}")
    errors_now = _errored_cases(verdicts)
    errors_then = _errored_cases(reference.verdicts)
    if errors_now > errors_then:
        lines.append(
            f"warning: {_cases(errors_now)} errored in this run ({errors_then} in the baseline); errored cases "
            "are left out of the pass rate and the paired comparison, so check them before trusting a pass"
        )
    if lines:
        lines.append("")
    lines.append(f"gate: {manifest.suite} run {manifest.run_id}")
    lines.extend(comparison_lines(comparison))
    lines.append(decision.reason)
    if junit is not None:
        write_junit(junit, manifest, rows, decision, comparison)
        lines.append(f"JUnit XML written to {junit}")
    return GateOutcome(decision, comparison, "\n".join(lines))


def _cases(n: int) -> str:
    return f"{n} case{'' if n == 1 else 's'}"


def _errored_cases(verdicts: pl.DataFrame) -> int:
    return int((majority_verdicts(verdicts).get_column("status") == "error").sum())


# ---------------------------------------------------------------------------------------------------------
# JUnit XML

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MAX_MESSAGE = 500


def _xml_text(text: str) -> str:
    """Text XML 1.0 can carry: control characters and lone surrogates (from model output) replaced."""
    clean = text.encode("utf-8", "replace").decode("utf-8")
    return _XML_INVALID.sub("\ufffd", clean)


def _check_messages(rows: pl.DataFrame, repeats: int) -> dict[str, list[str]]:
    """Per case, one line per check that failed or errored (and per case-level error)."""
    bad = rows.filter(pl.col("status").is_in(["fail", "error"]))
    field = pl.when(pl.col("check_field").is_not_null()).then(pl.format(" [{}]", pl.col("check_field")))
    text = pl.coalesce(pl.col("error"), pl.col("detail"), pl.lit(""))
    prefix = pl.format("repeat {}: ", pl.col("repeat")) if repeats > 1 else pl.lit("")
    msg = pl.concat_str(
        [
            prefix,
            pl.col("status"),
            pl.lit(": "),
            pl.col("check_name"),
            field.otherwise(pl.lit("")),
            pl.lit(": "),
            text,
        ]
    )
    per_case = (
        bad.sort("case_id", "repeat", "check_index")
        .with_columns(msg.alias("_msg"))
        .group_by("case_id", maintain_order=True)
        .agg(pl.col("_msg"), pl.col("case_error").drop_nulls().unique().alias("_case_errors"))
    )
    out: dict[str, list[str]] = {}
    for cid, msgs, errs in per_case.iter_rows():
        out[cid] = [f"case error: {e}" for e in errs] + list(msgs)
    return out


def junit_xml(
    manifest: Manifest,
    rows: pl.DataFrame,
    decision: GateDecision | None = None,
    comparison: Comparison | None = None,
) -> str:
    """JUnit XML with one test per case: failure for a failing majority verdict (message: the failing
    checks' details), error for an errored case, skipped for an unscored one. The gate's numbers are
    testsuite properties."""
    verdicts = case_verdicts(rows)
    majority = majority_verdicts(verdicts)
    repeats = max_repeats(verdicts)
    times = verdicts.group_by("case_id").agg(pl.col("latency_s").sum().alias("t"))
    majority = majority.join(times, on="case_id", how="left").sort("case_id")
    messages = _check_messages(rows, repeats)
    counts = majority.get_column("status").value_counts()
    count = dict(zip(counts["status"].to_list(), counts["count"].to_list(), strict=True))
    total_time = float(majority.get_column("t").fill_null(0.0).sum())
    suite = ET.Element(
        "testsuite",
        {
            "name": manifest.suite,
            "tests": str(majority.height),
            "failures": str(count.get("fail", 0)),
            "errors": str(count.get("error", 0)),
            "skipped": str(count.get("not_scored", 0)),
            "time": f"{total_time:.3f}",
            "timestamp": manifest.started_at,
        },
    )
    props = {
        "run_id": manifest.run_id,
        "suite_version": manifest.suite_version,
        "system": str(manifest.system.get("name")),
    }
    if comparison is not None:
        p = comparison.paired
        props |= {
            "baseline": str(comparison.reference.path),
            "baseline_run_id": comparison.reference.info.run_id,
            "paired_cases": str(p.n),
            "pass_rate_baseline": f"{p.rate_a:.6f}",
            "pass_rate_run": f"{p.rate_b:.6f}",
            "pass_to_fail": str(p.only_a),
            "fail_to_pass": str(p.only_b),
            "mcnemar_exact_p": f"{p.mcnemar_exact_p:.6g}",
        }
    if decision is not None:
        props |= {
            "gate": "fail" if decision.failed else "pass",
            "gate_drop": f"{decision.drop:.6f}",
            "gate_max_drop": f"{decision.max_drop:g}",
            "gate_require_significant": str(decision.require_significant).lower(),
        }
    properties = ET.SubElement(suite, "properties")
    for name, value in props.items():
        ET.SubElement(properties, "property", {"name": name, "value": _xml_text(value)})
    for r in majority.iter_rows(named=True):
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": _xml_text(f"{manifest.suite}.{r['slice']}"),
                "name": _xml_text(r["case_id"]),
                "time": f"{r['t'] or 0.0:.3f}",
            },
        )
        status = r["status"]
        if status == "pass":
            continue
        lines = messages.get(r["case_id"], [])
        if repeats > 1:
            lines = [f"passed {r['passes']} of {r['scored']} scored repeats", *lines]
        body = _xml_text("\n".join(lines))
        first = _xml_text(lines[0] if lines else status)[:MAX_MESSAGE]
        if status == "fail":
            el = ET.SubElement(case, "failure", {"message": first, "type": "fail"})
            el.text = body
        elif status == "error":
            el = ET.SubElement(case, "error", {"message": first, "type": "error"})
            el.text = body
        else:
            ET.SubElement(case, "skipped", {"message": "not scored (no check could give a verdict)"})
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(
    path: str | Path,
    manifest: Manifest,
    rows: pl.DataFrame,
    decision: GateDecision | None = None,
    comparison: Comparison | None = None,
) -> None:
    atomic_write_text(Path(path), junit_xml(manifest, rows, decision, comparison))
