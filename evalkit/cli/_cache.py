"""`evalkit cache stats | prune`: inspect or prune the response cache."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evalkit.cli._args import CACHE_DIR_HELP, EXIT_OK, EXIT_USAGE


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "cache",
        help="inspect or prune the response cache",
        description="The response cache keeps every Claude response as a readable JSON file, so reruns are free "
        "and a committed cache replays judged evals in CI with no API key.",
    )
    p.add_argument(
        "action", choices=["stats", "prune"], help="stats: entries, size, models; prune: delete old entries"
    )
    p.add_argument("--cache-dir", default=None, help=CACHE_DIR_HELP)
    p.add_argument(
        "--older-than",
        type=_days,
        default=None,
        metavar="DAYS",
        help="prune entries older than DAYS (> 0; prune needs it, there is no default)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the files prune would remove (the first 20), removing none",
    )
    p.set_defaults(func=run)


def _days(text: str) -> float:
    from evalkit._cache import MAX_PRUNE_DAYS

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not 0 < value <= MAX_PRUNE_DAYS:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(
            f"must be a number of days above 0 and at most {MAX_PRUNE_DAYS} (100 years), not {text}"
        )
    return value


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def _listing(lines: Sequence[str], err: bool = False, limit: int = 20) -> None:
    # bounded: a cache can hold thousands of entries
    for line in lines[:limit]:
        print(f"  {line}", file=sys.stderr if err else sys.stdout)
    if len(lines) > limit:
        print(f"  ... and {len(lines) - limit} more", file=sys.stderr if err else sys.stdout)


def run(args: argparse.Namespace) -> int:
    from evalkit._store import is_url

    if args.cache_dir and is_url(args.cache_dir):
        return _on_store(args)
    directory = Path(args.cache_dir) if args.cache_dir else None
    if args.action == "stats":
        return _stats(directory)
    if args.older_than is None:
        print("evalkit cache prune: give --older-than DAYS", file=sys.stderr)
        return EXIT_USAGE
    return _prune(directory, older_than=args.older_than, dry_run=args.dry_run)


def _on_store(args: argparse.Namespace) -> int:
    """A cache on a store: stats counts its objects, then summarises this machine's local layer; prune is refused
    (a bucket's lifecycle rules expire objects without listing them all)."""
    from evalkit._store import Bucket, parse_url

    where = parse_url(args.cache_dir)
    if args.action == "prune":
        print(
            f"evalkit cache prune: {where.url} is a store; expire old entries there with the bucket's lifecycle "
            f"rules (e.g. objects under {where.prefix or '/'} older than 90 days), or prune this machine's local "
            f"layer: evalkit cache prune --cache-dir {where.local} --older-than DAYS",
            file=sys.stderr,
        )
        return EXIT_USAGE
    count, size = Bucket(where).usage(where.prefix)
    print(f"cache {where.url} (on the store): {_plural(count, 'object')}, {size / 1e6:.2f} MB")
    print("this machine's local layer:")
    return _stats(where.local)


def _stats(directory: Path | None) -> int:
    from evalkit._cache import scan

    summary = scan(directory)
    missing = "" if summary.directory.exists() else " (no such directory)"
    print(f"cache {summary.directory}{missing}: {summary.entries} entries, {summary.bytes / 1e6:.2f} MB")
    for model, n in sorted(summary.by_model.items()):
        print(f"  {model}: {n}")
    if summary.oldest and summary.newest:
        print(f"  oldest {summary.oldest:%Y-%m-%d %H:%M}, newest {summary.newest:%Y-%m-%d %H:%M}")
    if summary.temp_files:
        print(
            f"  {_plural(summary.temp_files, 'temp file')} (writes in progress, or left by interrupted ones)"
        )
    if summary.corrupt:
        print(
            f"  {_plural(len(summary.corrupt), 'corrupt entry', 'corrupt entries')}: a readwrite or refresh run "
            "warns and fetches the response again, replacing the file; a replay run stops with an error naming "
            "the file. Restore them from git or delete them; `evalkit cache prune --older-than DAYS` also "
            "removes them once their file is older than DAYS."
        )
        _listing([f"corrupt: {path}: {why}" for path, why in summary.corrupt.items()])
    if summary.unreadable:
        print(
            f"  {_plural(len(summary.unreadable), 'folder or file', 'folders or files')} could not be read "
            "(what they hold is not counted above); check their permissions:"
        )
        _listing([f"unreadable: {path}: {why}" for path, why in summary.unreadable.items()])
    return EXIT_OK


def _prune(directory: Path | None, *, older_than: float, dry_run: bool) -> int:
    from evalkit._cache import prune

    report = prune(directory, older_than_days=older_than, dry_run=dry_run)
    verb = "would remove" if report.dry_run else "removed"
    print(
        f"{verb} {_plural(len(report.removed), 'entry', 'entries')} ({report.bytes_freed / 1e6:.2f} MB) and "
        f"{_plural(len(report.temp_files), 'stale temp file')}; kept {report.kept}"
    )
    if report.dry_run:
        _listing([str(path) for path in (*report.removed, *report.temp_files)])
    if report.failed:
        print(f"could not remove {_plural(len(report.failed), 'file')}:", file=sys.stderr)
        _listing([f"{path}: {why}" for path, why in report.failed.items()], err=True)
    if report.unreadable:
        print(
            f"could not read {_plural(len(report.unreadable), 'folder or file', 'folders or files')}, so what "
            "they hold was not considered:",
            file=sys.stderr,
        )
        _listing([f"{path}: {why}" for path, why in report.unreadable.items()], err=True)
    return EXIT_OK if report.complete else EXIT_USAGE
