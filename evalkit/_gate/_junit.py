"""The gate as JUnit XML: one test per case, the gate's numbers as testsuite properties."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl

from evalkit._baseline import Comparison, majority_verdicts, max_repeats
from evalkit._fs import atomic_write_text
from evalkit._gate._decision import GateDecision
from evalkit._gate._verify import Verification, describe
from evalkit._results import Manifest
from evalkit.stats import case_verdicts

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
    *,
    verification: Verification | None = None,
) -> str:
    """JUnit XML with one test per case: failure for a failing majority verdict (message: the failing
    checks' details), error for an errored case, skipped for an unscored one. The gate's numbers are
    testsuite properties.

    With a ``verification`` that fails the gate, every baseline case the run could not verify is a failing
    testcase (type "unverified"), a baseline case missing from the run included, and a suite version change
    not allowed is a failing testcase of its own, so CI names each thing that blocked the gate."""
    verdicts = case_verdicts(rows)
    majority = majority_verdicts(verdicts)
    repeats = max_repeats(verdicts)
    times = verdicts.group_by("case_id").agg(pl.col("latency_s").sum().alias("t"))
    majority = majority.join(times, on="case_id", how="left").sort("case_id")
    messages = _check_messages(rows, repeats)
    unverified = verification.unverified if verification is not None else {}
    blocking = verification is not None and not verification.tolerated
    total_time = float(majority.get_column("t").fill_null(0.0).sum())
    suite = ET.Element(
        "testsuite",
        {
            "name": manifest.suite,
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
            "paired_test": p.test,
            "paired_p": f"{p.p:.6g}",
        }
    if decision is not None:
        props |= {
            "gate": "fail" if decision.failed else "pass",
            "gate_verdict": decision.verdict.value,
            "gate_drop": f"{decision.drop:.6f}",
            "gate_max_drop": f"{decision.max_drop:g}",
            "gate_require_significant": str(decision.require_significant).lower(),
            "gate_unverified": str(decision.unverified),
            "gate_allow_unscored": str(decision.allow_unscored),
            "gate_allow_version_change": str(decision.allow_version_change).lower(),
            "gate_require_calibrated": str(decision.require_calibrated).lower(),
        }
        if decision.calibration is not None:
            props["gate_calibration"] = decision.calibration
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
        why = unverified.get(r["case_id"])
        if why is not None and blocking:
            lines = [f"could not be verified: {describe(why)}", *messages.get(r["case_id"], [])]
            el = ET.SubElement(case, "failure", {"message": _xml_text(lines[0]), "type": "unverified"})
            el.text = _xml_text("\n".join(lines))
            continue
        if status == "pass":
            continue
        lines = messages.get(r["case_id"], [])
        if why is not None:
            lines = [f"could not be verified ({describe(why)}); tolerated by allow_unscored", *lines]
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
    in_run = set(majority.get_column("case_id").to_list())
    for cid in sorted(c for c, w in unverified.items() if w == "missing" and c not in in_run):
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(f"{manifest.suite}.missing"), "name": _xml_text(cid)}
        )
        message = f"could not be verified: {describe('missing')}"
        if blocking:
            ET.SubElement(case, "failure", {"message": message, "type": "unverified"})
        else:
            ET.SubElement(case, "skipped", {"message": f"{message}; tolerated by allow_unscored"})
    if verification is not None and verification.version_blocks:
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(f"{manifest.suite}.gate"), "name": "suite version"}
        )
        text = "\n".join(verification.lines(manifest.run_id))
        ET.SubElement(
            case,
            "failure",
            {"message": "the suite version differs from the baseline's", "type": "unverified"},
        ).text = _xml_text(text)
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attr, str(sum(1 for c in cases if c.find(tag) is not None)))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(
    path: str | Path,
    manifest: Manifest,
    rows: pl.DataFrame,
    decision: GateDecision | None = None,
    comparison: Comparison | None = None,
    *,
    verification: Verification | None = None,
) -> None:
    """Write ``junit_xml`` to ``path`` atomically."""
    atomic_write_text(Path(path), junit_xml(manifest, rows, decision, comparison, verification=verification))
