"""Baselines: the committed record of an accepted run, and loading whatever a run is compared against.

``goldens/<suite>/baseline.json`` is written only by ``evalkit baseline accept``. It holds the score, the
suite name and version it was scored against, one majority verdict per case, the system and judge models with
their resolved versions, and the run id and date. Since format 2 it also keeps each case's first-repeat output
and check details, clipped (``outputs``, one line per case), so a flipped case shows what the baseline said;
``--no-outputs`` leaves them out. Since format 3, a run with repeats also keeps each case's verdict per repeat
(``repeats``, one line per case): the paired statistics compare case pass rates, so a comparison against the
file gives the numbers a comparison against the run directory gives.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit._baseline._hashes import suite_case_hashes
from evalkit._baseline._info import majority_verdicts, max_repeats, run_info
from evalkit._baseline._outputs import StoredOutput, dump_output, stored_outputs
from evalkit._fs import atomic_write_text
from evalkit._records import DIGEST_KEY, check_format_version, content_digest, decode_document, digest_problem
from evalkit._results import CaseStatus, Manifest, now_iso, read_run
from evalkit._version import __version__
from evalkit.errors import EvalkitError
from evalkit.stats import case_verdicts, clustered_pass_rate, pass_rate

BASELINE_FORMAT: Final = "evalkit-baseline"
BASELINE_NAME = "baseline.json"
FORMAT_VERSION: Final = 3
"""1: verdicts only; 2: may also hold ``outputs``; 3: also holds ``repeats``. A run of one repeat has nothing
format 3 adds, so its file is written as format 2, which older evalkit versions read correctly."""


class BaselineScore(BaseModel):
    """The accepted run's pass rate over its scored (case x repeat) verdicts."""

    rate: float | None
    ci_low: float | None
    ci_high: float | None
    interval: Literal["wilson", "clustered"]
    passes: int
    scored: int
    errors: int
    not_scored: int
    cases: int
    repeats: int


class Baseline(BaseModel):
    """The contents of baseline.json."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["evalkit-baseline"] = BASELINE_FORMAT
    format_version: Literal[1, 2, 3] = FORMAT_VERSION
    suite: str
    suite_version: str
    score: BaselineScore
    run_id: str
    run_started_at: str | None = None
    accepted_at: str
    system: dict[str, Any]
    judge: dict[str, Any] | None = None
    evalkit_version: str = __version__
    git_commit: str | None = None
    cases: dict[str, CaseStatus]
    case_hashes: dict[str, str] | None = None
    """Per-case content hashes, so a gate across suite versions can compare the cases that did not change.
    Absent from baselines written before they were recorded (and when the suite had changed since the run)."""
    repeats: dict[str, list[CaseStatus]] | None = None
    """Per case, its verdict in each repeat, in repeat order (format 3): what a comparison of case pass rates
    needs. None for a run of one repeat (``cases`` holds its verdicts) and in a file written before format 3."""
    outputs: dict[str, StoredOutput] | None = None
    """Per case, the first repeat's output and check details, clipped (format 2). None in a format-1 file
    and in one accepted with ``outputs=False``."""

    @property
    def majority_only(self) -> bool:
        """Whether the file keeps only majority verdicts of a run that had repeats (written before format 3)."""
        return self.repeats is None and self.score.repeats > 1


def _clean(x: Any) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return round(float(x), 6)


def run_score(verdicts: pl.DataFrame) -> BaselineScore:
    """The pass rate of one run's verdicts; clustered by case when some case was repeated."""
    repeats = max_repeats(verdicts)
    clustered = repeats > 1
    frame = clustered_pass_rate(verdicts) if clustered else pass_rate(verdicts)
    r = frame.row(0, named=True)
    return BaselineScore(
        rate=_clean(r["rate"]),
        ci_low=_clean(r["ci_low"]),
        ci_high=_clean(r["ci_high"]),
        interval="clustered" if clustered else "wilson",
        passes=int(r["passes"]),
        scored=int(r["n"]),
        errors=int(r["errors"]),
        not_scored=int(r["not_scored"]),
        cases=verdicts.get_column("case_id").n_unique(),
        repeats=repeats,
    )


