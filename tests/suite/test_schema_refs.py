"""Schema checks never touch the network, and a schema that would fail at run time is a problem at validate."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.graders import GradingContext, grade_case
from evalkit.suite import parse_case, validate_suite


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A local server that hands out a schema accepting anything, and records every request."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/schema.json", hits
    finally:
        server.shutdown()
        server.server_close()


def _suite(tmp_path: Path, schema: Any) -> Path:
    case = {"id": "a", "input": "q", "checks": [{"kind": "schema", "schema": schema}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    return path


def test_grading_never_fetches_a_remote_ref(schema_server: tuple[str, list[str]]) -> None:
    url, hits = schema_server
    case, problems = parse_case(
        {"id": "a", "input": "q", "checks": [{"kind": "schema", "schema": {"$ref": url}}]}
    )
    assert case is not None and not problems
    (outcome,) = grade_case(case, {"anything": 1}, GradingContext())
    assert hits == []  # the fetched schema would have passed it
    assert outcome.status == "error" and "never fetched" in (outcome.error or "")


def test_a_remote_ref_is_a_located_problem_at_validate(
    tmp_path: Path, schema_server: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, hits = schema_server
    path = _suite(tmp_path, {"type": "object", "properties": {"x": {"$ref": url}}})
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr()
    text = err.out + err.err
    assert f"{path}:1" in text and "checks[0].schema/properties/x/$ref" in text and "$defs" in text
    assert hits == []


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        ({"type": "objekt"}, "not a valid JSON Schema"),
        ({"$ref": "#"}, "leads back to itself"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "itself"),
        ({"$ref": "#/$defs/missing"}, "points to nothing"),
        ("not a schema", "valid dictionary"),
    ],
)
def test_a_schema_that_would_fail_at_run_time_fails_validate(tmp_path: Path, schema: Any, said: str) -> None:
    _, problems = validate_suite(_suite(tmp_path, schema))
    assert problems, schema
    assert any(said in p.message and p.line == 1 and p.field.startswith("checks[0]") for p in problems), (
        problems
    )


def test_a_local_recursive_schema_is_fine(tmp_path: Path) -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "$ref": "#/$defs/node",
    }
    suite, problems = validate_suite(_suite(tmp_path, tree))
    assert not problems and suite is not None
    (outcome,) = grade_case(suite.cases[0], {"kids": [{"kids": []}]}, GradingContext())
    assert outcome.status == "pass"
