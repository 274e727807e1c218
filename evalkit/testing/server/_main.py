"""``python -m evalkit.testing.server``: serve until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from evalkit.testing.server._faults import FAULT_KINDS, FaultKind, FaultPlan, normalise_fault
from evalkit.testing.server._limits import ServerLimits, parse_size
from evalkit.testing.server._replies import DEFAULT_TEXT, PINNED_MODEL_IDS
from evalkit.testing.server._server import LocalAnthropicServer
from evalkit.testing.server._simulated_judge import SimulatedJudge

__all__ = ["main"]

_PROG = "python -m evalkit.testing.server"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked; ``fault_plan`` is the FaultPlan its fault flags make."""
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Serve a local Anthropic-compatible API until Ctrl-C, for offline suite development.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument(
        "--text",
        default=DEFAULT_TEXT,
        help="the reply text for every plain message (a structured-output request gets an example that fits "
        "its schema instead)",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    parser.add_argument("--batch-delay", type=float, default=0.0, help="seconds before a batch ends")
    parser.add_argument(
        "--resolve-models",
        action="store_true",
        help="answer undated aliases with the dated model ids (claude-sonnet-4-5 -> claude-sonnet-4-5-20250929)",
    )
    parser.add_argument(
        "--judge",
        choices=("simulated", "off"),
        default="simulated",
        help="simulated (default): answer evalkit's judge requests with simulated verdicts (model "
        "simulated-judge); off: answer them like any other request",
    )
    parser.add_argument("--no-auth", action="store_true", help="accept requests without an API key")
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=0.0,
        metavar="RATE",
        help="the share of requests, from 0 to 1, that fail with an injected fault (default: 0, none)",
    )
    parser.add_argument(
        "--faults",
        metavar="KINDS",
        help=f"comma-separated fault kinds to draw from (default: all: {','.join(FAULT_KINDS)}); "
        "a timeout fault holds the request until the client gives up",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for which requests fail, and how (default: 0)"
    )
    _add_limit_arguments(parser)
    args = parser.parse_args(argv)
    if not 0.0 <= args.fault_rate <= 1.0:  # (also false for nan)
        parser.error(f"--fault-rate: must be from 0 to 1, got {args.fault_rate:g}")
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    if args.faults is not None:
        if not args.fault_rate:
            parser.error("--faults: needs --fault-rate above 0")
        try:
            kinds = tuple(normalise_fault(k.strip()) for k in args.faults.split(",") if k.strip())
        except ValueError as exc:
            parser.error(f"--faults: {exc}")
        if not kinds:
            parser.error(f"--faults: name at least one of {', '.join(FAULT_KINDS)}")
    args.fault_plan = FaultPlan(rate=args.fault_rate, kinds=kinds, seed=args.seed)
    return args


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _connections(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number above 0, got {text!r}")
    return int(text)


def _add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-body`` and ``--max-connections``."""
    default = ServerLimits()
    parser.add_argument(
        "--max-body",
        type=_size,
        default=default.max_body,
        metavar="SIZE",
        help="the largest request body, in bytes or with a unit (512KiB, 32MiB, 1GB); a larger one is answered "
        "413 request_too_large (default: 32MiB, the API's own limit)",
    )
    parser.add_argument(
        "--max-connections",
        type=_connections,
        default=default.max_connections,
        metavar="N",
        help=f"the most connections served at once; more wait their turn (default: {default.max_connections})",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a local Anthropic-compatible API until Ctrl-C; returns the exit code (2 for bad usage)."""
    args = _parse_args(argv)
    server = LocalAnthropicServer(
        text=args.text,
        latency=args.latency,
        batch_delay=args.batch_delay,
        models=PINNED_MODEL_IDS if args.resolve_models else None,
        require_auth=not args.no_auth,
        faults=args.fault_plan,
        judge=SimulatedJudge() if args.judge == "simulated" else None,
        host=args.host,
        port=args.port,
        limits=ServerLimits(max_body=args.max_body, max_connections=args.max_connections),
    )
    try:
        server.start()
    except OSError as exc:  # an unknown host, a port in use, ...: a usage error, as argparse reports one
        where = f"--host {args.host} --port {args.port}"
        print(
            f"{_PROG}: error: cannot serve on {where}: {exc}",
            file=sys.stderr,
        )
        return 2
    try:  # (from here on, Ctrl-C stops the server however soon it comes)
        warning = server.exposure_warning()
        if warning is not None:
            print(f"{_PROG}: {warning}", file=sys.stderr, flush=True)
        print(server.base_url, flush=True)
        print(
            f"serving; use ANTHROPIC_BASE_URL={server.base_url} and any ANTHROPIC_API_KEY. Ctrl-C stops.",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