def build_baseline(manifest: Manifest, rows: pl.DataFrame, *, outputs: bool = True) -> Baseline:
    """The baseline a run would become if accepted.

    Parameters
    ----------
    manifest, rows:
        The run.
    outputs:
        Keep each case's first-repeat output and check details (clipped), so a flipped case shows its
        baseline side.

    Returns
    -------
    Baseline
    """
    if rows.is_empty():
        raise EvalkitError(f"run {manifest.run_id} has no results; nothing to accept")
    verdicts = case_verdicts(rows)
    info = run_info(manifest, rows)
    majority = majority_verdicts(verdicts)
    repeats = repeat_verdicts(verdicts) if max_repeats(verdicts) > 1 else None
    system = {
        "name": info.system_name,
        "kind": manifest.system.get("kind"),
        "model": info.system_model,
        "model_versions": list(info.system_model_versions),
        "prompt_hash": info.prompt_hash,
        "code_hash": info.code_hash,
    }
    judge = None
    if manifest.judge or info.judge_model_versions:
        judge = {
            "model": info.judge_model,
            "model_versions": list(info.judge_model_versions),
            "prompt_hash": (manifest.judge or {}).get("prompt_hash"),
        }
    return Baseline(
        format_version=FORMAT_VERSION if repeats is not None else 2,
        suite=manifest.suite,
        suite_version=manifest.suite_version,
        score=run_score(verdicts),
        run_id=manifest.run_id,
        run_started_at=manifest.started_at,
        accepted_at=now_iso(),
        system=system,
        judge=judge,
        git_commit=manifest.git_commit,
        cases=dict(zip(majority["case_id"].to_list(), majority["status"].to_list(), strict=True)),
        case_hashes=suite_case_hashes(manifest.suite_path, manifest.suite_version),
        repeats=repeats,
        outputs=stored_outputs(rows) if outputs else None,
    )


def repeat_verdicts(verdicts: pl.DataFrame) -> dict[str, list[CaseStatus]]:
    """Each case's verdict per repeat, in repeat order."""
    grouped = (
        verdicts.sort("case_id", "repeat").group_by("case_id", maintain_order=True).agg(pl.col("status"))
    )
    return dict(zip(grouped["case_id"].to_list(), grouped["status"].to_list(), strict=True))


def default_baseline_path(manifest: Manifest) -> Path:
    """baseline.json in the suite's folder (or ``<name>.baseline.json`` beside a bare .jsonl suite)."""
    suite_path = Path(manifest.suite_location())
    if suite_path.is_dir():
        return suite_path / BASELINE_NAME
    if suite_path.is_file():
        return suite_path.with_name(f"{suite_path.stem}.{BASELINE_NAME}")
    raise EvalkitError(
        f"the run's suite path {manifest.suite_path} does not exist from here; give --to PATH "
        f"(or run from the folder the run was made in)"
    )


