"""Before a run: how many tokens and dollars it will take, per grader kind, from count_tokens or a character estimate.

With an API key (or a local server) input tokens come from the count_tokens endpoint, the same count the API
bills; without one, from about four characters a token, and the output says it is an estimate. Judge requests
need the system's outputs: for a Python system those are computed here (they cost nothing) and the cheap checks
run first, so only the judge calls the run will really make are counted. For a Claude system the outputs are not
known yet, so each judge request is counted with a stand-in output of the system's max_tokens, and the cascade is
assumed to let every judge check through: an upper bound, labelled as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalkit._cache import MESSAGES_ENDPOINT, ResponseCache, cache_key
from evalkit._client import cost_usd
from evalkit._systems import ClaudeSystem, PythonSystem, RunnableSystem, run_python_system
from evalkit.graders import Grade, GradingContext, Judge, grade_case
from evalkit.suite import Case, JudgeCheck, JudgeSettings, Suite

CHARS_PER_TOKEN = 4


def char_estimate(request: dict[str, Any]) -> int:
    """Input tokens from the request's text: about four characters a token."""
    text = str(request.get("system", ""))
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            text += content
        elif isinstance(content, list):
            text += "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    config = request.get("output_config") or {}
    text += str(config.get("format", {}).get("schema", "")) if isinstance(config, dict) else ""
    return max(1, len(text) // CHARS_PER_TOKEN)


@dataclass
class Line:
    """One grader kind's share of a run."""

    kind: str
    model: str
    calls: int = 0
    input_tokens: int = 0
    max_output_tokens: int = 0
    cost_usd: float | None = 0.0
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    cached: int = 0
    """Calls the response cache already answers: they cost nothing and are not in `calls`."""


@dataclass
class Estimate:
    suite: str
    cases: int
    repeats: int
    lines: list[Line]
    counted_with: str
    max_cost: float | None = None
    """The run's spending cap, to set the estimate against."""

    def __str__(self) -> str:
        return self.format()

    def format(self) -> str:
        out = [
            f"{self.suite}: dry run, {self.cases} cases x {self.repeats} repeat(s); input tokens {self.counted_with}",
            f"  {'grader':<8} {'model':<22} {'calls':>6} {'input tok':>10} {'max output':>10} {'dollars':>10}",
        ]
        total = 0.0
        unknown = False
        for line in self.lines:
            dollars = "unknown" if line.cost_usd is None else f"${line.cost_usd:.4f}"
            mark = "" if line.exact else "  (estimate)"
            out.append(
                f"  {line.kind:<8} {line.model:<22} {line.calls:>6} {line.input_tokens:>10} "
                f"{line.max_output_tokens:>10} {dollars:>10}{mark}"
            )
            if line.cached:
                out.append(f"           {line.cached} more calls are in the response cache already: free")
            out.extend(f"           {note}" for note in line.notes)
            if line.cost_usd is None:
                unknown = True
            else:
                total += line.cost_usd
        suffix = " + calls of unknown price" if unknown else ""
        out.append(f"  at most ${total:.4f}{suffix} (outputs priced at max_tokens; cache hits cost nothing)")
        if self.max_cost is not None:
            out.append(self._against_cap(total, unknown, self.max_cost))
        return "\n".join(out)

    @staticmethod
    def _against_cap(total: float, unknown: bool, cap: float) -> str:
        if unknown:
            return f"  --max-cost ${cap:.2f}: a call of unknown price cannot be capped; the run would refuse to start"
        if total <= cap:
            return (
                f"  --max-cost ${cap:.2f}: the estimate fits under it ({100 * total / cap:.0f}% of the cap)"
            )
        return (
            f"  --max-cost ${cap:.2f}: the estimate is {total / cap:.1f}x the cap; the run would stop near it, "
            f"after about {100 * cap / total:.0f}% of its calls, and say how to resume with a higher cap"
        )


def _price(model: str, input_tokens: int, output_tokens: int, batch: bool) -> float | None:
    return cost_usd(model, {"input_tokens": input_tokens, "output_tokens": output_tokens}, batch)


def estimate_run(
    suite: Suite,
    system: RunnableSystem,
    *,
    repeats: int = 1,
    judge: JudgeSettings | None = None,
    count_tokens: Callable[[dict[str, Any]], int] | None = None,
    batch: bool = False,
    cache: ResponseCache | None = None,
) -> Estimate:
    """Tokens and dollars for a run, per grader kind; nothing is sent but count_tokens requests.

    With `cache`, a system call whose response is cached already is counted as free, as the run will find it.
    """
    counter = count_tokens or char_estimate
    exact = count_tokens is not None
    lines: list[Line] = []
    cases = suite.cases
    if isinstance(system, PythonSystem):
        lines.append(
            Line("system", "python", exact=True, notes=[f"{system.name}: a Python function, no API calls"])
        )
    if isinstance(system, ClaudeSystem):
        line = Line("system", system.model, exact=exact)
        for case in cases:
            request = system.build_request(case.input)
            tokens: int | None = None
            for repeat in range(repeats):
                if (
                    cache is not None
                    and cache.path_for(cache_key(MESSAGES_ENDPOINT, request, repeat)).is_file()
                ):
                    line.cached += 1
                    continue
                tokens = counter(request) if tokens is None else tokens
                line.calls += 1
                line.input_tokens += tokens
        line.max_output_tokens = line.calls * system.max_tokens
        line.cost_usd = _price(system.model, line.input_tokens, line.max_output_tokens, batch)
        looped = sum(1 for case in cases if system.tools or case.user_turns)
        if looped:
            line.notes.append(
                f"{looped} case(s) run a tool-use or multi-turn loop: counted as their first turn only; each "
                f"further turn (up to max_turns = {system.max_turns} per user turn) resends the conversation so far"
            )
        lines.append(line)
    if judge is not None and any(isinstance(c, JudgeCheck) for case in cases for c in case.checks):
        builder = Judge(client=None, settings=judge)
        line = Line("judge", judge.model, exact=exact and isinstance(system, PythonSystem))
        ctx = GradingContext(
            base_dir=suite.base_dir,
            output_schema=suite.output_schema,
            user=suite.user,
            check_timeout_s=suite.config.check_timeout_s,
        )
        seen: set[tuple[str, int]] = set()

        def count(check: JudgeCheck, value: Any, case: Case) -> Grade:
            request = builder.build_request(check, value, case)
            tokens: int | None = None
            for repeat in range(repeats):  # each repeat's verdict is asked for, and cached, on its own
                key = (repr(request), repeat)
                if key not in seen:  # identical requests are one call: the rest are cache hits
                    tokens = counter(request) if tokens is None else tokens
                    seen.add(key)
                    line.calls += 1
                    line.input_tokens += tokens
            return Grade(passed=True)

        for case in cases:
            if isinstance(system, PythonSystem):
                try:
                    output = run_python_system(system, case, suite)
                except Exception:
                    continue
                # a Python system gives the same output every repeat; the judge is still asked once per repeat
                grade_case(case, output, ctx, judge=count, skip_judge_when=suite.config.skip_judge_when)
            else:
                stand_in = "x" * (CHARS_PER_TOKEN * system.max_tokens)
                for chk in case.checks:
                    if isinstance(chk, JudgeCheck):
                        for _ in range(repeats):
                            line.calls += 1
                            line.input_tokens += counter(builder.build_request(chk, stand_in, case))
        if not isinstance(system, PythonSystem):
            line.notes.append(
                "outputs are unknown before the run: every judge check counted, outputs at max_tokens"
            )
        line.max_output_tokens = line.calls * judge.max_tokens
        line.cost_usd = _price(judge.model, line.input_tokens, line.max_output_tokens, batch)
        lines.append(line)
    counted_with = (
        "from count_tokens" if exact else f"estimated offline at {CHARS_PER_TOKEN} characters a token"
    )
    return Estimate(suite.name, len(cases), repeats, lines, counted_with)
