"""Review sampling: which judged outputs people should check, stratified by slice and judge verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evalkit.calibration._items import LabelItem, label_items
from evalkit.calibration._labels import Label, LabelKey, read_labels, write_labels
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit._results import RunLike

METHOD = (
    "stratified random sample without replacement; strata are (slice, judge verdict: pass / fail / not judged); "
    "proportional allocation by largest remainder, with at least one output from every non-empty stratum "
    "when n is at least the number of strata; numpy default_rng(seed) draws within each stratum"
)


@dataclass(frozen=True)
class Stratum:
    slice: str
    verdict: str
    size: int
    drawn: int


@dataclass(frozen=True)
class ReviewSample:
    """The outputs drawn, per stratum, with the seed and the method."""

    items: list[LabelItem]
    strata: list[Stratum]
    seed: int
    method: str = METHOD

    @property
    def keys(self) -> list[LabelKey]:
        return [it.key for it in self.items]


def allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Proportional allocation of `n` over strata of `sizes` (largest remainder), each capped at its size, with
    at least one from every non-empty stratum when `n` is at least their number."""
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    quotas = [n * s / total for s in sizes]
    floor_one = n >= sum(1 for s in sizes if s)
    alloc = [
        min(s, max(1 if floor_one and s else 0, math.floor(q))) for s, q in zip(sizes, quotas, strict=True)
    ]
    while sum(alloc) > n:  # the minimum of one pushed the sum over: take back where most above its quota
        least = 1 if floor_one else 0
        i = max((i for i, a in enumerate(alloc) if a > least), key=lambda i: (alloc[i] - quotas[i], sizes[i]))
        alloc[i] -= 1
    while sum(alloc) < n:
        i = max(
            (i for i, a in enumerate(alloc) if a < sizes[i]),
            key=lambda i: (quotas[i] - alloc[i], sizes[i], -i),
        )
        alloc[i] += 1
    return alloc


def _verdict(item: LabelItem) -> str:
    return "not judged" if item.judge_passed is None else ("pass" if item.judge_passed else "fail")


def review_sample(run: RunLike, n: int, *, seed: int = 0, check: str | None = None) -> ReviewSample:
    """Draw `n` judged outputs of `run` for people to label, stratified by slice and judge verdict.

    Parameters
    ----------
    run:
        The run.
    n:
        How many outputs (all of them when the run has fewer).
    seed:
        The random seed; the same seed on the same run draws the same outputs.
    check:
        Only this judged check.

    Returns
    -------
    ReviewSample
        The items in case order, and each stratum's size and draw.
    """
    if n < 1:
        raise EvalkitError(f"n must be at least 1, not {n}")
    items = label_items(run.checks(), run.suite, check=check)
    if not items:
        raise EvalkitError(f"run {run.manifest.run_id} has no judged outputs to review")
    groups: dict[tuple[str, str], list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault((it.slice, _verdict(it)), []).append(i)
    names = sorted(groups)
    counts = allocate([len(groups[k]) for k in names], n)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    strata = []
    for key, k in zip(names, counts, strict=True):
        members = groups[key]
        picked = rng.choice(len(members), size=k, replace=False).tolist() if k else []
        chosen.extend(members[int(p)] for p in picked)
        strata.append(Stratum(slice=key[0], verdict=key[1], size=len(members), drawn=k))
    return ReviewSample(items=[items[i] for i in sorted(chosen)], strata=strata, seed=seed)


def write_review_sample(sample: ReviewSample, path: str | Path, *, rater: str) -> Path:
    """Write the sample as a labels file of unlabelled entries (``passed`` null) for `rater` to fill in.

    Refuses to overwrite an existing file (it may hold labels already); open it with the Labeller instead.
    """
    target = Path(path)
    if target.exists():
        raise EvalkitError(f"{target} exists (it may hold labels); choose another file, or delete it first")
    target.parent.mkdir(parents=True, exist_ok=True)
    labels = [
        Label(case_id=it.case_id, check=it.check, output_hash=it.output_hash, rater=rater)
        for it in sample.items
    ]
    return write_labels(target, labels)


def review_items(run: RunLike, path: str | Path) -> list[LabelItem]:
    """The labeller's items for a review file: the run's judged outputs whose keys the file lists.

    ``Labeller(review_items(run, path), path, rater=...)`` opens the sample, starting at the first entry not
    labelled yet.
    """
    keys = [lab.key for lab in read_labels(path)]
    return label_items(run.checks(), run.suite, only=keys)
