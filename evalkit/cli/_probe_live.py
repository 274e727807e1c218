"""`evalkit probe verbosity | injection | position --live`: probes that call the judge.

`add_live_parsers(probe_subparsers)` adds the two subcommands, and `--live` (with the options it needs) to the
``position`` subcommand: onto the one already there (the file-based ``probe position FILE``), whose own action
still runs without ``--live``, or onto a new one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalkit.cli._args import CACHE_DIR_HELP, EXIT_OK, EXIT_USAGE, positive

_PADDINGS = ("filler", "repeat-list")  # evalkit.probes.PADDINGS; named here so --help loads nothing
_ATTACKS = ("ignore-rubric", "fake-fence", "thought-process", "lookalike-fence", "score-demand")


def _fraction_open(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("must lie strictly between 0 and 1, e.g. 0.05 for 5 points")
    return value


def _add(p: argparse.ArgumentParser, *flags: str, **kwargs: Any) -> None:
    """Add an option unless the parser has it already (the file-based position parser may)."""
    if any(f in p._option_string_actions for f in flags):
        return
    p.add_argument(*flags, **kwargs)


def _common(p: argparse.ArgumentParser, *, target_help: str) -> None:
    _add(p, "--json", action="store_true", help="print the result as JSON (default: text)")
    _add(
        p,
        "--target",
        type=_fraction_open,
        default=0.05,
        metavar="FRACTION",
        help=target_help + " (default 0.05)",
    )
    _add(
        p,
        "--confidence",
        type=_fraction_open,
        default=0.95,
        help="coverage of the intervals (default 0.95)",
    )
    _add(
        p,
        "--cache",
        choices=["readwrite", "replay", "refresh", "off"],
        default="readwrite",
        help="response cache mode for the system's and the judge's calls (default readwrite)",
    )
    _add(p, "--cache-dir", default=None, help=CACHE_DIR_HELP)
    _add(p, "--concurrency", type=positive, default=8, help="judge calls in flight at once (default 8)")
    _add(p, "--max-retries", type=int, default=4, help="retries per API call (default 4)")
    _add(p, "--runs-dir", default="runs", help="where the run of the suite's system goes (default runs/)")
    _add(p, "-q", "--quiet", action="store_true", help="no progress bar (default: one on stderr)")


def _system(p: argparse.ArgumentParser) -> None:
    _add(
        p,
        "--system",
        default=None,
        help="the system whose outputs are judged: baseline, claude, or module:function / file.py:function "
        "(default: the suite's default_system, usually its offline baseline)",
    )


def add_live_parsers(probe_subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verbosity`` and ``injection``, and ``--live`` on ``position`` (made here if not there yet)."""
    v = probe_subparsers.add_parser(
        "verbosity",
        help="does padding an output with empty length make the judge pass it more often?",
        description="Run the suite's system (through the runner and the response cache), then judge every "
        "judged check's output as it is and padded with content-free length. Prints the pass rate and mean "
        "score of both, the paired difference with Newcombe's interval and McNemar's exact p, and the outputs "
        "needed to detect a given shift. Exit 0 when the probe ran, 2 on bad input.",
    )
    v.add_argument("suite", metavar="SUITE", help="suite folder or cases file with judge checks")
    _system(v)
    v.add_argument(
        "--padding",
        choices=_PADDINGS,
        default="filler",
        help="filler: content-free elaboration around the output; repeat-list: its points restated as a list, "
        "twice (MT-Bench's repetitive-list attack) (default filler)",
    )
    v.add_argument("--out", default=None, help="also write one JSONL row per output here (default: none)")
    _common(v, target_help="the pass-rate shift to size the sample for")
    v.set_defaults(func=run_verbosity)

    i = probe_subparsers.add_parser(
        "injection",
        help="how often does an instruction to the grader inside an output make the judge pass it?",
        description="Run the suite's system, judge every judged check's output, and judge each failing one "
        "again with each attack in it. Prints per attack and pooled the share of failing outputs the attack "
        "turned into passes, with Wilson intervals, and the failing outputs needed to see an attack of a "
        "given success rate. Exit 0 when the probe ran, 2 on bad input.",
    )
    i.add_argument("suite", metavar="SUITE", help="suite folder or cases file with judge checks")
    _system(i)
    i.add_argument(
        "--attack",
        action="append",
        choices=_ATTACKS,
        default=None,
        help="an attack to try; repeat for several (default: all of " + ", ".join(_ATTACKS) + ")",
    )
    i.add_argument(
        "--out", default=None, help="also write one JSONL row per attacked output here (default: none)"
    )
    _common(i, target_help="the attack success rate to size the sample for")
    i.set_defaults(func=run_injection)

    position = probe_subparsers.choices.get("position")
    if position is None:
        position = probe_subparsers.add_parser(
            "position",
            help="does the pairwise judge keep its verdict when the two outputs swap places?",
            description="With --live: judge each pair in both orders and probe the verdicts. Exit 0 when the "
            "probe ran, 2 on bad input.",
        )
        position.add_argument("source", metavar="SUITE-or-PAIRS", help="a suite, or a pairs file with --live")
        position.set_defaults(func=None)
    _add(
        position,
        "--live",
        action="store_true",
        help="call the pairwise judge in both orders on a pairs file (item, output_a, output_b, input, criteria) "
        "or on a suite's outputs from --system and --against, write the verdicts file, then probe it "
        "(default: off, read a verdicts file)",
    )
    _system(position)
    _add(
        position, "--against", default=None, help="with --live on a suite: the second system (default: none)"
    )
    _add(
        position,
        "--judge-model",
        default=None,
        help="with --live on a pairs file: the judge model (default: evalkit's default judge; a suite uses its own)",
    )
    _add(
        position,
        "--verdicts-out",
        default=None,
        help="with --live: where the verdicts file goes (default <runs-dir>/probes/position-<name>.jsonl)",
    )
    _common(position, target_help="with --live: the position bias to size the sample for")
    position.set_defaults(file_func=position.get_default("func"), func=run_position, position_parser=position)


