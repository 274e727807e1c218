"""What the reports say of a run's judge: its calibration state, and each judged check's pass rate corrected by
the human labels of the run's outputs. Never raises for missing, stale or unreadable labels: it says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit.calibration._calibrate import _corrected
from evalkit.calibration._join import Joined, cascade_verdicts, join_labels
from evalkit.calibration._labels import Label, read_labels
from evalkit.calibration._record import calibration_state, read_calibration_record
from evalkit.calibration._trust_model import JudgedCheck, JudgeTrust, TrustState
from evalkit.errors import EvalkitError, clip
from evalkit.stats import wilson_interval

if TYPE_CHECKING:
    from evalkit.suite import Suite


def judged_checks(rows: pl.DataFrame) -> list[str]:
    """The names of the run's judge checks, in order."""
    return sorted(rows.filter(pl.col("tier") == "judge").get_column("check_name").unique().to_list())


def default_labels(labels_dir: str | Path) -> list[Path]:
    """Every ``*.jsonl`` in `labels_dir`: the suite's labels/ folder, where `evalkit calibrate` writes its record
    beside the labels it read."""
    folder = Path(labels_dir)
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def _said(exc: Exception, limit: int = 400) -> str:
    """An error's message on one line, without the "N problems found:" heading of a records error."""
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    if len(lines) > 1 and lines[0].endswith("found:"):
        lines = lines[1:]
    return clip("; ".join(lines) or type(exc).__name__, limit)


def _read(paths: Sequence[Path]) -> tuple[list[Label], list[str], list[str]]:
    labels: list[Label] = []
    read: list[str] = []
    problems: list[str] = []
    for path in paths:
        try:
            labels.extend(read_labels(path))
        except (EvalkitError, OSError) as exc:
            problems.append(f"labels file {path} was not read: {_said(exc)}")
        else:
            read.append(str(path))
    return labels, read, problems


def _human_rate(
    rows: pl.DataFrame, joined: list[Joined], check: str, confidence: float
) -> dict[str, Any] | None:
    """When every case of the check (first repeat) has a human label of its output, the human rate is the pass
    rate, judged or not: PPI has nothing to add."""
    ids = cascade_verdicts(rows, check).get_column("case_id").to_list()
    human: dict[str, bool] = {}
    for j in joined:
        if j.label.check == check and j.human is not None and j.repeat == 0:
            human.setdefault(j.label.case_id, j.human)
    if not ids or not all(c in human for c in ids):
        return None
    passes = sum(human[c] for c in ids)
    ci = wilson_interval(passes, len(ids), confidence=confidence)
    return {
        "corrected": passes / len(ids),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "method": "human",
        "n_labelled": len(ids),
    }


def _check_state(state: TrustState, kappa: float | None, bar: float | None) -> TrustState:
    if state != "calibrated":
        return state
    # the judge as a whole reaches the bar on its lowest kappa; a check the record never measured has not
    return "calibrated" if kappa is not None and bar is not None and kappa >= bar else "uncalibrated"


def judge_trust(
    rows: pl.DataFrame,
    *,
    suite: Suite | None = None,
    suite_path: str | Path | None = None,
    labels: str | Path | Sequence[str | Path] | None = None,
    record: str | Path | None = None,
    confidence: float = 0.95,
) -> JudgeTrust | None:
    """The judge's calibration state and each judged check's judge-only and corrected pass rates, for a report.

    Parameters
    ----------
    rows:
        The run's check rows.
    suite, suite_path:
        The suite (or where to load it from: the manifest's ``suite_path``), for its bar and current judge.
    labels:
        Labels files (default: every ``*.jsonl`` in the suite's labels/ folder, where `evalkit calibrate` keeps
        its record). Where two labels name one output, the first read counts.
    record:
        The calibration record (default: ``labels/calibration.json`` in the suite's folder).
    confidence:
        The intervals' coverage.

    Returns
    -------
    JudgeTrust, or None when the run has no judge check. Unreadable labels or record, and a suite that cannot
    be loaded, are stated in it, never raised.
    """
    names = judged_checks(rows)
    if not names:
        return None
    problems: list[str] = []
    state: TrustState = "unknown"
    reason = "the suite could not be read"
    bar: float | None = None
    kappa: float | None = None
    n: int | None = None
    found = None
    where: str | None = None
    labels_dir: Path | None = None
    try:
        if suite is None:
            if suite_path is None:
                raise EvalkitError("no suite given")
            from evalkit.suite import load_suite

            suite = load_suite(suite_path)
        labels_dir = Path(suite.base_dir) / "labels"
        s = calibration_state(suite, record=record)
        state, reason, bar, kappa, n, where = s.state, s.reason, s.min_kappa, s.kappa, s.n, s.record
        found = read_calibration_record(s.record) if s.record and not s.record_ignored else None
    except EvalkitError as exc:
        reason = f"{reason}: {_said(exc)}"
    if labels is None:
        paths = default_labels(labels_dir) if labels_dir is not None else []
    elif isinstance(labels, str | Path):
        paths = [Path(labels)]
    else:
        paths = [Path(p) for p in labels]
    got, read, bad = _read(paths)
    problems += bad
    joined = join_labels(rows, got) if got else None
    checks = []
    for name in names:
        verdict = cascade_verdicts(rows, name).get_column("verdict")
        scored = verdict.drop_nulls()
        measured = found.checks[name].kappa if found and name in found.checks else None
        check = JudgedCheck(
            check=name,
            state=_check_state(state, measured, bar),
            verdicts=scored.len(),
            not_judged=verdict.null_count(),
            judge_only_rate=scored.sum() / scored.len() if scored.len() else None,
            kappa=measured,
        )
        mine = [j for j in joined.joined if j.label.check == name] if joined else []
        if not mine:
            checks.append(
                check.model_copy(update={"note": "no labels of this check match the run's outputs"})
            )
            continue
        human = _human_rate(rows, mine, name, confidence)
        if human is not None:
            checks.append(check.model_copy(update=human))
            continue
        try:
            est = _corrected(rows, mine, name, confidence)
        except EvalkitError as exc:
            checks.append(check.model_copy(update={"note": str(exc)}))
            continue
        update: dict[str, Any] = {
            "corrected": est.rate,
            "ci_low": est.ci_low,
            "ci_high": est.ci_high,
            "lam": est.lam,
        }
        if check.not_judged:
            update["note"] = f"{check.not_judged} cases not judged are left out"
        checks.append(check.model_copy(update=update | {"method": "ppi++", "n_labelled": est.n_labelled}))
    return JudgeTrust(
        state=state,
        reason=reason,
        min_kappa=bar,
        kappa=kappa,
        n=n,
        record=where,
        labels=read,
        labels_dir=str(labels_dir) if labels_dir is not None else None,
        labels_read=len(got),
        labels_joined=len(joined.joined) if joined else 0,
        labels_stale=len(joined.stale) if joined else 0,
        labels_unmatched=len(joined.unmatched) if joined else 0,
        problems=problems,
        confidence=confidence,
        checks=checks,
    )
