"""Judge calibration of a run: its judge (and code checks) against human labels of the same outputs.

Per check, slice, rubric criterion (and label date, to see drift): n, missing, agreement, Cohen's kappa with
the seeded bootstrap interval of `agreement`, the confusion counts and the judge's TPR/TNR; for code checks
EvalGen's coverage and false failure rate; every disagreement with the human reason beside the machine's;
the labels whose output changed (stale) counted and listed; and the judge's pass rate corrected by PPI++.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit._results import RunLike, load_run_like
from evalkit.calibration._agreement import KAPPA_MIN_ITEMS, Confusion, agreement, few_items
from evalkit.calibration._confusion import ConfusionRates, confusion_rates
from evalkit.calibration._join import Joined, StaleLabel, UnmatchedLabel, cascade_verdicts, join_labels
from evalkit.calibration._labels import Label, label_item, read_labels
from evalkit.calibration._ppi import PPIEstimate, ppi_pass_rate
from evalkit.errors import EvalkitError
from evalkit.stats import Interval

ALL_CODE = "all code checks"
_LABELS = ["false", "true"]  # fail, pass: both always shown, so every confusion is 2 x 2


class Figures(BaseModel):
    """Human against one machine verdict within one group (all, a slice, a criterion or a label date)."""

    model_config = ConfigDict(frozen=True)
    group: str
    n: int
    missing: dict[str, int]
    percent_agreement: float | None
    cohen_kappa: float | None
    cohen_kappa_ci: Interval | None
    confusion: Confusion
    rates: ConfusionRates | None
    notes: list[str] = []


class LabelComparison(BaseModel):
    """One machine verdict (the labelled check itself, or a code check of the same output) against the labels."""

    model_config = ConfigDict(frozen=True)
    machine: str
    kind: Literal["judge", "code"]
    labelled_check: str
    overall: Figures
    by_slice: list[Figures]
    by_criterion: list[Figures] = []
    by_date: list[Figures] = []


class Disagreement(BaseModel):
    """An output where the human and a machine verdict differ (overall, or on one criterion)."""

    model_config = ConfigDict(frozen=True)
    case_id: str
    slice: str
    labelled_check: str
    machine: str
    kind: Literal["judge", "code"]
    output_hash: str
    criterion: str | None
    human: bool
    machine_passed: bool
    human_reason: str
    machine_reasoning: str
    source: str | None
    rater: str
    date: str | None


class Calibration(BaseModel):
    """What `calibrate` found; `to_json()` for tools, `format_calibration` for people."""

    model_config = ConfigDict(frozen=True)
    run_id: str
    run_path: str
    suite: str
    suite_version: str
    labels_path: str | None
    judge: dict[str, Any] | None
    labels: int
    joined: int
    unlabelled: int
    skipped: int
    stale: list[StaleLabel]
    unmatched: list[UnmatchedLabel]
    verdicts_from_run: int
    verdicts_extra: int
    no_verdict: int
    extra_errors: list[str]
    comparisons: list[LabelComparison]
    disagreements: list[Disagreement]
    items: list[dict[str, Any]]
    corrected: dict[str, PPIEstimate | str]
    confidence: float
    n_boot: int
    seed: int
    made_at: str

    def to_json(self) -> dict[str, Any]:
        """Everything, as JSON."""
        return self.model_dump(mode="json")

    def comparison(self, machine: str | None = None, *, kind: str = "judge") -> LabelComparison | None:
        """The comparison of `machine` (default: the first of `kind`)."""
        for c in self.comparisons:
            if (machine is None and c.kind == kind) or c.machine == machine:
                return c
        return None

    def figures_frame(self, by: Literal["overall", "slice", "criterion", "date"] = "overall") -> pl.DataFrame:
        """One row per (comparison, group): n, missing, agreement, kappa and interval, TPR/TNR, coverage, FFR."""
        rows = []
        for comp in self.comparisons:
            groups = {"overall": [comp.overall], "slice": comp.by_slice, "criterion": comp.by_criterion}.get(
                by, comp.by_date
            )
            for f in groups:
                r = f.rates
                ci = f.cohen_kappa_ci
                rows.append(
                    {
                        "machine": comp.machine,
                        "kind": comp.kind,
                        by: f.group,
                        "n": f.n,
                        "missing_human": f.missing.get("human", 0),
                        "missing_machine": f.missing.get("machine", 0),
                        "agreement": f.percent_agreement,
                        "kappa": f.cohen_kappa,
                        "kappa_low": ci[0] if ci else None,
                        "kappa_high": ci[1] if ci else None,
                        "tpr": r.true_positive_rate if r else None,
                        "tnr": r.true_negative_rate if r else None,
                        "coverage": r.coverage if r else None,
                        "false_failure_rate": r.false_failure_rate if r else None,
                    }
                )
        schema = {
            "machine": pl.String,
            "kind": pl.String,
            by: pl.String,
            "n": pl.Int64,
            "missing_human": pl.Int64,
            "missing_machine": pl.Int64,
            **{k: pl.Float64 for k in ("agreement", "kappa", "kappa_low", "kappa_high", "tpr", "tnr")},
            "coverage": pl.Float64,
            "false_failure_rate": pl.Float64,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")

    def items_frame(self) -> pl.DataFrame:
        """One row per joined label: case, slice, check, hash, human, judge, judge source, and each code check."""
        return pl.DataFrame(self.items, infer_schema_length=None) if self.items else pl.DataFrame()


def _b(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def _ratings(pairs: list[dict[str, Any]]) -> pl.DataFrame:
    rows = []
    for p in pairs:
        for rater, value in (("human", p["human"]), ("machine", p["machine"])):
            rows.append(
                {
                    "item": p["item"],
                    "rater": rater,
                    "value": _b(value),
                    "kind": None if value is None else "bool",
                    "number": None if value is None else float(value),
                    "criterion": p.get("criterion"),
                    "slice": p.get("group"),
                }
            )
    schema = {
        "item": pl.String,
        "rater": pl.String,
        "value": pl.String,
        "kind": pl.String,
        "number": pl.Float64,
        "criterion": pl.String,
        "slice": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def _figures(
    pairs: list[dict[str, Any]], *, grouped: bool, confidence: float, n_boot: int, seed: int
) -> list[Figures]:
    """Figures over `pairs` (all of them, or per their "group" when `grouped`), kappa intervals from `agreement`."""
    empty = Confusion(labels=_LABELS, counts=[[0, 0], [0, 0]])
    if not pairs:
        return [
            Figures(
                group="all",
                n=0,
                missing={"human": 0, "machine": 0},
                percent_agreement=None,
                cohen_kappa=None,
                cohen_kappa_ci=None,
                confusion=empty,
                rates=None,
                notes=["nothing to compare"],
            )
        ]
    result = agreement(
        _ratings(pairs),
        raters=["human", "machine"],
        by="slice" if grouped else None,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        order=_LABELS,
    )
    groups = result.by.items() if grouped and result.by else [("all", result)]
    out = []
    for name, g in groups:
        p = g.pairs[0]
        both = [
            (q["machine"], q["human"])
            for q in pairs
            if (not grouped or (q.get("group") or "(none)") == name)
            and q["human"] is not None
            and q["machine"] is not None
        ]
        rates = confusion_rates([m for m, _ in both], [h for _, h in both]) if both else None
        out.append(
            Figures(
                group=name,
                n=p.n,
                missing=g.missing,
                percent_agreement=p.percent_agreement,
                cohen_kappa=p.cohen_kappa,
                cohen_kappa_ci=p.cohen_kappa_ci,
                confusion=p.confusion,
                rates=rates,
                notes=[n.replace("human vs machine: ", "") for n in g.notes],
            )
        )
    return out


def _pairs(joined: list[Joined], machine: str | None, group: str | None) -> list[dict[str, Any]]:
    """(human, machine verdict) per joined label; machine None is the labelled check's own verdict."""
    out = []
    for j in joined:
        if machine is None:
            value = j.judge
        elif machine == ALL_CODE:
            known = [v for v in j.code.values()]
            value = None if not known or any(v is None for v in known) else all(known)
        else:
            if machine not in j.code:
                continue
            value = j.code[machine]
        g = {"slice": j.slice, "date": j.label.date or "(no date)"}.get(group or "")
        out.append({"item": label_item(j.label.key), "human": j.human, "machine": value, "group": g})
    return out


