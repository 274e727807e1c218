"""`evalkit serve`: the local Anthropic-compatible server, with request rules and a simulated judge, until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from evalkit.cli._args import EXIT_OK, EXIT_USAGE

# the CLI's exit codes (0 ok, 2 bad input or usage); kept here so that this module imports nothing of the CLI's


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # (also false for nan)
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number above 0, got {text!r}")
    return int(text)


def _size(text: str) -> int:
    from evalkit.testing.server import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(subparsers: Any) -> None:
    """Add ``serve`` to the ``evalkit`` command's subparsers."""
    p = subparsers.add_parser(
        "serve",
        help="serve a local Anthropic-compatible API (rules, a simulated judge) for offline suite development",
        description="Serve a local Anthropic-compatible API until Ctrl-C. Replies come from the rules file, else "
        "a fixed text (a structured-output request gets an example of its schema); evalkit's judge requests get "
        "verdicts from a simulated judge. Every reply is marked simulated: its model id starts with "
        "'simulated-' and each response has the header x-evalkit-simulated: true. "
        "Use ANTHROPIC_BASE_URL=<the printed URL> and any ANTHROPIC_API_KEY. See docs/serve.md.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port to bind; 0 picks a free one (default: 8765)")
    p.add_argument("--rules", metavar="FILE", help="a TOML rules file: request rules, judge settings, limits")
    p.add_argument("--text", help="the reply when no rule matches (default: a fixed sentence)")
    p.add_argument(
        "--judge",
        choices=("simulated", "off"),
        default=None,
        help="simulated (default): answer evalkit's judge requests with simulated verdicts; off: answer them "
        "like any other request",
    )
    p.add_argument("--overlap", type=_probability, help="share of a criterion's words that meets it (0.5)")
    p.add_argument("--position-bias", type=_probability, help="planted position bias, 0 to 1 (default 0)")
    p.add_argument("--verbosity-bias", type=_probability, help="planted verbosity bias, 0 to 1 (default 0)")
    p.add_argument(
        "--injection-susceptibility",
        type=_probability,
        help="planted chance of obeying an instruction in the candidate, 0 to 1 (default 0)",
    )
    p.add_argument("--judge-seed", type=int, help="seed for the planted biases' draws (default 0)")
    p.add_argument(
        "--rpm", type=_positive_int, help="requests per minute, enforced like the API (429 with retry-after)"
    )
    p.add_argument("--itpm", type=_positive_int, help="input tokens per minute, enforced like the API")
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply (default 0)")
    p.add_argument("--no-auth", action="store_true", help="accept requests without an API key")
    p.add_argument(
        "--max-body",
        type=_size,
        metavar="SIZE",
        help="the largest request body, in bytes or with a unit (512KiB, 32MiB, 1GB); a larger one is answered "
        "413 request_too_large (default: 32MiB, the API's own limit)",
    )
    p.add_argument(
        "--max-connections",
        type=_positive_int,
        metavar="N",
        help="the most connections served at once; more wait their turn (default: 256)",
    )
    p.set_defaults(func=run)


def build_server(args: argparse.Namespace) -> Any:
    """The (unstarted) server the arguments describe; raises ``RulesFileError`` for a bad rules file."""
    from evalkit.testing.server import (
        DEFAULT_TEXT,
        LocalAnthropicServer,
        RateLimits,
        RulesFile,
        RulesResponder,
        ServerLimits,
        load_rules_file,
    )

    rules = load_rules_file(args.rules) if args.rules else RulesFile()
    mode = args.judge or rules.judge_mode or "simulated"
    judge = None
    if mode == "simulated":
        judge = rules.simulated_judge(
            overlap=args.overlap,
            position_bias=args.position_bias,
            verbosity_bias=args.verbosity_bias,
            injection_susceptibility=args.injection_susceptibility,
            seed=args.judge_seed,
        )
    return LocalAnthropicServer(
        RulesResponder(rules.rules) if rules.rules else None,
        text=args.text or rules.text or DEFAULT_TEXT,
        latency=args.latency,
        require_auth=not args.no_auth,
        host=args.host,
        port=args.port,
        judge=judge,
        simulated=True,
        rate_limits=RateLimits(rpm=args.rpm or rules.rpm, itpm=args.itpm or rules.itpm),
        limits=ServerLimits(
            **{
                name: value
                for name, value in (("max_body", args.max_body), ("max_connections", args.max_connections))
                if value is not None
            }
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C (or SIGTERM); 2 for a bad rules file or an address that cannot be bound."""
    from evalkit.errors import RulesFileError

    try:
        server = build_server(args)
    except (RulesFileError, ValueError) as exc:
        print(f"evalkit serve: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        server.start()
    except OSError as exc:
        print(
            f"evalkit serve: error: cannot serve on --host {args.host} --port {args.port}: {exc}; "
            "pick another port (--port 0 picks a free one)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    judge = server.judge
    what = "no judge" if judge is None else f"simulated judge ({_describe(judge)})"
    limits = server.rate_limits
    if limits.rpm or limits.itpm:
        what += ", limits " + ", ".join(
            f"{n} {v}" for n, v in (("rpm", limits.rpm), ("itpm", limits.itpm)) if v
        )
    try:  # (from here on, Ctrl-C stops the server however soon it comes)
        warning = server.exposure_warning()
        if warning is not None:
            print(f"evalkit serve: {warning}", file=sys.stderr, flush=True)
        print(server.base_url, flush=True)
        print(
            f"serving with {what}; use ANTHROPIC_BASE_URL={server.base_url} and any ANTHROPIC_API_KEY. Ctrl-C stops.",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return EXIT_OK


def _describe(judge: Any) -> str:
    biases = [
        f"{name.replace('_', ' ')} {getattr(judge, name):g}"
        for name in ("position_bias", "verbosity_bias", "injection_susceptibility")
        if getattr(judge, name)
    ]
    return ", ".join([f"overlap {judge.overlap:g}", *(biases or ["no planted bias"])])
