"""How a run's calls to the system's model used the API's prompt cache: input tokens written, read and uncached.

The split is kept per case in the run's journal (results.jsonl), not in results.parquet, so it is read from there,
line by line as plain JSON: a run of a Python system, or one whose calls wrote and read nothing, has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evalkit._results._manifest import Manifest
from evalkit._results._rundir import RunDir

__all__ = ["PromptCacheUse", "prompt_cache_use"]


@dataclass(frozen=True)
class PromptCacheUse:
    """Input tokens of the calls a run paid for, by how the prompt cache billed them, and what that saved."""

    calls: int
    uncached: int
    written: int
    read: int
    cost_usd: float
    """What the calls' input and output cost."""
    uncached_cost_usd: float
    """What the same calls would have cost with no prompt caching (every input token at the input price)."""

    @property
    def saved_usd(self) -> float:
        return self.uncached_cost_usd - self.cost_usd

    def line(self) -> str:
        """One line for the summary."""
        total = self.uncached + self.written + self.read
        share = self.saved_usd / self.uncached_cost_usd if self.uncached_cost_usd > 0 else 0.0
        return (
            f"  prompt cache ({self.calls} system calls): input {total:,} tokens = {self.read:,} read + "
            f"{self.written:,} written + {self.uncached:,} uncached; saved ${self.saved_usd:.4f} "
            f"({100 * share:.0f}% of ${self.uncached_cost_usd:.4f} uncached)"
        )


def prompt_cache_use(run_dir: str | Path, manifest: Manifest) -> PromptCacheUse | None:
    """The prompt-cache split of the system's paid calls in `run_dir`'s journal; None when nothing was written or
    read (or the run calls no model, or the journal cannot be read)."""
    from evalkit._client import cost_usd  # prices only; the SDK is not loaded

    if manifest.system.get("kind") != "claude":
        return None
    path = RunDir(Path(run_dir)).journal_path
    calls = uncached = written = read = 0
    cost = uncached_cost = 0.0
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line) if line.strip() else None
                if not isinstance(row, dict) or row.get("cache_hit") or row.get("input_tokens") is None:
                    continue
                usage = {
                    "input_tokens": row.get("input_tokens") or 0,
                    "output_tokens": row.get("output_tokens") or 0,
                    "cache_creation_input_tokens": row.get("cache_write_tokens") or 0,
                    "cache_read_input_tokens": row.get("cache_read_tokens") or 0,
                }
                model = row.get("system_model_version") or row.get("system_model")
                actual = cost_usd(model, usage, manifest.batch)
                plain = cost_usd(
                    model,
                    {
                        "input_tokens": sum(usage[k] for k in usage if k != "output_tokens"),
                        "output_tokens": usage["output_tokens"],
                    },
                    manifest.batch,
                )
                calls += 1
                uncached += usage["input_tokens"]
                written += usage["cache_creation_input_tokens"]
                read += usage["cache_read_input_tokens"]
                cost += actual or 0.0
                uncached_cost += plain or 0.0
    except (OSError, ValueError):
        return None
    if not (written or read):
        return None
    return PromptCacheUse(calls, uncached, written, read, cost, uncached_cost)
