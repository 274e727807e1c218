"""A case whose input is a conversation: its turns validated and located, and sent as they are by `claude`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalkit as ek
from evalkit.cli import main
from evalkit.testing.server import LocalAnthropicServer, last_user_text

TURNS = [
    {"role": "user", "content": "I want to return the kettle."},
    {"role": "assistant", "content": "Sorry to hear that. What went wrong?"},
    {"role": "user", "content": "Actually, keep it: the lid was just stuck."},
]


def _write(folder: Path, inputs: list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"c{i}", "input": x, "must_contain": ["keep"]} for i, x in enumerate(inputs)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "suite.toml").write_text(
        'name = "talk"\n\n[model]\nname = "claude-haiku-4-5"\nmax_tokens = 32\n'
    )
    (folder / "prompt.md").write_text("You answer customers of a kitchen shop.")
    return folder


def test_malformed_turns_are_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = [
        [
            {"role": "user", "content": "hi"},
            {"role": "bot", "content": "yo"},
            {"role": "user", "content": "?"},
        ],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [{"role": "user", "content": ""}],
    ]
    folder = _write(tmp_path / "bad", bad)
    assert main(["validate", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "cases.jsonl:1: input[1].role: must be 'user' or 'assistant', got 'bot'" in err
    assert "cases.jsonl:2: input[1].role: the last turn is the one the system answers: a user turn" in err
    assert "cases.jsonl:3: input[0].content: must be non-empty text" in err


def test_claude_answers_the_last_user_turn_of_the_conversation(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server: LocalAnthropicServer = make_anthropic_server(
        responder=lambda body: (
            "Glad to hear it, keep enjoying it." if "keep it" in last_user_text(body) else "?"
        )
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    folder = _write(tmp_path / "talk", [TURNS, "should I send it back?"])
    run = ek.run(folder, "claude", runs_dir=tmp_path / "runs", progress=False, cache="off")
    sent = sorted((r.body["messages"] for r in server.requests if r.path == "/v1/messages"), key=len)
    assert sent[1] == TURNS  # the turns as written, the last one a user turn
    assert sent[0] == [{"role": "user", "content": "should I send it back?"}]
    assert dict(zip(run.verdicts()["case_id"], run.verdicts()["status"], strict=True)) == {
        "c0": "pass",
        "c1": "fail",
    }
