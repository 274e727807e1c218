"""`evalkit calibrate`: a run's judge and code checks against human labels of the same outputs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalkit.cli._args import CACHE_DIR_HELP, EXIT_FAIL, EXIT_OK, positive


def _kappa(text: str) -> float:
    value = float(text)
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("a kappa is between -1 and 1, e.g. 0.6")
    return value


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="measure a run's judge (and code checks) against human labels",
        description="Joins the run's verdicts with human labels on (case id, check, output hash); a label of an "
        "output the run no longer has is stale (counted and listed, never joined). Per check, slice and rubric "
        "criterion: n, missing, agreement, Cohen's kappa with its seeded bootstrap interval, the confusion "
        "counts, the judge's TPR/TNR, and for code checks coverage and false failure rate; the disagreements "
        "with both reasons; the judge's pass rate corrected by the labels (PPI++). Writes a calibration record "
        "(judge model, prompt hash, kappa, n, date) beside the labels when a judge kappa was measured. Exits 1 "
        "when the judge's kappa is below --min-kappa (or the suite's [judge] min_kappa), or cannot be measured.",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/) or its s3:// URL")
    p.add_argument("--labels", required=True, metavar="FILE", help="labels file (JSONL; required)")
    p.add_argument(
        "--judge-all",
        action="store_true",
        help="judge every labelled output the run has no verdict for (cascade skipped, or --judge off), with "
        "the suite's judge through the response cache; these verdicts are marked as such (default off)",
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help=CACHE_DIR_HELP.replace("(default", "for --judge-all (default: the run's cache, else"),
    )
    p.add_argument(
        "--by",
        choices=["date"],
        default=None,
        help="also give the figures per label date, to see drift (default: none)",
    )
    p.add_argument(
        "--min-kappa",
        type=_kappa,
        default=None,
        metavar="X",
        help="exit 1 when the judge's kappa is below X (default: the suite's [judge] min_kappa, else no bar)",
    )
    p.add_argument(
        "--record",
        default=None,
        metavar="FILE",
        help="where to write the calibration record (default: calibration.json beside the labels)",
    )
    p.add_argument(
        "--no-record", action="store_true", help="write no calibration record (default: write one)"
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--n-boot", type=positive, default=1000, metavar="N", help="bootstrap resamples (default 1000)"
    )
    p.add_argument(
        "--disagreements",
        type=positive,
        default=10,
        metavar="N",
        help="disagreements listed in the text (default 10)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="write one JSON object to stdout instead of the text (default off)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.api import load_run
    from evalkit.calibration import (
        calibrate,
        calibration_record,
        calibration_state,
        format_calibration,
        write_calibration_record,
    )

    loaded = load_run(args.run)
    result = calibrate(
        loaded,
        args.labels,
        judge_all=args.judge_all,
        cache_dir=args.cache_dir,
        by_date=args.by == "date",
        n_boot=args.n_boot,
        seed=args.seed,
    )
    record = calibration_record(result)
    target = Path(args.record) if args.record else Path(args.labels).parent / "calibration.json"
    written = None
    if not args.no_record and record.kappa is not None:
        written = write_calibration_record(record, target)
    bar = args.min_kappa
    state = None
    try:
        suite = loaded.suite
        if bar is None:
            bar = suite.config.judge.min_kappa
        state = calibration_state(suite, record=target)
    except Exception as exc:  # the suite moved since the run: the figures stand without the state
        print(
            f"evalkit calibrate: the suite could not be read for its calibration state ({exc})",
            file=sys.stderr,
        )
    failed = bar is not None and (record.kappa is None or record.kappa < bar)
    # a kappa over the bar that still leaves the suite's judge uncalibrated or stale (the verdicts came from
    # another model, such as evalkit serve's simulated judge) is no pass either
    unproven = (
        not failed and written is not None and state is not None and state.state in ("uncalibrated", "stale")
    )
    failed = failed or unproven
    if args.json:
        out = result.to_json() | {
            "record": str(written) if written else None,
            "min_kappa": bar,
            "passed": not failed,
            "state": state.model_dump(mode="json") if state else None,
        }
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(format_calibration(result, disagreements=args.disagreements))
        if written:
            print(f"calibration record written to {written}")
        else:
            why = "--no-record" if args.no_record else "no judge kappa was measured"
            print(f"no calibration record written ({why})")
        if state is not None:
            print(str(state))
        if bar is not None:
            shown = "not measured" if record.kappa is None else f"{record.kappa:.3f} ({record.check})"
            why = f" ({state})" if unproven else ""
            print(f"min kappa {bar}: judge kappa {shown}: {'FAIL' if failed else 'ok'}{why}")
    return EXIT_FAIL if failed else EXIT_OK
