"""Every subcommand's --help: no stray %% from argparse escaping, defaults explained, and what it says of
--processes is what the runner does."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli._main import build_parser


def parsers(
    parser: argparse.ArgumentParser, name: str = "evalkit"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser and every subcommand's, nested ones too, with the command line that shows each."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from parsers(sub, f"{name} {sub_name}")


ALL = list(parsers(build_parser()))


def test_every_command_has_a_help() -> None:
    names = [name for name, _ in ALL]
    for expected in ["evalkit validate", "evalkit run", "evalkit report", "evalkit gate", "evalkit cache"]:
        assert expected in names
    assert "evalkit baseline accept" in names


@pytest.mark.parametrize(("name", "parser"), ALL, ids=[name for name, _ in ALL])
def test_no_help_prints_a_stray_percent_sign_escape(name: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help()
    assert "%%" not in text, name
    assert "%(" not in text, name  # an unfilled argparse placeholder


def test_the_report_help_says_95_percent() -> None:
    report = dict(ALL)["evalkit report"]
    assert "95% interval" in " ".join(report.format_help().split())


@pytest.mark.parametrize(("name", "parser"), ALL, ids=[name for name, _ in ALL])
def test_every_option_with_a_default_or_choices_says_its_default(
    name: str, parser: argparse.ArgumentParser
) -> None:
    for action in parser._actions:
        if not action.option_strings or action.help in (None, argparse.SUPPRESS):
            continue
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        has_default = action.default not in (None, False, argparse.SUPPRESS)
        if has_default or action.choices:
            assert "default" in str(action.help), f"{name} {action.option_strings[0]}: {action.help}"


def test_run_help_says_a_folder_runs_each_suite_and_how_it_exits() -> None:
    text = " ".join(dict(ALL)["evalkit run"].format_help().split())
    assert "runs each suite in it, one run directory each" in text
    assert "--fail-on-error" in text and "1 when a run could score no check" in text


def test_the_processes_help_says_what_the_runner_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from evalkit._runner import Runner, RunOptions
    from evalkit._systems import as_system
    from evalkit.suite import load_suite

    run_help = dict(ALL)["evalkit run"]
    (processes,) = [a for a in run_help._actions if "--processes" in a.option_strings]
    says = " ".join(str(processes.help).split())
    assert "one per 16 cases in flight" in says and "at most the cores + 1" in says
    assert "one process below --concurrency 32" in says

    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "x", "expected": "x", "grader": "exact"}\n')
    suite = load_suite(tmp_path / "cases.jsonl")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def processes_for(concurrency: int) -> int:
        return Runner(
            suite, as_system(lambda input: input), RunOptions(concurrency=concurrency)
        ).context.processes()

    assert processes_for(31) == 1  # below 32 in flight: one process
    assert processes_for(32) == 2  # one per 16
    assert processes_for(160) == 3  # at most the cores + 1, not the cores


def test_a_command_parses_with_a_parser_of_only_itself_that_has_the_same_options() -> None:
    from evalkit.cli._main import COMMANDS, command_name

    whole = {name: sub for name, sub in ALL}
    for module in COMMANDS:
        name = command_name(module)
        alone = dict(parsers(build_parser(name)))
        assert set(alone) == {"evalkit"} | {
            n for n in whole if n == f"evalkit {name}" or n.startswith(f"evalkit {name} ")
        }
        for sub, parser in alone.items():
            if sub != "evalkit":
                assert parser.format_help() == whole[sub].format_help(), sub


def test_an_unknown_command_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from evalkit.cli._main import main

    with pytest.raises(SystemExit) as exc:
        main(["rnu"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'rnu'" in err and "'run'" in err and "'probe'" in err
