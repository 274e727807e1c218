"""A baseline.json edited by hand does not pass: its verdicts are checked against its score and its content
against its digest; duplicate keys, a newer format and hostile JSON are refused with the file named; accepting
the run again over an edited file rewrites it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import BASE, cid, make_run

from evalkit._baseline import accept, load_baseline
from evalkit._gate import run_gate
from evalkit.cli import main
from evalkit.errors import EvalkitError

# 160 of the baseline's 320 passes fail in the run: -40 points
REGRESS_40 = set(range(160))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("tamper")
    base = make_run(root, "base", BASE)
    now = make_run(root, "now", REGRESS_40)
    done = accept(base, root / "accepted.json")
    return base, now, done.path


def _copy(path: Path, tmp_path: Path) -> Path:
    target = tmp_path / "baseline.json"
    target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def _hide_the_regression(path: Path, *, digest: bool) -> None:
    """The edit of the audit: the cases that regressed are marked "fail" in the baseline too."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for i in range(160, 320):
        data["cases"][cid(i)] = "fail"
    if not digest:
        data.pop("digest")
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_the_regression_fails_the_gate(pair: tuple[Path, Path, Path]) -> None:
    _, now, accepted = pair
    out = run_gate(now, accepted)
    assert out.decision.failed and out.exit_code == 1 and abs(out.decision.drop - 0.40) < 1e-9


@pytest.mark.parametrize("digest", [True, False], ids=["digest-kept", "digest-removed"])
def test_verdicts_edited_to_fail_do_not_turn_the_regression_into_a_pass(
    pair: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], digest: bool
) -> None:
    _, now, accepted = pair
    path = _copy(accepted, tmp_path)
    _hide_the_regression(path, digest=digest)
    with pytest.raises(EvalkitError, match="edited") as err:
        run_gate(now, path)
    assert str(path) in str(err.value) and "baseline accept" in str(err.value)
    assert main(["gate", str(now), "--baseline", str(path)]) == 2
    said = capsys.readouterr()
    assert "PASS" not in said.out and "edited" in said.err


def test_an_edit_that_keeps_the_counts_is_caught_by_the_digest(
    pair: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, _, accepted = pair
    path = _copy(accepted, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["cases"][cid(0)], data["cases"][cid(399)] = "fail", "pass"  # a swap: the score still adds up
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(EvalkitError, match="does not match its digest"):
        load_baseline(path)


def test_accepting_the_run_again_rewrites_an_edited_baseline(
    pair: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _, accepted = pair
    for digest in (True, False):
        path = _copy(accepted, tmp_path)
        _hide_the_regression(path, digest=digest)
        done = accept(base, path)
        assert not done.unchanged
        assert load_baseline(path).cases == load_baseline(accepted).cases
        assert done.edited is not None
    # a swap of two verdicts in a file without a digest (as older evalkit wrote): rewritten, and said
    path = _copy(accepted, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("digest")
    data["cases"][cid(0)], data["cases"][cid(399)] = "fail", "pass"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert main(["baseline", "accept", str(base), "--to", str(path)]) == 0
    assert load_baseline(path).cases == load_baseline(accepted).cases
    assert "could not be trusted (its verdicts differ from the run's): rewritten" in capsys.readouterr().out
    # the file as written: nothing to do
    path = _copy(accepted, tmp_path)
    assert accept(base, path).unchanged


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            lambda t: t.replace('"format_version": 2', '"format_version": 7'),
            "written by a newer evalkit (format 7; ",
        ),
        (lambda t: t.replace('"suite": "synthetic"', '"suite": "synthetic", "suite": "x"'), "appears twice"),
        (lambda t: t.replace('"run_id": "base"', '"run_id": ' + "1" * 5000), "too long"),
        (
            lambda t: t.replace('"git_commit": null', '"git_commit": ' + "[" * 100_000 + "]" * 100_000),
            "nested too",
        ),
        (lambda t: t.replace('"run_id": "base"', '"run_id": "\\ud800"'), "refused"),
    ],
    ids=["newer", "duplicate-key", "5000-digits", "deep", "lone-surrogate"],
)
def test_hostile_or_newer_baselines_are_refused_with_the_file_named(
    pair: tuple[Path, Path, Path], tmp_path: Path, edit: object, said: str
) -> None:
    _, _, accepted = pair
    path = tmp_path / "baseline.json"
    text = accepted.read_text(encoding="utf-8")
    changed = edit(text)  # type: ignore[operator]
    assert changed != text
    path.write_text(changed, encoding="utf-8")
    with pytest.raises(EvalkitError) as err:
        load_baseline(path)
    assert str(path) in str(err.value) and said in str(err.value)


def test_a_manifest_of_a_newer_evalkit_says_so(tmp_path: Path) -> None:
    from evalkit._results import RunDir

    run = make_run(tmp_path, "r", BASE)
    manifest = run / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["schema_version"] = 9
    manifest.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        EvalkitError, match=r"written by a newer evalkit \(format 9; this evalkit reads up to 2\)"
    ):
        RunDir(run).read_manifest()
