"""The local Anthropic-compatible server, through the official SDK: the pytest fixtures and the command line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest
from server_helpers import (
    API_KEY,
    MakeServer,
    ask,
    first_text,
    sdk,
    track,
)

from evalkit.testing import FAULT_KINDS, FaultPlan
from evalkit.testing.server import main
from evalkit.testing.server._main import _parse_args

# ---- fixtures and command line ---------------------------------------------------------------------------------


def test_factory_fixture_builds_configured_servers(make_anthropic_server: MakeServer) -> None:
    first = make_anthropic_server(text="one")
    second = make_anthropic_server(lambda body: "two")
    assert first.port != second.port
    assert first_text(sdk(first).messages.create(**ask("x"))) == "one"
    assert first_text(sdk(second).messages.create(**ask("x"))) == "two"


def test_fixture_plugin_in_a_fresh_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["evalkit.testing.fixtures"]\n')
    (tmp_path / "test_plugin.py").write_text(
        textwrap.dedent(
            """
            import os

            import anthropic


            def test_default_server(anthropic_server):
                client = anthropic.Anthropic(base_url=anthropic_server.base_url, api_key="k" * 10)
                reply = client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
                assert reply.content[0].text == anthropic_server.text


            def test_factory(make_anthropic_server):
                server = make_anthropic_server(text="made", faults={0: "overloaded"})
                client = anthropic.Anthropic(base_url=server.base_url, api_key="k" * 10, max_retries=0)
                try:
                    client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
                except anthropic.APIStatusError as exc:
                    assert exc.status_code == 529
                else:
                    raise AssertionError("expected 529")


            def test_env(anthropic_env):
                assert os.environ["ANTHROPIC_BASE_URL"] == anthropic_env.base_url
                reply = anthropic.Anthropic().messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
                assert reply.content[0].text == anthropic_env.text
            """
        )
    )
    # Installed plugins are not needed here (the conftest names the one under test); skipping them is faster.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout


def test_command_line_serves_until_interrupted() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalkit.testing.server",
            "--port",
            "0",
            "--text",
            "offline reply",
            "--resolve-models",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        client = track(anthropic.Anthropic(base_url=base_url, api_key=API_KEY, max_retries=0))
        reply = client.messages.create(**ask("hello"))
        assert first_text(reply) == "offline reply"
        assert reply.model == "claude-haiku-4-5-20251001"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "RuntimeWarning" not in stderr


@contextlib.contextmanager
def serving_command_line(*args: str) -> Iterator[str]:
    """Run ``python -m evalkit.testing.server`` with these arguments; yields its base URL, then stops it with Ctrl-C."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.testing.server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
        assert process.returncode == 0, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_command_line_injects_faults_on_ipv4_and_ipv6(host: str) -> None:
    if host == "::1" and not _has_ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    args = ["--host", host, "--fault-rate", "0.5", "--faults", "overloaded,500", "--seed", "3"]
    plan = FaultPlan(rate=0.5, kinds=["overloaded", "server_error"], seed=3)
    expected = [{None: 200, "overloaded": 529, "server_error": 500}[plan.fault_for(i)] for i in range(6)]
    assert set(expected) == {200, 500, 529}
    statuses = []
    with serving_command_line(*args) as base_url:
        assert base_url.startswith("http://[::1]:" if host == "::1" else "http://127.0.0.1:"), base_url
        client = track(anthropic.Anthropic(base_url=base_url, api_key=API_KEY, max_retries=0))
        for i in range(6):
            try:
                client.messages.create(**ask(f"request {i}"))
                statuses.append(200)
            except anthropic.APIStatusError as exc:
                statuses.append(exc.status_code)
    assert statuses == expected


def test_command_line_fault_flags_make_a_fault_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parse_args([]).fault_plan.rate == 0  # no faults unless asked for
    assert _parse_args(["--fault-rate", "0.25", "--seed", "5"]).fault_plan == FaultPlan(
        rate=0.25, kinds=FAULT_KINDS, seed=5
    )  # every kind by default
    assert _parse_args(["--fault-rate", "1", "--faults", "429, timeout"]).fault_plan.kinds == (
        "rate_limit",
        "timeout",
    )
    with pytest.raises(SystemExit):
        _parse_args(["--help"])
    help_text = capsys.readouterr().out
    assert "--fault-rate RATE" in help_text and "--faults KINDS" in help_text and "--seed" in help_text

    for argv, message in [
        (["--fault-rate", "1.5"], "--fault-rate: must be from 0 to 1"),
        (["--fault-rate", "nan"], "--fault-rate: must be from 0 to 1"),
        (["--fault-rate", "lots"], "invalid float value: 'lots'"),
        (["--fault-rate", "0.1", "--faults", "overloaded,meteor"], "unknown fault kind 'meteor'"),
        (["--fault-rate", "0.1", "--faults", ","], "--faults: name at least one of"),
        (["--faults", "timeout"], "--faults: needs --fault-rate above 0"),
        (["--seed", "x"], "invalid int value: 'x'"),
    ]:
        with pytest.raises(SystemExit) as exited:
            _parse_args(argv)
        assert exited.value.code == 2, argv
        assert message in capsys.readouterr().err, argv

    with socket.socket() as taken:  # a port in use is a usage error too, not a traceback
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["--port", str(taken.getsockname()[1])]) == 2
    assert "error: cannot serve on --host 127.0.0.1" in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "simulated"), [((), True), (("--judge", "off"), False)])
def test_command_line_answers_judge_requests_with_the_simulated_judge(
    flag: tuple[str, ...], simulated: bool
) -> None:
    from evalkit.graders import Judge
    from evalkit.suite import JudgeCheck, parse_case

    case, _ = parse_case(
        {"id": "c", "input": "q", "checks": [{"kind": "judge", "rubric": ["Says hello", "Is short"]}]}
    )
    assert case is not None
    (check,) = [c for c in case.checks if isinstance(c, JudgeCheck)]
    request = Judge(client=None).build_request(check, "hello there", case)
    with serving_command_line("--port", "0", *flag) as base_url:
        post = urllib.request.Request(
            f"{base_url}/v1/messages",
            data=json.dumps(request).encode(),
            headers={"content-type": "application/json", "x-api-key": API_KEY},
        )
        with urllib.request.urlopen(post, timeout=10) as response:
            reply = json.loads(response.read())
    verdict = json.loads(reply["content"][0]["text"])
    assert (len(verdict["criteria"]) == 2) is simulated
    assert (reply["model"] == "simulated-judge") is simulated