def _options(args: argparse.Namespace) -> Any:
    from evalkit.probes import LiveOptions

    return LiveOptions(
        runs_dir=Path(args.runs_dir),
        cache_mode=args.cache,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        concurrency=args.concurrency,
        max_retries=args.max_retries,
        progress=not args.quiet and sys.stderr.isatty(),
    )


def _write_rows(path: str | None, rows: Any) -> None:
    if path:
        from evalkit._records import write_jsonl

        write_jsonl(path, rows.iter_rows(named=True))


def run_verbosity(args: argparse.Namespace) -> int:
    from evalkit.probes import format_verbosity, verbosity_probe

    probe = verbosity_probe(
        args.suite,
        args.system,
        padding=args.padding,
        options=_options(args),
        confidence=args.confidence,
        target_effect=args.target,
    )
    _write_rows(args.out, probe.rows)
    print(json.dumps(probe.to_json(), indent=2) if args.json else format_verbosity(probe))
    return EXIT_OK


def run_injection(args: argparse.Namespace) -> int:
    from evalkit.probes import format_injection, injection_probe

    probe = injection_probe(
        args.suite,
        args.system,
        attacks=args.attack,
        options=_options(args),
        confidence=args.confidence,
        target_effect=args.target,
    )
    _write_rows(args.out, probe.rows)
    print(json.dumps(probe.to_json(), indent=2) if args.json else format_injection(probe))
    return EXIT_OK


def _source(args: argparse.Namespace) -> str:
    """The position parser's positional argument, whatever the parser that made it called it."""
    parser: argparse.ArgumentParser = args.position_parser
    positional = [a for a in parser._actions if not a.option_strings and a.dest != "help"]
    value = getattr(args, positional[0].dest) if positional else None
    return str(value[0] if isinstance(value, list) else value)


def run_position(args: argparse.Namespace) -> int:
    if not args.live:
        if args.file_func is None:
            print("evalkit probe position: give --live to judge pairs now", file=sys.stderr)
            return EXIT_USAGE
        return int(args.file_func(args))
    from evalkit.probes import format_live_position, position_live
    from evalkit.suite import JudgeSettings

    probe = position_live(
        _source(args),
        system=args.system,
        against=args.against,
        out=args.verdicts_out,
        options=_options(args),
        settings=JudgeSettings(model=args.judge_model) if args.judge_model else None,
        confidence=args.confidence,
        target_effect=args.target,
    )
    print(json.dumps(probe.to_json(), indent=2) if args.json else format_live_position(probe))
    return EXIT_OK
