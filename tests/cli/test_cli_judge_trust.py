"""`evalkit agreement`, `probe position`, `calibrate` and `review sample` as a user runs them: outputs and exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

import evalkit as ek
from evalkit.calibration import read_labels, write_ratings
from evalkit.cli._main import main
from evalkit.probes import write_verdicts

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"
SHARED = Path(os.environ.get("EVALKIT_SHARED_DATA", ROOT / ".." / "shared" / "data"))


def _data(name: str) -> Path:
    found = SHARED / name
    if not found.is_dir():
        pytest.skip(f"{found} not found: put the published data there or set EVALKIT_SHARED_DATA")
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    folder = tmp_path_factory.mktemp("runs")
    return ek.run(RPQ, "baseline", judge="off", runs_dir=folder, cache_dir=folder / "cache", progress=False)


def test_agreement_json_on_pandalm_gives_the_published_kappas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.datasets import load_pandalm

    path = load_pandalm(_data("pandalm")).write_ratings(tmp_path / "pandalm.jsonl")
    code = main(["agreement", str(path), "--raters", "annotator1,annotator2,annotator3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {
        "raters",
        "scale",
        "items",
        "missing",
        "seed",
        "pairs",
        "krippendorff_alpha",
        "krippendorff_alpha_ci",
        "krippendorff_alpha_dropped",
        "levels",
        "by",
    }
    assert set(out["pairs"][0]) == {
        "a",
        "b",
        "n",
        "percent_agreement",
        "cohen_kappa",
        "cohen_kappa_ci",
        "scott_pi",
        "weighted_kappa",
        "confusion",
        "cohen_kappa_dropped",
    }
    kappas = [round(p["cohen_kappa"], 4) for p in out["pairs"]]
    assert kappas == [0.8520, 0.8789, 0.8617]
    assert out["items"] == 999 and out["by"] is None

    assert main(["agreement", str(path), "--raters", "majority,gpt-3.5-turbo"]) == 0
    text = capsys.readouterr().out
    assert "majority vs gpt-3.5-turbo  974" in text and "seed 0" in text and "gpt-3.5-turbo 25" in text


def test_agreement_by_slice_on_llmbar_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.datasets import load_llmbar

    bar = load_llmbar(_data("llmbar"))
    path = bar.write_ratings(tmp_path / "llmbar.jsonl")
    assert main(["agreement", str(path), "--raters", "gold,GPT-4", "--by", "slice", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    natural = out["by"]["LLMBar/Natural"]["pairs"][0]
    gold = bar.sets["LLMBar/Natural"].gold
    judged = bar.sets["LLMBar/Natural"].verdicts["GPT-4"].filter(shown_first="A").join(gold, on="item")
    judged = judged.filter(judged["winner"].is_not_null())
    assert natural["n"] == judged.height
    expected = cohen_kappa_score(judged["label"].to_list(), judged["winner"].to_list())
    assert natural["cohen_kappa"] == pytest.approx(expected, abs=1e-12)
    assert round(natural["cohen_kappa"], 3) == 0.837  # as docs/judge-trust.md gives it (A shown first)

    assert main(["agreement", str(path), "--raters", "gold"]) == 2
    assert "at least two" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "q1", "rater": "a"}\n', encoding="utf-8")
    assert main(["agreement", str(bad)]) == 2
    assert f"{bad}:1: value" in capsys.readouterr().err


def test_probe_position_on_llmbar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evalkit.datasets import load_llmbar

    bar = load_llmbar(_data("llmbar"))
    natural = bar.sets["LLMBar/Natural"].verdicts["ChatGPT"]
    path = write_verdicts(tmp_path / "v.jsonl", natural)
    assert main(["probe", "position", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["judge"], out["pairs"], round(out["consistency"], 4)) == ("ChatGPT", 100, 0.68)
    assert round(out["position_bias"], 3) == 0.280
    every = bar.write_verdicts(tmp_path / "all.jsonl")
    assert main(["probe", "position", str(every)]) == 2
    assert "choose one with judge=" in capsys.readouterr().err
    assert main(["probe", "position", str(every), "--judge", "GPT-4"]) == 0
    assert "Position probe, judge GPT-4" in capsys.readouterr().out


def test_calibrate_text_json_record_and_min_kappa(
    run: ek.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels" / "l.jsonl"
    labels.parent.mkdir()
    labels.write_bytes((RPQ / "labels" / "baseline.jsonl").read_bytes())
    assert main(["calibrate", str(run.path), "--labels", str(labels), "--n-boot", "50"]) == 0
    text = capsys.readouterr().out
    assert (
        "78 read, 78 joined, 0 stale" in text and "facts (code check) vs human labels of faithfulness" in text
    )
    assert "no calibration record written (no judge kappa was measured)" in text
    assert not (
        labels.parent / "calibration.json"
    ).exists()  # an offline run never replaces a measured record
    # a bar with no judge kappa measured fails: calibration cannot be shown
    assert main(["calibrate", str(run.path), "--labels", str(labels), "--min-kappa", "0.6", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] is False and out["min_kappa"] == 0.6 and out["joined"] == 78
    assert out["state"]["state"] == "not required"  # the shipped suite sets no min_kappa
    assert main(["calibrate", str(run.path), "--labels", str(tmp_path / "none.jsonl")]) == 2
    with pytest.raises(SystemExit) as usage:
        main(["calibrate", str(run.path), "--labels", str(labels), "--min-kappa", "3"])
    assert usage.value.code == 2 and "a kappa is between -1 and 1" in capsys.readouterr().err


def test_review_sample_writes_unlabelled_entries(
    run: ek.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "review.jsonl"
    args = ["review", "sample", str(run.path), "--n", "10", "--seed", "3", "--out", str(out), "--rater", "bo"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "10 of 78 judged outputs" in text and "proportional allocation" in text and "seed 3" in text
    entries = read_labels(out)
    assert len(entries) == 10 and all(e.passed is None and e.rater == "bo" for e in entries)
    assert main(args) == 2  # never overwrites
    assert "exists" in capsys.readouterr().err


def test_review_sample_says_what_is_wrong_with_its_options(
    run: ek.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "review.jsonl"
    with pytest.raises(SystemExit) as usage:
        main(["review", "sample", str(run.path), "--out", str(out), "--rater", " "])
    assert usage.value.code == 2 and "give a name" in capsys.readouterr().err
    assert main(["review", "sample", str(run.path), "--out", str(out), "--check", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no judged check named 'nope'" in err and "faithfulness" in err and "Traceback" not in err
    assert not out.exists()


def test_an_empty_ratings_or_verdicts_file_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["agreement", str(empty)]) == 2
    assert f"{empty}: file: holds no ratings" in capsys.readouterr().err
    assert main(["probe", "position", str(empty)]) == 2
    assert f"{empty}: file: holds no verdicts" in capsys.readouterr().err


def test_ratings_written_by_the_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"item": f"i{i}", "rater": r, "value": bool(i % 2) if r == "a" else i % 3 == 0}
        for i in range(20)
        for r in "ab"
    ]
    path = write_ratings(tmp_path / "r.jsonl", rows)
    assert main(["agreement", str(path), "--json", "--seed", "5", "--n-boot", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    a = [bool(i % 2) for i in range(20)]
    b = [i % 3 == 0 for i in range(20)]
    assert out["seed"] == 5 and out["pairs"][0]["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b))
