"""`probe verbosity`, `probe injection` and `probe position --live` on a parser built with add_live_parsers."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit._records import read_jsonl
from evalkit.cli._probe_live import add_live_parsers
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SimulatedJudge

RUBRIC = ["States the refund window of 30 days", "Explains how to print the returns label"]


def parser(with_file_position: bool = False) -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="evalkit")
    commands = root.add_subparsers(dest="command")
    probe = commands.add_parser("probe")
    probes = probe.add_subparsers(dest="probe")
    # as the file-based `probe position FILE` makes it, before the live options join it
    if with_file_position:
        pos = probes.add_parser("position")
        pos.add_argument("file", nargs="+")
        pos.add_argument("--json", action="store_true")
        pos.set_defaults(func=lambda args: print("file probe of", args.file) or 0)
    add_live_parsers(probes)
    return root


def call(argv: list[str], *, with_file_position: bool = False) -> int:
    args = parser(with_file_position).parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    rows = [
        {"id": f"r{i:02d}", "input": {"question": f"Return window for order {i}?"},
         "checks": [{"kind": "judge", "field": "answer", "rubric": RUBRIC}]}
        for i in range(24)
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "refunds"\n')
    (root / "baseline.py").write_text(
        "def predict(input):\n    return {'answer': 'The refund window is 30 days.'}\n"
    )
    (root / "vague.py").write_text("def predict(input):\n    return {'answer': 'Write to us.'}\n")
    return root


@pytest.fixture
def simulated(
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Callable[..., list[str]]:
    def start(**biases: float) -> list[str]:
        server = make_anthropic_server(judge=SimulatedJudge(**biases), simulated=True)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
        return ["--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(tmp_path / "runs"), "-q"]

    return start


def test_verbosity_command(
    suite: Path, simulated: Callable[..., list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = simulated(verbosity_bias=0.5)
    out = tmp_path / "rows.jsonl"
    argv = ["probe", "verbosity", str(suite), "--padding", "repeat-list", "--json", "--out", str(out)]
    assert call(argv + common) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["probe"] == "verbosity" and shown["padding"] == "repeat-list" and shown["outputs"] == 24
    assert shown["effect"]["pass_rate"]["n"] == 24 and shown["effect"]["target_effect"] == 0.05
    rows = list(read_jsonl(out, []))
    assert len(rows) == 24 and {"original_pass", "padded_pass", "padded_words"} <= set(rows[0][1])
    assert call(["probe", "verbosity", str(suite), *common]) == 0
    assert "Verbosity probe: suite refunds" in capsys.readouterr().out


def test_injection_command(
    suite: Path, simulated: Callable[..., list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    common = simulated(injection_susceptibility=0.4)
    argv = ["probe", "injection", str(suite), "--attack", "fake-fence", "--attack", "score-demand", "--json"]
    assert call(argv + common) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [a["attack"] for a in shown["effect"]["attacks"]] == ["fake-fence", "score-demand"]
    assert shown["effect"]["overall"]["failing"] == 48 and shown["n_needed"] == 32
    with pytest.raises(SystemExit) as exited:
        call(["probe", "injection", str(suite), "--attack", "shouting"])
    assert exited.value.code == 2


def test_position_live_joins_the_file_based_parser(
    suite: Path, simulated: Callable[..., list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = simulated(position_bias=0.3)
    # without --live the file-based action runs, with its own positional
    assert call(["probe", "position", "v.jsonl"], with_file_position=True) == 0
    assert "file probe of ['v.jsonl']" in capsys.readouterr().out
    verdicts = tmp_path / "verdicts.jsonl"
    argv = ["probe", "position", str(suite), "--live", "--against", f"{suite / 'vague.py'}:predict"]
    argv += ["--verdicts-out", str(verdicts), "--json", *common]
    for with_file in (True, False):
        assert call(argv, with_file_position=with_file) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["probe"] == "position" and shown["pairs"] == 24 and shown["verdicts"] == str(verdicts)
    assert len(list(read_jsonl(verdicts, []))) == 48
    assert call(["probe", "position", str(suite)]) == 2  # no file-based action here, and no --live


def test_help_states_every_default() -> None:
    probes = parser()._subparsers._group_actions[0].choices["probe"]  # type: ignore[union-attr]
    for name, sub in probes._subparsers._group_actions[0].choices.items():  # type: ignore[union-attr]
        for action in sub._actions:
            if action.option_strings and action.help and action.dest != "help":
                assert "default" in action.help, (name, action.dest)
