"""PandaLM read in place: the published human kappas and majority counts, and the judges against the majority."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.calibration import agreement
from evalkit.datasets import load_pandalm
from evalkit.errors import EvalkitError


@pytest.fixture
def folder(shared_data: Callable[[str], Path]) -> Path:
    return shared_data("pandalm")


def test_human_kappas_and_majority_counts(folder: Path) -> None:
    panda = load_pandalm(folder)
    assert panda.items.height == 999
    result = agreement(panda.ratings(), raters=["annotator1", "annotator2", "annotator3"], n_boot=50)
    kappas = {(p.a, p.b): round(p.cohen_kappa, 4) for p in result.pairs}  # type: ignore[arg-type]
    # README: 0.85, 0.88, 0.86
    assert kappas == {
        ("annotator1", "annotator2"): 0.8520,
        ("annotator1", "annotator3"): 0.8789,
        ("annotator2", "annotator3"): 0.8617,
    }
    assert panda.majority_counts() == {"tie": 105, "1": 422, "2": 472, "none": 0}


def test_judges_against_majority_count_garbage_as_missing(folder: Path) -> None:
    panda = load_pandalm(folder)
    ratings = panda.ratings()
    gpt = agreement(ratings, raters=["majority", "gpt-3.5-turbo"], n_boot=50)
    assert gpt.missing == {"majority": 0, "gpt-3.5-turbo": 25}
    assert gpt.pairs[0].n == 974 and gpt.pairs[0].confusion.labels == ["0", "1", "2"]
    panda_7b = agreement(ratings, raters=["majority", "PandaLM-7B"], n_boot=50)
    assert panda_7b.pairs[0].n == 999 and panda_7b.missing["PandaLM-7B"] == 0


def test_missing_file_names_it(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(EvalkitError, match=r"data/testset-v1.json: no such file; expected <folder>/data/"):
        load_pandalm(tmp_path)
