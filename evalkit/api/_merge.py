"""`merge_runs`: the shard runs of one suite version, system and setup joined into one run, as if run at once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.api._run import Run

# what every part must share with the first: the run is one run only if these agree
_SAME = ("suite", "suite_version", "repeats", "system", "judge")


def _differ(name: str, first: Any, other: Any) -> str:
    return f"its {name} is {other!r}, the first part's {first!r}"


def merge_runs(parts: Sequence[str | Path], out: str | Path) -> Run:
    """Join the runs of ``--shard 1/N`` ... ``N/N`` into one complete run at `out` (an empty or new folder, or a
    store URL ``s3://bucket/runs/<name>``, where it is published). Parts may be store URLs too.

    Every part must be a complete shard run of the same suite version, system, judge and repeats, and together the
    parts must hold each case of the suite exactly once. What is refused is said with the part and what to do;
    nothing is written then. The merged run gates, reports and compares like any other; its manifest names the
    runs it was merged from.
    """
    from evalkit._results import RunDir
    from evalkit._runner import new_run_id
    from evalkit._store import check_can_publish, is_url, parse_url, publish_run, pull_run
    from evalkit.api._run import Run
    from evalkit.suite import load_suite, shard_of

    if len(parts) < 2:
        raise EvalkitError(
            "evalkit merge joins two or more shard runs: give every part (runs of --shard I/N)"
        )
    where = parse_url(out) if is_url(out) else None
    if where is not None:
        check_can_publish(where)
    folders = {str(part): pull_run(parse_url(part)) if is_url(part) else Path(part) for part in parts}
    manifests = []
    for part in parts:
        manifest = RunDir(folders[str(part)]).read_manifest()
        if manifest.shard is None:
            raise EvalkitError(f"{part}: not a shard run (run with --shard I/N); a whole run needs no merge")
        if manifest.status != "complete":
            raise EvalkitError(
                f"{part}: the run is {manifest.status}; finish it first: evalkit run --resume {part}"
            )
        manifests.append(manifest)
    first = manifests[0]
    of = first.shard[1] if first.shard else 0
    seen: dict[int, str] = {}
    for part, manifest in zip(parts, manifests, strict=True):
        index, n = manifest.shard or (0, 0)
        if n != of:
            raise EvalkitError(
                f"{part}: shard {index}/{n}, but the first part is one of {of}: merge one split"
            )
        for name in _SAME:
            if getattr(manifest, name) != getattr(first, name):
                problem = _differ(name, getattr(first, name), getattr(manifest, name))
                raise EvalkitError(f"{part}: {problem}; the parts of one run share their setup")
        if index in seen:
            raise EvalkitError(f"{part}: shard {index}/{of} again (also {seen[index]}); give each shard once")
        seen[index] = str(part)
    missing = [i for i in range(1, of + 1) if i not in seen]
    if missing:
        listed = ", ".join(f"{i}/{of}" for i in missing)
        raise EvalkitError(f"shard(s) {listed} missing; run them with --shard and merge every part")
    suite = load_suite(first.suite_location())
    if suite.version != first.suite_version:
        raise EvalkitError(
            f"{first.suite_path}: the suite is at version {suite.version} now, the parts ran {first.suite_version}; "
            "merge runs of the suite as it is, or restore it"
        )
    wanted = {(c.id, r) for c in suite.cases for r in range(first.repeats)}
    results = []
    owner: dict[tuple[str, int], str] = {}
    for part, manifest in zip(parts, manifests, strict=True):
        index = (manifest.shard or (0, 0))[0]
        for result in RunDir(folders[str(part)]).read_journal(manifest.run_id):
            if shard_of(result.case_id, of) != index or result.key not in wanted:
                raise EvalkitError(
                    f"{part}: case {result.case_id} does not belong in shard {index}/{of} of this suite version"
                )
            if result.key in owner:
                raise EvalkitError(
                    f"{part}: case {result.case_id} repeat {result.repeat} is also in {owner[result.key]}"
                )
            owner[result.key] = str(part)
            results.append(result)
    lacking = sorted(wanted - set(owner))
    if lacking:
        case_id, repeat = lacking[0]
        raise EvalkitError(
            f"{len(lacking)} (case, repeat) without a result, e.g. {case_id} repeat {repeat} of shard "
            f"{shard_of(case_id, of)}/{of}: resume that part, then merge"
        )
    target = Path(out) if where is None else where.local
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EvalkitError(f"{target} already holds files; merge into a new or empty folder")
    run_id = new_run_id(first.suite)
    merged = first.model_copy(
        update={
            "run_id": run_id,
            "cases": len(suite.cases),
            "shard": None,
            "merged_from": [m.run_id for m in manifests],
            "batch_ids": {},
            "started_at": min(m.started_at for m in manifests),
            "ended_at": max(m.ended_at or m.started_at for m in manifests),
            "status": "complete",
            "stopped_reason": None,
        }
    )
    run = RunDir(target)
    target.mkdir(parents=True, exist_ok=True)
    run.finalize([r.model_copy(update={"run_id": run_id}) for r in results])
    run.write_manifest(merged)  # last: a reader never sees a merged run without its results
    done = Run(target, suite=suite)
    if where is not None:
        publish_run(target, where)
        done.url = where.url
    return done
