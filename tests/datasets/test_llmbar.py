"""LLMBar read in place: every published correct_* and equal figure reproduced from the stored verdicts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from evalkit.calibration import agreement, read_ratings
from evalkit.datasets import load_llmbar
from evalkit.errors import EvalkitError
from evalkit.probes import read_verdicts


@pytest.fixture
def folder(shared_data: Callable[[str], Path]) -> Path:
    return shared_data("llmbar")


def test_every_statistics_json_is_reproduced(folder: Path) -> None:
    bar = load_llmbar(folder)
    files = sorted(folder.rglob("Vanilla_NoRules/statistics.json"))
    assert len(files) == 24
    for path in files:
        published = json.loads(path.read_text())
        set_name = path.parents[3].relative_to(folder / "Dataset").as_posix()
        judge = path.parents[1].name
        figures = bar.sets[set_name].figures(judge)
        ours = figures.upstream_strings()
        keys = [k for k in published if k.startswith("correct_")] + ["equal"]
        assert len(keys) == 5
        for key in keys:
            assert ours[key] == published[key], (path, key)  # the exact string upstream printed
        assert figures.correct_average * 100 == pytest.approx(
            float(published["correct_average"][:-1]), abs=1e-12
        )


def test_corrected_kappa_is_cohen_against_gold_and_not_the_stored_one(folder: Path) -> None:
    bar = load_llmbar(folder)
    part = bar.sets["LLMBar/Natural"]
    verdicts = part.verdicts["GPT-4"].filter(pl.col("shown_first") == "A")
    assert verdicts.height == 100
    gold = dict(part.gold.iter_rows())
    judge = verdicts.drop_nulls("winner")
    expected = cohen_kappa_score(judge["winner"].to_list(), [gold[i] for i in judge["item"]])
    figures = part.figures("GPT-4")
    assert figures.kappa_false == pytest.approx(expected, abs=1e-12)
    assert abs(figures.kappa_false - part.statistics["GPT-4"]["kappa_False"]) > 0.3  # type: ignore[operator]
    # the same figure through the ratings path and agreement()
    ratings = bar.ratings().filter(pl.col("slice") == "LLMBar/Natural")
    assert ratings.height == 400
    result = agreement(ratings, raters=["GPT-4", "gold"], n_boot=10)
    assert result.pairs[0].cohen_kappa == pytest.approx(expected, abs=1e-12)


def test_writers_round_trip(folder: Path, tmp_path: Path) -> None:
    bar = load_llmbar(folder)
    frame = read_verdicts(bar.write_verdicts(tmp_path / "v.jsonl"))
    assert frame.height == 2 * sum(s.gold.height for s in bar.sets.values()) * 3
    assert frame.filter(frame["item"] == "Processed/MT-Bench/0").height == 6
    ratings = read_ratings(bar.write_ratings(tmp_path / "r.jsonl"))
    assert set(ratings["rater"]) == {"gold", "GPT-4", "ChatGPT", "LLaMA2"}
    # null winners with A shown first: GPTInst LLaMA2 1, LLMEval^2 ChatGPT 6, GPT-4 6, LLaMA2 5
    assert ratings.filter(ratings["value"].is_null()).height == 1 + 6 + 6 + 5


def test_missing_folder_names_path_and_layout(tmp_path: Path) -> None:
    with pytest.raises(
        EvalkitError, match=r"nowhere: no such folder; expected <folder>/Dataset/<set>/dataset.json"
    ):
        load_llmbar(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalkitError, match=r"no dataset\.json found"):
        load_llmbar(tmp_path / "empty")