def dump_baseline(baseline: Baseline) -> str:
    """Stable, reviewable JSON: sorted case ids, one per line, so a pull request diff shows each change.

    Each case's repeat verdicts and stored output are one line each (the output's keys sorted), so a changed
    case is a one-line diff.
    """
    data = baseline.model_dump(mode="json", exclude={"outputs", "repeats"})
    data["cases"] = dict(sorted(data["cases"].items()))
    if data.get("case_hashes") is None:
        data.pop("case_hashes", None)  # an older baseline's file stays byte for byte what it was
    else:
        data["case_hashes"] = dict(sorted(data["case_hashes"].items()))
    text = json.dumps(data, indent=2, ensure_ascii=False)
    blocks: list[tuple[str, dict[str, str]]] = []
    if baseline.repeats is not None:
        blocks.append(("repeats", {c: json.dumps(v) for c, v in baseline.repeats.items()}))
    if baseline.outputs is not None:
        blocks.append(("outputs", {c: dump_output(v) for c, v in baseline.outputs.items()}))
    for name, entries in blocks:
        lines = [f"    {json.dumps(c, ensure_ascii=False)}: {entries[c]}" for c in sorted(entries)]
        body = "{\n" + ",\n".join(lines) + "\n  }" if lines else "{}"
        text = f'{text.removesuffix("}").rstrip()},\n  "{name}": {body}\n}}'
    # the digest is over the content as read back, so a reader recomputes it from the parsed file
    digest = content_digest(json.loads(text))
    return text.replace("{\n", f'{{\n  "{DIGEST_KEY}": "{digest}",\n', 1) + "\n"


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline.json; every problem is an EvalkitError naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no such baseline file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalkitError(f"{path}: cannot read baseline ({exc})") from None
    data = decode_document(text, str(path))
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise EvalkitError(
            f'{path}: not an evalkit baseline (expected "format": "{BASELINE_FORMAT}"); '
            "write one with `evalkit baseline accept RUN`"
        )
    check_format_version(data.get("format_version"), FORMAT_VERSION, str(path))
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        if len(loc) >= 2 and loc[0] == "outputs" and isinstance(data.get("outputs"), dict):
            raise EvalkitError(_output_problem(path, text, loc[1], loc[2:], first["msg"])) from None
        where = ".".join(loc)
        raise EvalkitError(f"{path}: invalid baseline: {where}: {first['msg']}") from None
    strays = sorted(set(baseline.outputs or ()) - set(baseline.cases))
    if strays:
        raise EvalkitError(
            _output_problem(
                path, text, strays[0], [], "outputs are stored for a case with no verdict in cases"
            )
        )
    for case_id, statuses in (baseline.repeats or {}).items():
        if case_id not in baseline.cases or not statuses:
            what = "no verdict in cases" if case_id not in baseline.cases else "an empty list of repeats"
            raise EvalkitError(
                f"{path}: invalid baseline: repeats of case {case_id!r}: it has {what}. Write the file again with "
                "`evalkit baseline accept RUN --force`"
            )
    # what is malformed is located above; what is well formed but edited is refused here
    edited = digest_problem(data)
    if edited:
        raise EvalkitError(f"{path}: baseline refused: {edited}. {_REACCEPT}")
    mismatch = score_mismatch(baseline)
    if mismatch:
        raise EvalkitError(
            f"{path}: baseline refused: {mismatch}; it was edited after evalkit wrote it. {_REACCEPT}"
        )
    return baseline


_REACCEPT = (
    "A baseline the gate cannot trust is not a bar: accept the run again with `evalkit baseline accept RUN` "
    "(the run it names, or a new one with --force)"
)


def score_mismatch(baseline: Baseline) -> str | None:
    """Where the stored verdicts disagree with the stored score (None: they agree).

    The verdicts counted are each repeat's when the file keeps them, else each case's (a run of one repeat);
    a file that keeps only majority verdicts of repeats is checked on its number of cases only."""
    score = baseline.score
    said: list[str] = []
    if len(baseline.cases) != score.cases:
        said.append(f"{len(baseline.cases)} cases, the score counts {score.cases}")
    if baseline.repeats is not None:
        statuses = [s for per_case in baseline.repeats.values() for s in per_case]
    elif score.repeats <= 1:
        statuses = list(baseline.cases.values())
    else:
        statuses = None
    if statuses is not None:
        counted = {
            "passes": statuses.count("pass"),
            "scored": statuses.count("pass") + statuses.count("fail"),
            "errors": statuses.count("error"),
            "not_scored": statuses.count("not_scored"),
        }
        for name, n in counted.items():
            if n != getattr(score, name):
                said.append(f"the verdicts give {name} {n}, the score says {getattr(score, name)}")
    if not said:
        return None
    return "its verdicts do not match its score (" + "; ".join(said) + ")"


