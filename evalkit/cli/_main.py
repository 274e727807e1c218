"""The `evalkit` command: the parser assembled from one module per subcommand, and errors as exit codes."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from evalkit._version import __version__
from evalkit.cli import (
    _ab,
    _agreement,
    _baseline,
    _cache,
    _calibrate,
    _gate,
    _init,
    _merge,
    _probe,
    _report,
    _review,
    _run,
    _serve,
    _validate,
)
from evalkit.cli._args import EXIT_FAIL, EXIT_OK, EXIT_SPENDING, EXIT_USAGE
from evalkit.errors import CallError, CheckError, EvalkitError, SpendingStopped, SuiteValidationError

__all__ = ["COMMANDS", "EXIT_FAIL", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

# one module per subcommand, each with add_parser(subparsers) and run(args); listed in the order --help shows
COMMANDS: list[ModuleType] = [
    _init,
    _validate,
    _run,
    _report,
    _gate,
    _merge,
    _ab,
    _baseline,
    _cache,
    _serve,
    _agreement,
    _calibrate,
    _probe,
    _review,
]


def command_name(module: ModuleType) -> str:
    """The subcommand a module of `COMMANDS` adds: its name without the package and the underscore."""
    return module.__name__.rsplit(".", 1)[-1].removeprefix("_")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command`, one that knows only that subcommand (what a run of it parses: building
    every subcommand's options cost about 30 ms of each command)."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Evaluate an LLM feature like a unit-test suite: golden cases, cheap-first graders, "
        "cached runs, pass rates with error bars, and a regression gate for CI.",
        epilog="Exit codes: 0 ok, 1 regression or failed gate, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        if command is None or command_name(module) == command:
            module.add_parser(subparsers)
    return parser


_terminated: list[int] = []
_GC_FIRST_GENERATION = 50_000


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    # a CI job that is cancelled gets SIGTERM: stop as on Ctrl-C, so the run is marked interrupted and the
    # log says how to resume it, instead of dying mid-run without a word
    _terminated.append(signum)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `evalkit` command line.

    Parameters
    ----------
    argv: the arguments (default: sys.argv[1:]).

    Returns
    -------
    The exit code: 0 ok, 1 regression or failed gate, 2 bad input or usage, 3 a run stopped for money.
    """
    if argv is None:
        # the program itself: its imports and a run's results are objects that live to the end, and collecting
        # every 700 allocations spent 50-70 ms of a warm rerun of 1,000 cases scanning them (a caller's own
        # process keeps its own settings)
        gc.set_threshold(_GC_FIRST_GENERATION, *gc.get_threshold()[1:])
    given = sys.argv[1:] if argv is None else list(argv)
    known = {command_name(m) for m in COMMANDS}
    parser = build_parser(given[0] if given and given[0] in known else None)
    args = parser.parse_args(given)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        with _safe_stdout():
            code = _main(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    profiled = sys.getprofile() is not None or sys.gettrace() is not None  # a profiler reports after main
    if argv is None and not profiled and threading.current_thread() is threading.main_thread():
        _exit_now(
            code
        )  # the program itself (console script, python -m evalkit.cli), never a caller's main([...])
    return code


# what a terminal would act on rather than show: C0 controls but tab and newline, DEL, C1 controls, and the
# bidirectional overrides; a label's reason or a slice name holding "\x1b[2J" must not clear the screen
_UNSAFE = {
    cp: f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}"
    for cp in [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
    if cp not in (0x09, 0x0A)
}


def terminal_safe(text: str) -> str:
    """`text` with what a terminal would act on shown as escapes (``\\x1b``), so user text cannot move the
    cursor, clear the screen or reorder a line."""
    return text.translate(_UNSAFE)


class _SafeStream:
    """A text stream whose writes go through `terminal_safe`: the command's output, with user text in it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _safe_stdout() -> Iterator[None]:
    previous = sys.stdout
    sys.stdout = _SafeStream(previous)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _SafeStream):
            sys.stdout = previous


def _exit_now(code: int) -> None:
    """End the process with `code` once its output is out, without tearing down every object it made.

    Everything the command wrote is closed (and synced where it matters) by the time it returns; what is left
    is the interpreter freeing the suite, the results and the imported modules one by one, 0.3 s after a large
    run. The exit handlers still run (a coverage tool's, say), and stdout and stderr are flushed first, so a
    pipe gets all of it; a reader that has gone away costs nothing more.
    """
    import atexit
    import contextlib

    def flush() -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe, or a stream the command closed
                stream.flush()

    flush()
    atexit._run_exitfuncs()
    flush()
    os._exit(code)


def _main(args: argparse.Namespace) -> int:
    _terminated.clear()
    try:
        return int(args.func(args))
    except SuiteValidationError as exc:
        for problem in exc.problems:
            print(terminal_safe(str(problem)), file=sys.stderr)
        print(f"\n{len(exc.problems)} problem(s); nothing was run. Fix them and run again.", file=sys.stderr)
        return EXIT_USAGE
    except CallError as exc:
        print(terminal_safe(f"evalkit: error: an API call failed ({exc})"), file=sys.stderr)
        return EXIT_USAGE
    except SpendingStopped as exc:
        print(terminal_safe(f"evalkit: stopped: {exc}"), file=sys.stderr)
        return EXIT_SPENDING
    except CheckError:
        # a run records a check's error as that check's result: one that gets this far is a bug, shown as one
        raise
    except EvalkitError as exc:
        print(terminal_safe(f"evalkit: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`evalkit ... | head`): not an error of ours, and nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except KeyboardInterrupt as exc:
        print(str(exc) or "interrupted", file=sys.stderr)  # a run's own message says how to resume it
        return 128 + signal.SIGTERM if _terminated else 130


if __name__ == "__main__":
    sys.exit(main())
