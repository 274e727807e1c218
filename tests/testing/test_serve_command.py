"""`evalkit serve`: the rules file, the command's arguments, and judged suites developed offline against it.

The command is tested through its own parser (``_serve.add_parser`` on a bare ``argparse`` parser); the line that
registers it in ``evalkit`` is not part of this module.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from evalkit.cli import _serve
from evalkit.errors import RulesFileError
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SIMULATED_JUDGE_MODEL, load_rules_file

ROOT = Path(__file__).resolve().parents[2]
SERVE_SCRIPT = (
    "import argparse, sys\n"
    "from evalkit.cli import _serve\n"
    "parser = argparse.ArgumentParser(prog='evalkit')\n"
    "_serve.add_parser(parser.add_subparsers())\n"
    "args = parser.parse_args(['serve', *sys.argv[1:]])\n"
    "sys.exit(args.func(args))\n"
)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="evalkit")
    _serve.add_parser(parser.add_subparsers())
    return parser.parse_args(["serve", "--port", "0", *argv])


@pytest.fixture
def served() -> Iterator[Any]:
    servers: list[LocalAnthropicServer] = []

    def start(*argv: str) -> LocalAnthropicServer:
        server = _serve.build_server(parse(*argv)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def ask(server: LocalAnthropicServer, text: str, **extra: Any) -> anthropic.types.Message:
    with anthropic.Anthropic(base_url=server.base_url, api_key="local", max_retries=0) as sdk:
        request: dict[str, Any] = {"model": "claude-sonnet-4-6", "max_tokens": 64, **extra}
        return sdk.messages.create(messages=[{"role": "user", "content": text}], **request)


def text_of(message: anthropic.types.Message) -> str:
    block = message.content[0]
    assert block.type == "text"
    return block.text


RESPONDER = """
def shout(body):
    return body["messages"][-1]["content"].upper()
