"""The options of a run, as the command line and the notebook API give them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

JudgeMode = Literal["auto", "on", "off"]
PromptCacheMode = Literal["on", "off", "5m", "1h"]


@dataclass
class RunOptions:
    repeats: int = 1
    concurrency: int = 8
    cache_mode: str = "readwrite"
    cache_dir: Path | str | None = None
    """A folder, or an ``s3://`` URL (a store read through a local layer)."""
    out_root: Path = Path("runs")
    run_dir: Path | None = None
    run_id: str | None = None
    """The new run's id (default: made from the time and the suite's name)."""
    judge: JudgeMode = "auto"
    progress: bool = True
    batch: bool = False
    batch_poll_s: float = 5.0
    processes: int | None = None  # worker processes for model calls; None = decide from concurrency and cores
    max_retries: int = 4
    timeout: float = 120.0
    prompt_cache: PromptCacheMode = "on"
    """Mark each request's stable prefix for the API's prompt cache: on (5-minute entries; 1-hour ones for a
    batch run, whose requests may wait longer than 5 minutes between uses), off, or a lifetime."""
    shard: tuple[int, int] | None = None
    """(I, N): the run is shard I of N of its suite (the suite given is that shard's cases already)."""
    max_cost: float | None = None
    """Dollars the run may spend in all (a resumed run's earlier calls included); None: no cap."""
