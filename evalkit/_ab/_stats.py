"""B against A in numbers: the win rate with its Wilson interval, and the sign test on wins against losses.

Ties (the judge said tie, or its two orders disagreed) are counted and shown but left out of both: the win rate
is wins_b / (wins_b + wins_a), its interval Wilson's on that proportion, and the sign test the exact two-sided
binomial test of wins_b against wins_a with p = 1/2 (as McNemar's exact test on discordant pairs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

METHOD = (
    "win rate of B = wins_b / (wins_b + wins_a), ties left out; 95% Wilson interval on it; sign test: exact "
    "two-sided binomial test of wins_b against wins_a at p = 1/2"
)


def tally(verdicts: Iterable[str], *, confidence: float = 0.95) -> dict[str, Any]:
    """Counts, win rate with interval and sign-test p of a list of "A", "B" or "tie" verdicts."""
    from evalkit.stats import mcnemar, wilson_interval

    listed = list(verdicts)
    wins_b, wins_a = listed.count("B"), listed.count("A")
    decisive = wins_a + wins_b
    interval = wilson_interval(wins_b, decisive, confidence=confidence)
    return {
        "n": len(listed),
        "wins_b": wins_b,
        "wins_a": wins_a,
        "ties": len(listed) - decisive,
        "win_rate_b": wins_b / decisive if decisive else None,
        "win_rate_b_ci": [interval.low, interval.high] if interval is not None else None,
        "p_value": mcnemar(wins_a, wins_b)[0],
    }