def _criterion_pairs(joined: list[Joined]) -> list[dict[str, Any]]:
    out = []
    for j in joined:
        given = {c["criterion"]: c.get("met") for c in j.judge_criteria or []}
        for c in j.label.criteria:
            out.append(
                {
                    "item": label_item(j.label.key) + "\x1f" + c.criterion,
                    "human": c.met,
                    "machine": given.get(c.criterion),
                    "group": c.criterion,
                }
            )
    return out


def _disagreements(joined: list[Joined], check: str, machines: list[str]) -> list[Disagreement]:
    out = []
    for j in joined:
        if j.label.check != check or j.human is None:
            continue
        base = {
            "case_id": j.label.case_id,
            "slice": j.slice,
            "labelled_check": check,
            "output_hash": j.label.output_hash,
            "human": j.human,
            "human_reason": j.label.reason,
            "rater": j.label.rater,
            "date": j.label.date,
        }
        if j.judge is not None and j.judge != j.human:
            out.append(
                Disagreement(
                    **base,
                    machine=check,
                    kind="judge" if j.judge_kind == "judge" else "code",
                    criterion=None,
                    machine_passed=j.judge,
                    machine_reasoning=j.judge_reasoning or "",
                    source=j.judge_source,
                )
            )
        given = {c["criterion"]: c for c in j.judge_criteria or []}
        for c in j.label.criteria:
            theirs = given.get(c.criterion)
            if c.met is None or theirs is None or theirs.get("met") is None or theirs["met"] == c.met:
                continue
            out.append(
                Disagreement(
                    **(base | {"human": c.met}),
                    machine=check,
                    kind="judge",
                    criterion=c.criterion,
                    machine_passed=bool(theirs["met"]),
                    machine_reasoning=theirs.get("evidence") or "",
                    source=j.judge_source,
                )
            )
        for name in machines:
            value = j.code.get(name)
            if value is None or value == j.human:
                continue
            out.append(
                Disagreement(
                    **base,
                    machine=name,
                    kind="code",
                    criterion=None,
                    machine_passed=value,
                    machine_reasoning=j.code_detail.get(name, ""),
                    source="run",
                )
            )
    return out


