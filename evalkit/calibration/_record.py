"""Whether a suite's judge is calibrated: the record `calibrate` leaves beside the labels, against min_kappa."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit._fs import atomic_write_text
from evalkit.calibration._calibrate import Calibration
from evalkit.errors import EvalkitError
from evalkit.stats import Interval

if TYPE_CHECKING:
    from evalkit.suite import Suite

RECORD_NAME = "calibration.json"


class CheckKappa(BaseModel):
    """One judged check's agreement with the labels when the record was made."""

    model_config = ConfigDict(frozen=True)
    kappa: float | None
    kappa_ci: Interval | None
    n: int
    missing: dict[str, int]


class CalibrationRecord(BaseModel):
    """What a calibration measured, for which judge (model, prompt template hash, pass rule) and when."""

    model_config = ConfigDict(frozen=True)
    suite: str
    suite_version: str
    judge_model: str | None
    prompt: str | None
    prompt_hash: str | None
    pass_rule: str | None
    kappa: float | None
    check: str | None
    checks: dict[str, CheckKappa]
    n: int
    verdicts_extra: int
    stale: int
    labels: str | None
    run_id: str
    date: str
    seed: int


def calibration_record(c: Calibration) -> CalibrationRecord:
    """The record of `c`: the lowest kappa of its judged checks stands for the judge (the check is named)."""
    judge = c.judge or {}
    checks = {
        comp.machine: CheckKappa(
            kappa=comp.overall.cohen_kappa,
            kappa_ci=comp.overall.cohen_kappa_ci,
            n=comp.overall.n,
            missing=comp.overall.missing,
        )
        for comp in c.comparisons
        if comp.kind == "judge"
    }
    measured = {k: v for k, v in checks.items() if v.kappa is not None}
    worst = min(measured, key=lambda k: measured[k].kappa or 0.0) if measured else None
    return CalibrationRecord(
        suite=c.suite,
        suite_version=c.suite_version,
        judge_model=judge.get("model"),
        prompt=judge.get("prompt"),
        prompt_hash=judge.get("prompt_hash"),
        pass_rule=judge.get("pass_rule"),
        kappa=measured[worst].kappa if worst else None,
        check=worst,
        checks=checks,
        n=sum(v.n for v in checks.values()),
        verdicts_extra=c.verdicts_extra,
        stale=len(c.stale),
        labels=c.labels_path,
        run_id=c.run_id,
        date=c.made_at[:10],
        seed=c.seed,
    )


def write_calibration_record(c: Calibration | CalibrationRecord, path: str | Path) -> Path:
    """Write the record of `c` to `path` atomically (a reader sees the old record or the new one)."""
    record = c if isinstance(c, CalibrationRecord) else calibration_record(c)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, record.model_dump_json(indent=2) + "\n")
    return target


def read_calibration_record(path: str | Path) -> CalibrationRecord | None:
    """The record at `path`, or None when there is none; an unreadable one is an error naming the file."""
    target = Path(path)
    if not target.is_file():
        return None
    try:
        return CalibrationRecord.model_validate(json.loads(target.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise EvalkitError(
            f"{target}: not a calibration record ({first}); run `evalkit calibrate` again to rewrite it"
        ) from None


State = Literal["calibrated", "uncalibrated", "stale", "not required"]


class CalibrationState(BaseModel):
    """Whether the suite's current judge is calibrated, and why (for reports and the gate)."""

    model_config = ConfigDict(frozen=True)
    state: State
    reason: str
    min_kappa: float | None
    kappa: float | None = None
    n: int | None = None
    record: str | None = None

    def __str__(self) -> str:
        return f"judge {self.state}: {self.reason}"


def current_judge(suite: Suite) -> dict[str, Any]:
    """The judge a run of `suite` would use now: model, prompt template and its hash, pass rule."""
    from evalkit.graders import load_template

    template = load_template("judge_rubric")
    s = suite.config.judge
    return {"model": s.model, "prompt": template.name, "prompt_hash": template.hash, "pass_rule": s.pass_rule}


def calibration_state(suite: Suite, *, record: str | Path | None = None) -> CalibrationState:
    """Calibrated, uncalibrated, stale or not required, with the reason.

    Parameters
    ----------
    suite:
        The suite; its ``[judge] min_kappa`` is the bar.
    record:
        The calibration record (default: ``labels/calibration.json`` in the suite's folder).

    Returns
    -------
    CalibrationState
        *not required* when the suite has no judge checks or sets no min_kappa; *stale* when the record is
        of another judge model, prompt template or pass rule; *calibrated* when its kappa reaches min_kappa;
        otherwise *uncalibrated* (no record, no kappa measured, or below the bar).
    """
    path = Path(record) if record is not None else Path(suite.base_dir) / "labels" / RECORD_NAME
    bar = suite.config.judge.min_kappa
    if not any(c.kind == "judge" for case in suite.cases for c in case.checks):
        return CalibrationState(state="not required", reason="the suite has no judge checks", min_kappa=bar)
    found = read_calibration_record(path)
    where = str(path)
    if bar is None:
        said = "" if found is None or found.kappa is None else f" (last measured kappa {found.kappa:.3f})"
        return CalibrationState(
            state="not required",
            reason=f"suite.toml sets no [judge] min_kappa{said}",
            min_kappa=None,
            kappa=found.kappa if found else None,
            n=found.n if found else None,
            record=where if found else None,
        )
    if found is None:
        return CalibrationState(
            state="uncalibrated",
            reason=f"no calibration record at {where}; label outputs and run `evalkit calibrate`",
            min_kappa=bar,
        )
    now = current_judge(suite)
    changed = [
        f"{name} {getattr(found, key)!r} -> {now[name]!r}"
        for key, name in (
            ("judge_model", "model"),
            ("prompt_hash", "prompt_hash"),
            ("pass_rule", "pass_rule"),
        )
        if getattr(found, key) != now[name]
    ]
    common = {"min_kappa": bar, "kappa": found.kappa, "n": found.n, "record": where}
    if changed:
        return CalibrationState(
            state="stale",
            reason=f"the record of {found.date} is of another judge ({'; '.join(changed)}); calibrate again",
            **common,
        )
    if found.kappa is None:
        return CalibrationState(
            state="uncalibrated",
            reason=f"the record of {found.date} measured no kappa (n {found.n})",
            **common,
        )
    ci = found.checks[found.check].kappa_ci if found.check else None
    shown = f"kappa {found.kappa:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + f" on {found.n}"
    if found.kappa >= bar:
        return CalibrationState(
            state="calibrated", reason=f"{shown} >= min_kappa {bar} ({found.date})", **common
        )
    return CalibrationState(
        state="uncalibrated", reason=f"{shown} < min_kappa {bar} ({found.date})", **common
    )