def _output_problem(path: Path, text: str, case_id: str, where: list[str], msg: str) -> str:
    """A problem in one case's stored output, located: file:line, case id, field, and what to do."""
    key = f"    {json.dumps(case_id, ensure_ascii=False)}: {{"
    start = text.find('\n  "outputs": {')
    at = text.find("\n" + key, max(start, 0)) if start >= 0 else -1
    line = f":{text.count(chr(10), 0, at) + 2}" if at >= 0 else ""
    field = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in where).lstrip(".") or "(the entry)"
    return (
        f"{path}{line}: invalid baseline: case {case_id!r}, outputs field {field}: {msg}. Fix the field, or "
        "write the file again with `evalkit baseline accept RUN --force` (or `--no-outputs` to store none)"
    )


@dataclass(frozen=True)
class Accepted:
    """What ``accept`` did: the path, the new baseline and the one it replaced, if any."""

    path: Path
    baseline: Baseline
    replaced: Baseline | None
    unchanged: bool = False
    edited: str | None = None
    """Why the file there could not be trusted (edited, torn) when accepting the run it names rewrote it."""


def accept(
    run: str | Path, to: str | Path | None = None, force: bool = False, *, outputs: bool = True
) -> Accepted:
    """Write a finished run's baseline.json atomically.

    Refuses an unfinished run, and an existing baseline from another run unless ``force``: a baseline
    moves the bar every later gate is held to, so replacing it must be deliberate. Accepting the run a
    baseline already holds writes only when it adds (or, with ``outputs=False``, drops) the stored outputs.

    Parameters
    ----------
    run:
        The finished run directory.
    to:
        Where to write (default: baseline.json in the run's suite folder).
    force:
        Replace a baseline that comes from another run.
    outputs:
        Store each case's first-repeat output and check details (clipped); False keeps verdicts only.

    Returns
    -------
    Accepted
    """
    manifest, rows = read_run(run)
    if manifest.status != "complete":
        raise EvalkitError(
            f"run {manifest.run_id} is {manifest.status}, not complete; finish it with "
            f"`evalkit run --resume {run}` before accepting it"
        )
    baseline = build_baseline(manifest, rows, outputs=outputs)
    path = Path(to) if to is not None else default_baseline_path(manifest)
    if path.is_dir() or str(to or "").endswith(("/", os.sep)):
        path = path / BASELINE_NAME
    replaced: Baseline | None = None
    edited: str | None = None
    if path.exists():
        try:
            replaced = load_baseline(path)
        except EvalkitError as exc:
            # an edited or torn file of this very run is rewritten: the bar does not move, the edit goes
            if not force and _names_run(path) != baseline.run_id:
                raise EvalkitError(
                    f"{path} exists and is not a readable baseline ({exc}); move it away or pass --force"
                ) from None
            edited, force = str(exc), True
        if replaced is not None and replaced.run_id == baseline.run_id:
            same_outputs = (replaced.outputs is None) == (baseline.outputs is None)
            same_verdicts = replaced.cases == baseline.cases and replaced.repeats == baseline.repeats
            if same_verdicts and same_outputs and (replaced.repeats is None) == (baseline.repeats is None):
                return Accepted(path, replaced, replaced, unchanged=True)
            if not same_verdicts:
                edited = "its verdicts differ from the run's"
            force = True  # the same run again, to add its repeats or add or drop its outputs: the bar does not move
        if not force:
            old = replaced.score.rate if replaced else None
            raise EvalkitError(
                f"{path} already holds the baseline of run {replaced.run_id if replaced else '?'} "
                f"(pass rate {_pct(old)}); accepting run {manifest.run_id} (pass rate "
                f"{_pct(baseline.score.rate)}) replaces it: pass --force to do so"
            )
    atomic_write_text(path, dump_baseline(baseline))
    return Accepted(path, baseline, replaced, edited=edited)


def _names_run(path: Path) -> str | None:
    """The run id a baseline file names, read leniently (for one that `load_baseline` refuses)."""
    try:
        data = decode_document(path.read_text(encoding="utf-8"), str(path))
    except (EvalkitError, OSError, UnicodeDecodeError):
        return None
    run_id = data.get("run_id") if isinstance(data, dict) else None
    return run_id if isinstance(run_id, str) else None


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"
