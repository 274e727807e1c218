"""Whether a suite's judge is calibrated: the record `calibrate` leaves beside the labels, against min_kappa."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit._client import is_simulated
from evalkit._fs import atomic_write_text
from evalkit._records import (
    DIGEST_KEY,
    check_format_version,
    content_digest,
    decode_document,
    digest_problem,
)
from evalkit.calibration._calibrate import Calibration
from evalkit.errors import EvalkitError
from evalkit.stats import Interval

if TYPE_CHECKING:
    from evalkit.suite import Suite

RECORD_NAME = "calibration.json"
RECORD_FORMAT_VERSION = 2
"""1 (no ``format_version`` key): the first records; 2: also the models that answered, and a digest."""

Kappa = Annotated[float, Field(ge=-1.0, le=1.0)]
Count = Annotated[int, Field(ge=0)]


class CheckKappa(BaseModel):
    """One judged check's agreement with the labels when the record was made."""

    model_config = ConfigDict(frozen=True)
    kappa: Kappa | None
    kappa_ci: Interval | None
    n: Count
    missing: dict[str, Count]

    @field_validator("kappa_ci")
    @classmethod
    def _ci_in_domain(cls, v: Interval | None) -> Interval | None:
        if v is not None and not (-1.0 <= v[0] <= v[1] <= 1.0):
            raise ValueError(f"a kappa interval lies within [-1, 1], low before high; got {tuple(v)}")
        return v


class CalibrationRecord(BaseModel):
    """What a calibration measured, for which judge (model, prompt template hash, pass rule) and when.

    The file also holds a ``digest`` (sha256 over the rest of its canonical JSON), checked on reading: a record
    edited by hand no longer matches it and is refused."""

    model_config = ConfigDict(frozen=True)
    format_version: int = 1
    suite: str
    suite_version: str
    judge_model: str | None
    answered_by: list[str] | None = None
    """The model versions that gave the run's judge verdicts (what the API resolved, or a simulated judge),
    not the model asked for; None in a record written before they were kept."""
    prompt: str | None
    prompt_hash: str | None
    pass_rule: str | None
    kappa: Kappa | None
    check: str | None
    checks: dict[str, CheckKappa]
    n: Count
    verdicts_extra: Count
    stale: Count
    labels: str | None
    run_id: str
    date: str
    seed: int


def _answered_by(run_path: str) -> list[str] | None:
    """The judge model versions the run's results name (None when the run cannot be read from here)."""
    from evalkit._results import read_run

    try:
        _, rows = read_run(run_path)
    except (EvalkitError, OSError):
        return None
    if "judge_model_version" not in rows.columns:
        return []
    return sorted(str(v) for v in rows.get_column("judge_model_version").drop_nulls().unique().to_list())


def calibration_record(c: Calibration, *, answered_by: list[str] | None = None) -> CalibrationRecord:
    """The record of `c`: the lowest kappa of its judged checks stands for the judge (the check is named).

    `answered_by` (default: read from the run's results) is the judge model versions that answered."""
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
    if answered_by is None:
        answered_by = _answered_by(c.run_path)
        if answered_by is not None and c.verdicts_extra:
            # verdicts judged at calibration time (judge_all): their models, when the judge said them
            extra = judge.get("answered_by")
            answered_by = None if extra is None else sorted({*answered_by, *extra})
    return CalibrationRecord(
        format_version=RECORD_FORMAT_VERSION,
        suite=c.suite,
        suite_version=c.suite_version,
        judge_model=judge.get("model"),
        answered_by=answered_by,
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
    data = record.model_dump(mode="json")
    data[DIGEST_KEY] = content_digest(data)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return target


_AGAIN = "run `evalkit calibrate` again to rewrite it"


def read_calibration_record(path: str | Path) -> CalibrationRecord | None:
    """The record at `path`, or None when there is none.

    A record that cannot be trusted is an EvalkitError naming the file and what is wrong: not JSON (or
    duplicate keys, too deep, too many digits), a newer format, a value outside its domain (located by its
    field), or content that no longer matches its digest (edited by hand)."""
    target = Path(path)
    if not target.is_file():
        return None
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalkitError(f"{target}: cannot read the calibration record ({exc})") from None
    data = decode_document(text, str(target))
    if not isinstance(data, dict):
        raise EvalkitError(f"{target}: not a calibration record (a JSON object); {_AGAIN}")
    check_format_version(data.get("format_version"), RECORD_FORMAT_VERSION, str(target))
    try:
        record = CalibrationRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(the record)"
        got = first.get("input")
        shown = "" if isinstance(got, dict | list) else f" (found {got!r})"
        raise EvalkitError(
            f"{target}: not a calibration record: {where}: {first['msg']}{shown}; {_AGAIN}"
        ) from None
    edited = digest_problem(data)
    if edited:
        raise EvalkitError(f"{target}: {edited}; {_AGAIN}")
    return record


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
    record_ignored: bool = False
    """The record was refused (edited, out of domain, another suite's, a newer format) or names a check it
    has no kappa for: its figures are not to be shown as the judge's."""

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
    where = str(path)
    try:
        found = read_calibration_record(path)
    except EvalkitError as exc:  # a record that cannot vouch is no calibration: said, never raised
        return CalibrationState(
            state="uncalibrated",
            reason=f"record refused: {exc}",
            min_kappa=bar,
            record=where,
            record_ignored=True,
        )
    if found is not None and found.suite != suite.name:
        return CalibrationState(
            state="uncalibrated",
            reason=f"{where} is the calibration record of suite {found.suite!r}, not {suite.name!r}: refused; "
            f"run `evalkit calibrate` on a run of {suite.name!r}",
            min_kappa=bar,
            record=where,
            record_ignored=True,
        )
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
    if found.check is not None and found.check not in found.checks:
        return CalibrationState(
            state="stale",
            reason=f"stale record ignored: it names check {found.check!r}, which it measured no kappa for; "
            "calibrate again",
            min_kappa=bar,
            record=where,
            record_ignored=True,
        )
    simulated = [m for m in found.answered_by or () if is_simulated(m)]
    if simulated and not is_simulated(now["model"]):
        return CalibrationState(
            state="uncalibrated",
            reason=f"the record of {found.date} was measured against {', '.join(simulated)}, not {now['model']}: "
            f"a simulated judge's agreement says nothing of {now['model']}; calibrate a run judged by it",
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
    if found.answered_by is None:
        shown += "; answered-by model not recorded: re-run calibrate"
    if found.kappa >= bar:
        return CalibrationState(
            state="calibrated", reason=f"{shown} >= min_kappa {bar} ({found.date})", **common
        )
    return CalibrationState(
        state="uncalibrated", reason=f"{shown} < min_kappa {bar} ({found.date})", **common
    )
