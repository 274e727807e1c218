"""The pairwise verdicts file and the position probe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from evalkit.datasets import load_llmbar
from evalkit.errors import RecordsError
from evalkit.probes import format_position, position_from_file, position_probe, read_verdicts, write_verdicts


def _verdicts(pairs: list[tuple[str | None, str | None]]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i, (when_a_first, when_b_first) in enumerate(pairs):
        rows.append({"item": f"i{i}", "judge": "j", "shown_first": "A", "winner": when_a_first})
        rows.append({"item": f"i{i}", "judge": "j", "shown_first": "B", "winner": when_b_first})
    return rows


def test_probe_by_hand(tmp_path: Path) -> None:
    rows = _verdicts(
        [("A", "A"), ("A", "B"), ("A", "B"), ("B", "A"), ("tie", "tie"), ("B", None), ("B", "B")]
    )
    path = write_verdicts(tmp_path / "v.jsonl", rows)
    probe = position_from_file(path)
    js = probe.to_json()
    assert list(js)[:8] == [
        "judge",
        "pairs",
        "consistency",
        "consistency_ci",
        "first_position_rate",
        "second_position_rate",
        "tie_rate",
        "missing",
    ]
    assert probe.pairs == 6 and probe.missing == 1
    assert probe.consistency == pytest.approx(3 / 6)
    # 13 usable verdicts: shown first won in i1 (2), i2 (2), i0 (1), i3 (0), i5 (0), i6 (1) → 6; ties 2
    assert probe.first_position_rate == pytest.approx(6 / 13)
    assert probe.tie_rate == pytest.approx(2 / 13)
    assert probe.second_position_rate == pytest.approx(5 / 13)
    # decisive in both orders: i0 i1 i2 i3 i6 → first-shown won twice in 2, second-shown twice in 1
    assert probe.decisive_pairs == 5 and probe.position_bias == pytest.approx((2 - 1) / 5)
    lo, hi = probe.consistency_ci  # type: ignore[misc]
    assert lo < 0.5 < hi
    assert "judge j" in format_position(probe)


def test_verdict_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(
        '{"item": "a", "judge": "j", "shown_first": "A", "winner": "A"}\n'
        '{"item": "a", "judge": "j", "shown_first": "A", "winner": "B"}\n'
        '{"item": "b", "judge": "j", "shown_first": "1", "winner": "A"}\n'
        '{"item": "c", "judge": "j", "shown_first": "B", "winner": "first"}\n'
        '{"item": "d", "judge": "j", "shown_first": "B"}\n'
        "not json\n"
    )
    with pytest.raises(RecordsError) as info:
        read_verdicts(path)
    texts = [str(p) for p in info.value.problems]
    assert texts[0].startswith(f"{path}:2: item:") and f"{path}:1" in texts[0]
    assert texts[1].startswith(f"{path}:3: shown_first:")
    assert texts[2].startswith(f"{path}:4: winner:")
    assert texts[3].startswith(f"{path}:5: winner: missing")
    assert texts[4].startswith(f"{path}:6: json:")


def test_choose_a_judge() -> None:
    frame = pl.DataFrame(_verdicts([("A", "A")])).vstack(
        pl.DataFrame(_verdicts([("A", "B")])).with_columns(pl.lit("k").alias("judge"))
    )
    with pytest.raises(Exception, match="judge="):
        position_probe(frame)
    assert position_probe(frame, judge="k").consistency == 0.0


def test_consistency_is_llmbar_equal_for_gpt4(shared_data: Callable[[str], Path]) -> None:
    bar = load_llmbar(shared_data("llmbar"))
    checked = 0
    for name, part in bar.sets.items():
        if "GPT-4" not in part.verdicts:
            continue
        verdicts = part.verdicts["GPT-4"]
        probe = position_probe(verdicts)
        k, n = (int(x) for x in part.statistics["GPT-4"]["equal"].split(" = ")[0].split(" / "))
        if probe.missing == 0:
            assert probe.pairs == n and probe.consistency == k / n, name
        else:
            # LLMBar's `equal` counts two null winners as agreeing and divides by every item;
            # the probe leaves null verdicts out. The two reconcile exactly:
            wide = verdicts.pivot(on="shown_first", index="item", values="winner")
            both_null = wide.filter(pl.col("A").is_null() & pl.col("B").is_null()).height
            assert round(probe.consistency * probe.pairs) + both_null == k, name  # type: ignore[operator]
        checked += 1
    assert checked == 8


def test_no_planted_position_bias_is_not_significant() -> None:
    rng = np.random.default_rng(7)
    pairs: list[tuple[str | None, str | None]] = []
    for _ in range(300):
        better = "A" if rng.random() < 0.5 else "B"
        # a noisy judge that ignores position: each order picks the better output with the same chance
        pairs.append(tuple(better if rng.random() < 0.8 else ("B" if better == "A" else "A") for _ in "AB"))  # type: ignore[arg-type]
    probe = position_probe(pl.DataFrame(_verdicts(pairs)))
    lo, hi = probe.position_bias_ci  # type: ignore[misc]
    assert lo < 0 < hi
    assert probe.position_bias_p > 0.05  # type: ignore[operator]
