"""What the system's calls pay for input: prompt caching off, on, and on with --batch, against uncached list price.

Run with ``.venv/bin/python bench/bench_cost.py``. Each shipped suite in goldens/ and a long-prompt suite (made in a
temporary folder: a system prompt of about 2,000 tokens before inputs of about 100) runs with ``--system claude``
(judge off: the system's calls only) against the local server, which keeps the API's prompt-cache accounting
(breakpoints, the model's minimum cacheable length, 5-minute and 1-hour entries) and answers each call after 50 ms. The ideal
is what the API bills a prefix read from the cache, 0.1x; each figure is the run's input cost (its cost less its
output tokens at the output price) as a ratio to all its input tokens at the list input price, uncached and not
batched. Tokens are the server's estimate of four characters a token, so a ratio, not a dollar figure, is the
result to read. Concurrency is 8, as ``evalkit run``'s default: the first wave of calls writes the prefix.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit import api  # noqa: E402
from evalkit._client import current_prices  # noqa: E402
from evalkit._results import RunDir  # noqa: E402
from evalkit.testing import LocalAnthropicServer  # noqa: E402

IDEAL = 0.1
TARGET = 0.3  # support-triage with caching on


def _long_prompt_suite(root: Path, n: int = 100) -> Path:
    root.mkdir(parents=True)
    rule = "When a ticket mentions {w}, weigh it with the other signals before choosing the queue. "
    prompt = "You route support tickets to one queue.\n" + "".join(
        rule.format(w=f"topic {i}") for i in range(100)
    )  # about 2,000 tokens
    rows = [
        {
            "id": f"long-{i:03d}",
            "input": f"Ticket {i}: " + "My order arrived late and the box was damaged; please advise. " * 6,
            "checks": [{"kind": "exact", "expected": "shipping"}],
        }
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text(
        'name = "long-prompt"\n\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 8\n'
    )
    (root / "prompt.md").write_text(prompt, encoding="utf-8")
    return root


def _input_ratio(run: Any) -> tuple[float, int]:
    """(input cost / uncached list price of the same input tokens, calls) of a run's system calls."""
    manifest = json.loads(Path(run.path, "manifest.json").read_text())
    prices = current_prices()
    paid = uncached = 0.0
    calls = 0
    for r in RunDir(Path(run.path)).read_journal(manifest["run_id"]):
        if r.cache_hit or r.input_tokens is None or r.cost_usd is None:
            continue
        price = prices[r.system_model or ""]
        out = (r.output_tokens or 0) * price.output / 1e6 * (0.5 if manifest["batch"] else 1.0)
        tokens = (r.input_tokens or 0) + (r.cache_read_tokens or 0) + (r.cache_write_tokens or 0)
        paid += r.cost_usd - out
        uncached += tokens * price.input / 1e6
        calls += 1
    return (paid / uncached if uncached else float("nan")), calls


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, LocalAnthropicServer(latency=0.05) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        os.environ["ANTHROPIC_API_KEY"] = "bench"
        suites = [p for p in sorted((ROOT / "goldens").iterdir()) if (p / "suite.toml").is_file()]
        suites.append(_long_prompt_suite(Path(tmp) / "long-prompt"))
        print(f"{'suite':<20} {'model':<18} {'calls':>5}  {'caching off':>11} {'on':>6} {'on + batch':>10}")
        for suite in suites:
            ratios = []
            calls = 0
            for mode, batch in (("off", False), ("on", False), ("on", True)):
                server.prompt_cache.clear()  # each setting starts with nothing cached, as a new day would
                run = api.run(
                    suite,
                    "claude",
                    cache="off" if not batch else "readwrite",
                    cache_dir=Path(tmp) / f"cache-{suite.name}-{mode}-{batch}",
                    judge="off",
                    out=Path(tmp) / f"{suite.name}-{mode}-{batch}",
                    progress=False,
                    prompt_cache=mode,  # type: ignore[arg-type]
                    batch=batch,
                )
                ratio, calls = _input_ratio(run)
                ratios.append(ratio)
            model = json.loads(Path(run.path, "manifest.json").read_text())["system"]["model"]
            cells = "  ".join(f"{r:>4.2f}x" for r in ratios)
            print(f"{suite.name:<20} {model:<18} {calls:>5}  {cells}")
        print(
            f"ratios of input cost to uncached list price; ideal {IDEAL}x (every prefix read from the cache); "
            f"target for support-triage with caching on: <= {TARGET}x"
        )


if __name__ == "__main__":
    main()
