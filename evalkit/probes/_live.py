"""What the live probes share: a suite's outputs from the runner, its judge, and judge calls in parallel.

The outputs come from an ordinary run (``evalkit.api.run``: its run directory and its response cache), made with
the judge on, and the probes' judge is built as that run's (``evalkit.api.suite_judge``): the same construction,
the same cache keys. A probe's original verdicts are therefore the run's verdicts, read back from the cache, and only
the padded or attacked twins cost a judge call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.graders import Judge
    from evalkit.suite import Case, JudgeCheck, Suite

T = TypeVar("T")
R = TypeVar("R")

CacheMode = str  # readwrite, readonly, replay, refresh or off: the runner's modes


@dataclass(frozen=True)
class LiveOptions:
    """How a live probe runs the suite and calls the judge (as `evalkit run`'s options of the same names)."""

    runs_dir: Path = Path("runs")
    cache_mode: CacheMode = "readwrite"
    cache_dir: Path | None = None
    concurrency: int = 8
    max_retries: int = 4
    progress: bool = False

    def __post_init__(self) -> None:
        # a notebook passes plain strings; they are taken as paths
        object.__setattr__(self, "runs_dir", Path(self.runs_dir))
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))


@dataclass(frozen=True)
class JudgedOutput:
    """One judged check's text on one case's output: what a probe judges as it is and altered."""

    item: str
    case: Case
    check: JudgeCheck
    text: str


@dataclass
class SuiteOutputs:
    """The judged outputs of one run, with the run's judge and what could not be probed."""

    suite: Suite
    system: str
    run_dir: Path
    judge: Judge
    outputs: list[JudgedOutput] = field(default_factory=list)
    errored_cases: int = 0
    not_text: int = 0
    served: set[str] = field(default_factory=set)
    """The model ids the judge's replies named (a simulated judge names itself)."""


def judged_item(case: Case, check: JudgeCheck, index: int) -> str:
    """The item id of a judged check: the case id and the check's label (its index when labels repeat)."""
    return f"{case.id}/{check.name or check.field or f'judge{index}'}"


def run_for_outputs(
    suite: Suite | str | Path,
    system: Any = None,
    *,
    options: LiveOptions | None = None,
    judge: bool = True,
) -> SuiteOutputs:
    """Run `suite` against `system` (repeat 0) through the front door and collect every judged check's text.

    Parameters
    ----------
    suite:
        A suite, or its folder or cases file.
    system:
        As `ek.run` takes it (None: the suite's default system, e.g. its baseline).
    options:
        Run directory root, cache and concurrency.
    judge:
        Whether the run grades its judge checks too (the probes' original verdicts then come from the cache).

    Returns
    -------
    `SuiteOutputs`. A case that errored, or whose judged field is missing, is counted, not probed; a judged
    value that is not text (an object) is counted in ``not_text``: padding and attacks alter text.
    """
    import json

    import polars as pl

    from evalkit import api
    from evalkit.graders import get_field, is_missing
    from evalkit.suite import JudgeCheck, load_suite

    options = options or LiveOptions()
    loaded = suite if not isinstance(suite, str | Path) else load_suite(Path(suite))
    if not any(isinstance(c, JudgeCheck) for case in loaded.cases for c in case.checks):
        raise EvalkitError(f"suite {loaded.name} has no judge checks: nothing for the judge to be probed on")
    settings: dict[str, Any] = {
        "concurrency": options.concurrency,
        "cache": options.cache_mode,
        "cache_dir": options.cache_dir,
        "max_retries": options.max_retries,
    }
    done = api.run(
        loaded,
        system,
        runs_dir=options.runs_dir,
        judge="on" if judge else "off",
        progress=options.progress,
        processes=1,
        **settings,
    )
    made = api.suite_judge(loaded, system, **settings)
    found = SuiteOutputs(
        suite=loaded, system=str(done.manifest.system.get("name")), run_dir=done.path, judge=made
    )
    by_id = {c.id: c for c in loaded.cases}
    first = (
        done.checks()
        .filter(pl.col("repeat") == 0)
        .unique(["case_id"], keep="first", maintain_order=True)
        .sort("case_id")
        .select("case_id", "case_status", "output")
    )
    for case_id, status, output in first.iter_rows():
        case = by_id[case_id]
        if status == "error":
            found.errored_cases += 1
            continue
        value_of = json.loads(output) if output is not None else None
        for index, check in enumerate(case.checks):
            if not isinstance(check, JudgeCheck):
                continue
            value = get_field(value_of, check.field)
            if is_missing(value) or not isinstance(value, str):
                found.not_text += 1
                continue
            found.outputs.append(JudgedOutput(judged_item(case, check, index), case, check, value))
    return found


def parallel(fn: Callable[[T], R], items: Sequence[T], *, concurrency: int) -> list[R]:
    """`fn` over `items` in up to `concurrency` threads, results in the order of `items`.

    The client bounds the calls in flight itself; the threads only keep that many requests waiting on it.
    """
    if concurrency <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(fn, items))
