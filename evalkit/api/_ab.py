"""`rank_runs`: three or more runs of one suite, every pair compared by `Run.ab`, ranked by Bradley-Terry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit._ab import ABResult, Ranking
    from evalkit.api._run import Run


def rank_runs(
    runs: Sequence[Run | str | Path], *, resamples: int = 1000, **options: Any
) -> tuple[Ranking, dict[tuple[int, int], ABResult]]:
    """Every pair (i, j), i < j, of `runs` compared as ``runs[i].ab(runs[j], **options)``, and the runs ranked.

    Returns
    -------
    (Ranking, results)
        The ranking (``.rows``: rank, run, strength, ci, wins, losses; ``.text()``), and each pair's `ABResult`
        keyed by the two runs' positions.
    """
    from evalkit._ab import rank
    from evalkit.api._run import Run

    loaded = [r if isinstance(r, Run) else Run(r) for r in runs]
    if len(loaded) < 2:
        raise EvalkitError("give at least two runs to compare")
    results = {
        (i, j): loaded[i].ab(loaded[j], **options)
        for i in range(len(loaded))
        for j in range(i + 1, len(loaded))
    }
    names = [f"{r.path.name} ({r.manifest.system.get('name')})" for r in loaded]
    verdicts = {
        key: dict(zip(res.cases.get_column("case_id"), res.cases.get_column("verdict"), strict=True))
        for key, res in results.items()
    }
    return rank(names, verdicts, resamples=resamples), results
