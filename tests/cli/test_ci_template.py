"""The CI template's evalkit commands are ones evalkit accepts: every `evalkit ...` line of every job, with the
workflow's expressions and variables filled in, parses with the command's own argument parser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from evalkit.cli._main import build_parser

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "evalkit.yml"
VALUES = {"EVALKIT_STORE": "s3://acme-evals", "SUITE": "support-triage", "SHARD": "2", "BASELINE": "b.json"}


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for name, job in yaml.safe_load(WORKFLOW.read_text())["jobs"].items():
        for step in job["steps"]:
            script = step.get("run", "")
            script = re.sub(r"\$\{\{[^}]*\}\}", "12345", script).replace("\\\n", " ")
            for line in script.splitlines():
                line = line.strip()
                if ".venv/bin/evalkit " in line:
                    for var, value in VALUES.items():
                        line = line.replace("${" + var + "}", value).replace("$" + var, value)
                    line = line.replace('"$parts', '"s3://acme-evals/ci/12345/support-triage').replace(
                        '"$run"', "runs/x"
                    )
                    words = shlex.split(line.split(".venv/bin/evalkit ", 1)[1])
                    found.append((f"{name}: {step.get('name', '')}", words))
    return found


COMMANDS = _commands()


def test_the_template_runs_shards_merges_and_gates() -> None:
    verbs = [words[0] for _, words in COMMANDS]
    assert {"run", "merge", "gate", "report"} <= set(verbs)
    assert any("--shard" in words for _, words in COMMANDS)
    assert 'run="$EVALKIT_STORE/nightly/$SUITE/' in WORKFLOW.read_text()  # the nightly history on the store


@pytest.mark.parametrize(("where", "words"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_each_command_parses(where: str, words: list[str]) -> None:
    build_parser(words[0]).parse_args(words)  # argparse exits 2 on an unknown option or a bad value