def _load(run: RunLike | str | Path) -> RunLike:
    return load_run_like(run)


def _labels(labels: str | Path | Sequence[Label]) -> tuple[list[Label], str | None]:
    if isinstance(labels, str | Path):
        return read_labels(labels), str(labels)
    return list(labels), None


def corrected_pass_rate(
    run: RunLike | str | Path,
    labels: str | Path | Sequence[Label],
    *,
    check: str | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The pass rate of a judged check corrected by human labels (PPI++, `ppi_pass_rate`).

    The prediction is the run's own verdict on the check for every case (first repeat): the judge's, or a fail
    where the cascade skipped the judge because a cheaper check failed. Cases with no verdict at all (not
    judged) are left out. Labels are used where they match the run's output (stale ones are not).

    Parameters
    ----------
    run:
        A `Run` or a run directory.
    labels:
        A labels file or labels.
    check:
        The labelled check (default: the only one the labels name).
    confidence:
        The interval's coverage.

    Returns
    -------
    PPIEstimate
        The corrected rate with its interval, beside the judge-only and human-only rates. Raises
        `EvalkitError` when no labelled case has a verdict, or every case is labelled (nothing to correct).
    """
    loaded = _load(run)
    got, _ = _labels(labels)
    names = sorted({lab.check for lab in got})
    if check is None:
        if len(names) != 1:
            raise EvalkitError(f"the labels are of checks {names}; choose one with check=")
        check = names[0]
    return _corrected(loaded.checks(), join_labels(loaded.checks(), got).joined, check, confidence)


def _corrected(rows: pl.DataFrame, joined: list[Joined], check: str, confidence: float) -> PPIEstimate:
    predicted = cascade_verdicts(rows, check).filter(pl.col("verdict").is_not_null())
    human: dict[str, bool] = {}
    for j in joined:
        if j.label.check == check and j.human is not None and j.repeat == 0:
            human.setdefault(j.label.case_id, j.human)
    ids = predicted["case_id"].to_list()
    verdicts = [float(v) for v in predicted["verdict"].to_list()]
    mask = [c in human for c in ids]
    if mask and all(mask):
        rate = sum(human[c] for c in ids) / len(ids)
        raise EvalkitError(
            f"every output of {check!r} is labelled: the human rate {rate:.3f} on {len(ids)} is the pass rate, "
            "and the judge has nothing to add"
        )
    if not any(mask):
        raise EvalkitError(
            f"no labelled output of {check!r} has a verdict in the run (judge off, or not judged); "
            "run with the judge, or calibrate with judge_all"
        )
    return ppi_pass_rate(
        verdicts,
        [v for v, m in zip(verdicts, mask, strict=True) if m],
        [float(human[c]) for c, m in zip(ids, mask, strict=True) if m],
        labelled=mask,
        confidence=confidence,
    )


def calibrate(
    run: RunLike | str | Path,
    labels: str | Path | Sequence[Label],
    *,
    judge_all: bool = False,
    judge: Any = None,
    client: Any = None,
    cache_dir: str | Path | None = None,
    by_date: bool = False,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> Calibration:
    """The run's judge (and code checks) against human labels of the same outputs.

    Parameters
    ----------
    run:
        A `Run` or a run directory.
    labels:
        A labels file (or labels), keyed by (case id, check name, output hash).
    judge_all:
        Judge every labelled output the run has no verdict for (the cascade skipped the judge, or it was off),
        with the suite's judge through the response cache; those verdicts are marked ``extra``.
    judge:
        The judge for `judge_all` (default: the suite's `Judge`, made as a run makes it).
    client:
        The client for the default judge (default: one made from the environment, as the runner does).
    cache_dir:
        The response cache for the default judge (default: the one the run used).
    by_date:
        Also give the figures per label date, to see a judge drift.
    confidence, n_boot, seed:
        The bootstrap of the kappa intervals (as `agreement`).

    Returns
    -------
    Calibration
    """
    from evalkit._results import judge_criteria

    loaded = _load(run)
    rows = loaded.checks()
    manifest = loaded.manifest
    got, path = _labels(labels)
    result = join_labels(rows, got, judge_criteria(loaded.path))
    joined = result.joined
    from_run = sum(j.judge_source == "run" for j in joined)
    extra_errors: list[str] = []
    judge_info = manifest.judge if from_run else None
    if judge_all:
        from evalkit.calibration._judge_all import judge_missing, suite_judge

        if judge is None:
            directory = cache_dir or manifest.cache.get("directory")
            judge = suite_judge(loaded.suite, cache_dir=directory, client=client)
        extra = judge_missing(joined, loaded.suite, judge)
        extra_errors = extra.errors
        if extra.judged and judge_info is None:
            judge_info = extra.judge
        elif extra.judged and judge_info is not None and extra.judge and "answered_by" in extra.judge:
            # the run's own judge settings, with the models that answered the verdicts judged here (the record's
            # answered_by covers them: without this, verdicts of a simulated judge left it "not recorded")
            judge_info = {**judge_info, "answered_by": extra.judge["answered_by"]}
    options: dict[str, Any] = {"confidence": confidence, "n_boot": n_boot, "seed": seed}
    comparisons: list[LabelComparison] = []
    disagreements: list[Disagreement] = []
    corrected: dict[str, PPIEstimate | str] = {}
    for check in sorted({j.label.check for j in joined}):
        mine = [j for j in joined if j.label.check == check]
        kind: Literal["judge", "code"] = "judge" if mine[0].judge_kind == "judge" else "code"
        comparisons.append(
            LabelComparison(
                machine=check,
                kind=kind,
                labelled_check=check,
                overall=_figures(_pairs(mine, None, None), grouped=False, **options)[0],
                by_slice=_figures(_pairs(mine, None, "slice"), grouped=True, **options),
                by_criterion=_figures(_criterion_pairs(mine), grouped=True, **options)
                if any(j.label.criteria for j in mine)
                else [],
                by_date=_figures(_pairs(mine, None, "date"), grouped=True, **options) if by_date else [],
            )
        )
        codes = sorted({name for j in mine for name in j.code})
        for name in [*codes, *([ALL_CODE] if len(codes) > 1 else [])]:
            comparisons.append(
                LabelComparison(
                    machine=name,
                    kind="code",
                    labelled_check=check,
                    overall=_figures(_pairs(mine, name, None), grouped=False, **options)[0],
                    by_slice=_figures(_pairs(mine, name, "slice"), grouped=True, **options),
                    by_date=_figures(_pairs(mine, name, "date"), grouped=True, **options) if by_date else [],
                )
            )
        found = _disagreements(mine, check, codes)
        disagreements += sorted(found, key=lambda d: (d.kind != "judge", d.machine, d.criterion or ""))
        try:
            corrected[check] = _corrected(rows, mine, check, confidence)
        except EvalkitError as exc:
            corrected[check] = str(exc)
    items = [
        {
            "case_id": j.label.case_id,
            "slice": j.slice,
            "check": j.label.check,
            "output_hash": j.label.output_hash,
            "rater": j.label.rater,
            "date": j.label.date,
            "human": j.human,
            "human_reason": j.label.reason,
            "judge": j.judge,
            "judge_source": j.judge_source,
            "judge_reasoning": j.judge_reasoning,
            "judge_skipped": j.judge_skipped,
            **{f"code:{k}": v for k, v in sorted(j.code.items())},
        }
        for j in joined
    ]
    return Calibration(
        run_id=manifest.run_id,
        run_path=str(loaded.path),
        suite=manifest.suite,
        suite_version=manifest.suite_version,
        labels_path=path,
        judge=judge_info,
        labels=len(got),
        joined=len(joined),
        unlabelled=sum(lab.passed is None and not lab.skipped for lab in got),
        skipped=sum(lab.skipped for lab in got),
        stale=result.stale,
        unmatched=result.unmatched,
        verdicts_from_run=from_run,
        verdicts_extra=sum(j.judge_source == "extra" for j in joined),
        no_verdict=sum(j.judge is None for j in joined),
        extra_errors=extra_errors,
        comparisons=comparisons,
        disagreements=disagreements,
        items=items,
        corrected=corrected,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        made_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


# -- text ---------------------------------------------------------------------------------------------------


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci: Interval | None, n: int) -> str:
    # * marks an interval on too few items to cover as it says (KAPPA_MIN_ITEMS; the footer says so)
    return "" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]{'*' if few_items(n) else ''}"


def _kappa(f: Figures) -> str:
    if f.cohen_kappa is None:
        return "undefined" if f.n else "—"
    return f"{f.cohen_kappa:.3f}{_ci(f.cohen_kappa_ci, f.n)}"


def _table(figures: list[Figures], kind: str, first: str) -> list[str]:
    rate_heads = ("TPR", "TNR") if kind == "judge" else ("coverage", "false fail")
    rows = [(first, "n", "missing h/m", "agree", "kappa [boot CI]", *rate_heads, "confusion h\\m f/t")]
    for f in figures:
        r = f.rates
        rates = (
            (_f(r.true_positive_rate if r else None), _f(r.true_negative_rate if r else None))
            if kind == "judge"
            else (_f(r.coverage if r else None), _f(r.false_failure_rate if r else None))
        )
        (ff, ft), (tf, tt) = f.confusion.counts
        rows.append(
            (
                f.group,
                str(f.n),
                f"{f.missing.get('human', 0)}/{f.missing.get('machine', 0)}",
                _f(f.percent_agreement),
                _kappa(f),
                *rates,
                f"f:{ff}/{ft} t:{tf}/{tt}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def format_calibration(c: Calibration, *, disagreements: int = 10) -> str:
    """A terminal view of `c`: the join, one table per comparison, the corrected rate, disagreements.

    Parameters
    ----------
    c:
        The calibration.
    disagreements:
        How many disagreements to list (the count is always shown).
    """
    judge = c.judge or {}
    lines = [
        f"Calibration of run {c.run_id} (suite {c.suite} {c.suite_version}) against {c.labels_path or 'labels'}",
        f"  judge: {judge.get('model', 'none')}, prompt {judge.get('prompt', '—')} {judge.get('prompt_hash', '')}".rstrip(),
        f"  labels: {c.labels} read, {c.joined} joined, {len(c.stale)} stale (output changed), "
        f"{len(c.unmatched)} not in the run; {c.skipped} skipped and {c.unlabelled} not labelled yet (missing)",
        f"  judge verdicts: {c.verdicts_from_run} from the run, {c.verdicts_extra} judged now for calibration "
        f"(--judge-all), {c.no_verdict} labelled outputs without one",
    ]
    if c.no_verdict and not c.verdicts_extra:
        lines.append(
            "  note: outputs the judge never saw (the cascade skipped it, or --judge off) have no verdict to "
            "compare; --judge-all judges them"
        )
    for s in c.stale[:10]:
        lines.append(
            f"  stale: {s.case_id} / {s.check}: labelled output {s.label_hash}, the run has {', '.join(s.run_hashes)}"
        )
    if len(c.stale) > 10:
        lines.append(f"  ... and {len(c.stale) - 10} more stale")
    lines.extend(f"  not in the run: {u.case_id} / {u.check}: {u.why}" for u in c.unmatched[:10])
    lines.extend(f"  could not judge: {e}" for e in c.extra_errors[:10])
    for comp in c.comparisons:
        what = "judge" if comp.kind == "judge" else "code check"
        lines += ["", f"{comp.machine} ({what}) vs human labels of {comp.labelled_check}"]
        lines += _table([comp.overall], comp.kind, "")
        if comp.overall.n == 0:
            lines.append(
                f"  no output has both a human label and a verdict of {comp.machine}: the per-slice and "
                f"per-criterion figures are empty ({len(comp.by_slice)} slices, {len(comp.by_criterion)} criteria)"
            )
            continue
        criteria = [f.model_copy(update={"group": _clip(f.group, 60)}) for f in comp.by_criterion if f.n >= 5]
        for title, part in (("slice", comp.by_slice), ("criterion", criteria), ("date", comp.by_date)):
            if part:
                lines += [f"  by {title}:", *_table(part, comp.kind, title)]
        if len(criteria) < len(comp.by_criterion):
            lines.append(
                f"  ({len(comp.by_criterion) - len(criteria)} criteria compared on fewer than 5 outputs are left "
                "out of this table; --json has them)"
            )
        for note in comp.overall.notes:
            lines.append(f"  note: {note}")
    for check, est in c.corrected.items():
        lines.append("")
        if isinstance(est, str):
            lines.append(f"corrected pass rate of {check}: not available: {est}")
            continue
        pct = round(100 * est.confidence)
        head = (
            f"pass rate of {check}: judge only {est.judge_only_rate:.3f} on {est.n_labelled + est.n_unlabelled}; "
            f"human only {est.human_only_rate:.3f} on {est.n_labelled}"
        )
        if est.why_not:
            lines.append(f"{head} [{est.ci_low:.3f}, {est.ci_high:.3f}] ({pct}%, Wilson); {est.why_not}")
            continue
        lines.append(
            f"{head}; corrected (PPI++, lambda {est.lam:.2f}) {est.rate:.3f} [{est.ci_low:.3f}, {est.ci_high:.3f}] "
            f"({pct}%)"
        )
    lines += ["", f"disagreements: {len(c.disagreements)}"]
    for d in c.disagreements[:disagreements]:
        on = f" on {d.criterion!r}" if d.criterion else ""
        src = " (judged for calibration)" if d.source == "extra" else ""
        lines.append(
            f"  {d.case_id} [{d.slice}] {d.machine}{on}: human {'pass' if d.human else 'fail'}, "
            f"{d.kind} {'pass' if d.machine_passed else 'fail'}{src}"
        )
        lines.append(f"    human: {_clip(d.human_reason)}")
        lines.append(f"    {d.kind}: {_clip(d.machine_reasoning)}")
    if len(c.disagreements) > disagreements:
        lines.append(f"  ... and {len(c.disagreements) - disagreements} more (--json lists them all)")
    lines.append(
        f"intervals: percentile bootstrap over items, {c.n_boot} resamples, seed {c.seed}; * marks an interval on "
        f"fewer than {KAPPA_MIN_ITEMS} items, which covers less often than it says"
    )
    return "\n".join(lines)


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