"""


def write_rules(tmp_path: Path, rules: str) -> Path:
    (tmp_path / "my_replies.py").write_text(RESPONDER, encoding="utf-8")
    path = tmp_path / "rules.toml"
    path.write_text(textwrap.dedent(rules), encoding="utf-8")
    return path


def test_rules_match_text_model_and_system_and_answer_text_json_or_a_responder(
    tmp_path: Path, served: Any
) -> None:
    rules = write_rules(
        tmp_path,
        """
        text = "nothing matched"

        [[rules]]
        contains = "WHERE is my order"
        model = "claude-haiku-4-5"
        reply = "haiku says: shipped"

        [[rules]]
        contains = "where is my order"
        system = "BILLING agent"
        json = { label = "billing" }

        [[rules]]
        regex = "^shout (\\\\w+)$"
        responder = "my_replies:shout"
        """,
    )
    server = served("--rules", str(rules))

    assert text_of(ask(server, "Where is my order?", model="claude-haiku-4-5")) == "haiku says: shipped"
    assert json.loads(text_of(ask(server, "where is my order", system="You are a billing agent."))) == {
        "label": "billing"
    }
    assert text_of(ask(server, "shout this")) == "SHOUT THIS"
    assert text_of(ask(server, "where is my order")) == "nothing matched"  # no model, no system: no rule


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ('[[rules]]\nreply = "x"\n', r"rules.toml:1: rules\[0\]: give exactly one of contains"),
        (
            '\n\n[[rules]]\ncontains = "a"\n',
            r"rules.toml:3: rules\[0\]: give exactly one of reply, json or responder",
        ),
        (
            '[[rules]]\ncontains = "a"\nreply = "b"\n\n[[rules]]\nregex = "("\nreply = "c"\n',
            r"rules.toml:5: rules\[1\]: regex '\(' is not a valid regular expression",
        ),
        ('[[rules]]\ncontains = "a"\nresponder = "nowhere:f"\n', r"cannot import 'nowhere'"),
        ('[[rules]]\ncontains = "a"\nreplies = "b"\n', r"unknown keys \['replies'\]"),
        ("[judge]\nposition_bias = 2\n", r"\[judge\] position_bias: must be a number from 0 to 1"),
        ('[judge]\nmode = "on"\n', r"mode: must be \"simulated\" or \"off\""),
        ('[[judge.rules]]\ncandidate = "x"\n', r"rules.toml:1: judge.rules\[0\]: met must be true or false"),
        ("[limits]\nrpm = 0\n", r"\[limits\] rpm: must be a whole number above 0"),
        ("rules = [", r"rules.toml: not valid TOML"),
    ],
)
def test_bad_rules_files_say_file_line_and_field(tmp_path: Path, rules: str, message: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(rules, encoding="utf-8")
    with pytest.raises(RulesFileError, match=message):
        load_rules_file(path)


def test_a_bad_rules_file_exits_2_with_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rules.toml"
    path.write_text('[[rules]]\ncontains = "a"\n', encoding="utf-8")

    assert _serve.run(parse("--rules", str(path))) == 2
    assert "rules.toml:1: rules[0]: give exactly one of reply, json or responder" in capsys.readouterr().err


def test_judge_settings_come_from_the_file_and_flags_override_them(tmp_path: Path) -> None:
    rules = write_rules(
        tmp_path,
        """
        [judge]
        position_bias = 0.2
        verbosity_bias = 0.1
        seed = 4

        [[judge.rules]]
        candidate = "guaranteed"
        met = false
        """,
    )
    judge = _serve.build_server(parse("--rules", str(rules), "--position-bias", "0.3")).judge
    assert (judge.position_bias, judge.verbosity_bias, judge.seed) == (0.3, 0.1, 4)
    assert [r.candidate for r in judge.rules] == ["guaranteed"]
    assert _serve.build_server(parse("--judge", "off")).judge is None
    with pytest.raises(SystemExit):
        parse("--injection-susceptibility", "1.2")


def test_serve_prints_its_url_and_stops_on_ctrl_c() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_SCRIPT, "--port", "0", "--text", "offline"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        with anthropic.Anthropic(base_url=base_url, api_key="local", max_retries=0) as sdk:
            reply = sdk.messages.create(
                model="claude-sonnet-4-6", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
            )
        assert text_of(reply) == "offline" and reply.model == "simulated-claude-sonnet-4-6"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "serving with simulated judge (overlap 0.5, no planted bias)" in stderr


OFFLINE_REPLIES = (
    (ROOT / "docs" / "serve.md").read_text(encoding="utf-8") if (ROOT / "docs" / "serve.md").exists() else ""
)


def _code_block(markdown: str, name: str) -> str:
    """The fenced block that follows the line naming `name` in docs/serve.md."""
    after = markdown.split(f"`{name}`", 1)[1]
    return after.split("```", 2)[1].split("\n", 1)[1]


@pytest.mark.parametrize("suite", ["refund-policy-qa", "reply-drafter"])
def test_the_documented_offline_workflow_gives_the_shipped_judged_suites_verdicts(
    suite: str,
    tmp_path: Path,
    served: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from evalkit.cli import main

    (tmp_path / "offline_replies.py").write_text(
        _code_block(OFFLINE_REPLIES, "offline_replies.py"), encoding="utf-8"
    )
    (tmp_path / "rules.toml").write_text(_code_block(OFFLINE_REPLIES, "rules.toml"), encoding="utf-8")
    server = served("--rules", str(tmp_path / "rules.toml"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local")
    runs = tmp_path / "runs"
    argv = ["run", str(ROOT / "goldens" / suite), "--system", "claude", "--judge", "on", "-q"]
    code = main([*argv, "--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(runs)])

    assert code in (0, 1), capsys.readouterr().err
    (results,) = runs.glob("*/results.jsonl")
    judged = [
        check
        for line in results.read_text(encoding="utf-8").splitlines()
        for check in json.loads(line)["checks"]
        if check["kind"] == "judge" and check["status"] != "skipped"
    ]
    assert judged, "no judge check was reached"
    assert all(c["error"] is None and c["status"] in ("pass", "fail") for c in judged)
    assert {c["judge_model_version"] for c in judged} == {SIMULATED_JUDGE_MODEL}
    assert all(c["judge_reasoning"].startswith("simulated judge (evalkit serve): ") for c in judged)
