"""Synthetic 400-case runs for the gate tests: one exact check per case, passing exactly the planted cases."""

from __future__ import annotations

from pathlib import Path

from evalkit._results import CaseResult, CheckResult, Manifest, RunDir

N = 400
SLICES = ("alpha", "beta", "gamma", "delta")
BASE_PASSES = 320  # 80%: cases c000..c319 pass in the baseline


def cid(i: int) -> str:
    return f"c{i:03d}"


def make_run(
    root: Path,
    run_id: str,
    passing: set[int],
    *,
    suite: str = "synthetic",
    suite_version: str = "v1",
    repeats: int = 1,
    status: str = "complete",
    errors: frozenset[int] = frozenset(),
) -> Path:
    """A finished run directory: one exact check per case, passing exactly the cases in ``passing``."""
    suite_dir = root / suite
    suite_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for i in range(N):
        for r in range(repeats):
            st = "error" if i in errors else ("pass" if i in passing else "fail")
            check = CheckResult(
                index=0,
                kind="exact",
                name="exact",
                tier="exact",
                status=st,
                passed={"pass": True, "fail": False}.get(st),
                detail="matches" if st == "pass" else f"expected 'yes', got 'no' (case {i})",
                error="boom" if st == "error" else None,
            )
            results.append(
                CaseResult(
                    run_id=run_id,
                    suite=suite,
                    suite_version=suite_version,
                    case_id=cid(i),
                    slice=SLICES[i % 4],
                    repeat=r,
                    status=st,
                    output="yes" if st == "pass" else "no",
                    system="synthetic",
                    cost_usd=0.0,
                    latency_s=0.01,
                    checks=[check],
                )
            )
    run = RunDir(root / "runs" / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite=suite,
            suite_version=suite_version,
            suite_path=str(suite_dir),
            cases=N,
            repeats=repeats,
            system={"kind": "python", "name": "synthetic"},
            status=status,  # type: ignore[arg-type]
        )
    )
    run.finalize(results)
    return run.path


BASE = set(range(BASE_PASSES))
# 12 baseline passes now fail: -3 points, McNemar exact p = 2 * 0.5**12.
REGRESS_3 = BASE - set(range(12))
# 4 baseline passes now fail: -1 point.
REGRESS_1 = BASE - set(range(4))
# 40 pass->fail and 28 fail->pass: the same net -12 (-3 points), but the flips go both ways.
NOISY_3 = (BASE - set(range(40))) | set(range(BASE_PASSES, BASE_PASSES + 28))
