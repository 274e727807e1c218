"""`ab`: is run B better than run A? Every case both answered, judged pairwise in both orders.

A case's verdict is B or A when the judge picked it in both orders, else a tie (it said tie, or the orders
disagreed: a position-biased judge cancels out). Code checks go first: a case one side fails a code check on and
the other passes is decided without a judge call, and counted apart. Every judge request goes through the
response cache, as a run's do.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._ab._pairs import CasePair, case_pairs
from evalkit._ab._stats import METHOD, tally
from evalkit.errors import EvalkitError, JudgeError

if TYPE_CHECKING:
    import polars as pl

    from evalkit._results import RunFolder
    from evalkit.suite import JudgeSettings

_CASE_SCHEMA = {
    "case_id": "String",
    "slice": "String",
    "verdict": "String",
    "decided_by": "String",
    "a_first": "String",
    "b_first": "String",
    "reasoning_a_first": "String",
    "reasoning_b_first": "String",
    "output_a": "String",
    "output_b": "String",
}


@dataclass
class ABResult:
    """Run B against run A: per case verdicts (`cases`), and the summary `to_json` and `text` give."""

    run_a: str
    run_b: str
    judge_model: str
    served: list[str]
    cases: pl.DataFrame
    """One row per case both runs answered: case_id, slice, verdict (B, A, tie, or null when the judge gave
    none), decided_by (judge, code, missing), the winner in each order (in A/B labels), the judge's reasons and
    both outputs (JSON text)."""
    confidence: float = 0.95
    _summary: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """n, wins_b, wins_a, ties, win_rate_b, win_rate_b_ci, consistency, p_value, by_slice, and how they
        were made (method, decided_by_code, missing, the runs and the judge)."""
        if not self._summary:
            self._summary = self._summarise()
        return self._summary

    def _summarise(self) -> dict[str, Any]:
        rows = [r for r in self.cases.iter_rows(named=True) if r["verdict"] is not None]
        overall = tally((r["verdict"] for r in rows), confidence=self.confidence)
        judged = [r for r in rows if r["decided_by"] == "judge"]
        agreeing = sum(r["a_first"] == r["b_first"] for r in judged)
        by_code = [r for r in rows if r["decided_by"] == "code"]
        slices = sorted({r["slice"] for r in rows})
        return {
            **overall,
            "consistency": agreeing / len(judged) if judged else None,
            "by_slice": {
                s: tally((r["verdict"] for r in rows if r["slice"] == s), confidence=self.confidence)
                for s in slices
            },
            "decided_by_code": {
                "wins_b": sum(r["verdict"] == "B" for r in by_code),
                "wins_a": sum(r["verdict"] == "A" for r in by_code),
                "cases": sorted(r["case_id"] for r in by_code),
            },
            "judged": len(judged),
            "missing": self.cases.height - len(rows),
            "method": METHOD,
            "confidence": self.confidence,
            "run_a": self.run_a,
            "run_b": self.run_b,
            "judge_model": self.judge_model,
            "judge_served": self.served,
        }

    def text(self) -> str:
        """What ``evalkit ab`` prints."""
        s = self.to_json()
        lines = [f"A/B: {s['run_b']} (B) against {s['run_a']} (A), {s['n']} cases both answered"]
        lines.append(f"  judge: {s['judge_model']} (pairwise, both orders)" + _served(s["judge_served"]))
        lines.append(_line("all", s))
        consistency = "n/a" if s["consistency"] is None else f"{s['consistency']:.1%}"
        lines.append(
            f"  position consistency: {consistency} of {s['judged']} judged cases gave one winner in both orders"
        )
        code = s["decided_by_code"]
        if code["cases"]:
            lines.append(
                f"  decided by code checks (no judge call): {len(code['cases'])} cases, B {code['wins_b']}, "
                f"A {code['wins_a']}"
            )
        if s["missing"]:
            lines.append(f"  no verdict (the judge gave no valid answer): {s['missing']} cases")
        if len(s["by_slice"]) > 1:
            lines.append("  by slice:")
            width = max(len(k) for k in s["by_slice"])
            lines.extend(_line(f"  {k:<{width}}", v) for k, v in s["by_slice"].items())
        lines.append(f"  method: {s['method']}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def win_rates(self) -> pl.DataFrame:
        """B's win rate per slice (and ``all``) with its interval: slice, n, rate, ci_low, ci_high, ties (the
        columns ``evalkit.charts.slice_pass_rate_chart`` draws)."""
        from evalkit._report import ab_win_rate_frame

        return ab_win_rate_frame(self.to_json())

    def html(self) -> str:
        """The comparison as one self-contained HTML page: the win rate per slice with intervals, and each
        slice's cases (a click opens them) with both outputs and the judge's reasons side by side."""
        from evalkit._report import render_ab_html

        return render_ab_html(self.to_json(), self.cases)

    def _repr_html_(self) -> str:
        # the page in a frame of its own: its styles stay off the notebook's, and a click opens a slice
        from html import escape

        frame = 'style="width:100%;height:640px;border:1px solid #ddd"'
        return f'<div><iframe title="A/B comparison" srcdoc="{escape(self.html())}" {frame}></iframe></div>'

    def save(self, path: str | Path) -> Path:
        """Write `html()` to `path` (atomically); returns the path."""
        from evalkit._fs import atomic_write_text

        target = Path(path)
        atomic_write_text(target, self.html())
        return target


def _served(served: list[str]) -> str:
    if not served:
        return ""
    simulated = " (simulated)" if any("simulated" in m for m in served) else ""
    return f"; served by {', '.join(served)}{simulated}"


def _line(label: str, t: dict[str, Any]) -> str:
    rate = "n/a" if t["win_rate_b"] is None else f"{t['win_rate_b']:.1%}"
    ci = (
        ""
        if t["win_rate_b_ci"] is None
        else f" (95% CI {t['win_rate_b_ci'][0]:.1%} to {t['win_rate_b_ci'][1]:.1%})"
    )
    return (
        f"  {label}  n {t['n']:>4}  B wins {t['wins_b']}, A wins {t['wins_a']}, ties {t['ties']}; "
        f"win rate of B {rate}{ci}; sign test p = {t['p_value']:.3g}"
    )


def _judge_all(
    pairs: list[CasePair], settings: JudgeSettings, *, cache: str, cache_dir: Path | None, concurrency: int,
    max_retries: int, served: set[str],
) -> list[dict[str, Any]]:  # fmt: skip
    from evalkit._cache import ResponseCache
    from evalkit._client import Client
    from evalkit.graders import PairwiseJudge

    to_judge = [p for p in pairs if p.decided_by_code is None]
    judge = None
    if to_judge:  # a client only when a judge call may be made
        client = Client(max_concurrency=concurrency, max_retries=max_retries, timeout=120.0)
        store = ResponseCache(cache_dir, mode=cache)  # type: ignore[arg-type]
        judge = PairwiseJudge(client=client, settings=settings, cache=store)

    def one(pair: CasePair) -> dict[str, Any]:
        row = {
            "case_id": pair.case_id,
            "slice": pair.slice,
            "verdict": pair.decided_by_code,
            "decided_by": "code",
            "a_first": None,
            "b_first": None,
            "reasoning_a_first": None,
            "reasoning_b_first": None,
            "output_a": _text(pair.output_a),
            "output_b": _text(pair.output_b),
        }
        if pair.decided_by_code is not None or judge is None:
            return row
        try:
            result = judge.compare(
                pair.input, pair.output_a, pair.output_b, list(pair.criteria), label=f"ab {pair.case_id}"
            )
        except JudgeError:
            return {**row, "verdict": None, "decided_by": "missing"}
        served.update(str(r["model"]) for r in result.raw if r.get("model"))
        first, second = result.raw
        return {
            **row,
            "verdict": result.winner,
            "decided_by": "judge",
            "a_first": first["winner"],
            "b_first": second["as_caller"],
            "reasoning_a_first": first["reasoning"],
            "reasoning_b_first": second["reasoning"],
        }

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, pairs))


def _text(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def ab(
    run_a: RunFolder,
    run_b: RunFolder,
    *,
    check: str | None = None,
    criteria: tuple[str, ...] | list[str] = (),
    judge_model: str | None = None,
    cache: str = "readwrite",
    cache_dir: str | Path | None = None,
    concurrency: int = 8,
    max_retries: int = 4,
    confidence: float = 0.95,
) -> ABResult:
    """Run B against run A on every case both answered (see the module docs)."""
    import polars as pl

    suite_a, suite_b = run_a.manifest.suite, run_b.manifest.suite
    if suite_a != suite_b:
        raise EvalkitError(
            f"runs of different suites ({suite_a}, {suite_b}): A/B compares two runs of one suite"
        )
    try:
        suite = run_b.suite
    except EvalkitError:
        suite = None  # moved since: the pairs have no input and no rubric, unless --criteria gives one
    pairs = case_pairs(run_a.checks(), run_b.checks(), suite=suite, check=check, criteria=tuple(criteria))
    if not pairs:
        raise EvalkitError(f"runs {run_a.path} and {run_b.path} have no case with an output on both sides")
    from evalkit.suite import JudgeSettings

    settings = suite.config.judge if suite is not None else JudgeSettings()
    if judge_model:
        settings = settings.model_copy(update={"model": judge_model})
    served: set[str] = set()
    rows = _judge_all(
        pairs,
        settings,
        cache=cache,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        concurrency=concurrency,
        max_retries=max_retries,
        served=served,
    )
    frame = pl.DataFrame(rows, schema={k: getattr(pl, v) for k, v in _CASE_SCHEMA.items()}, orient="row")
    return ABResult(
        str(run_a.path), str(run_b.path), settings.model, sorted(served), frame, confidence=confidence
    )
