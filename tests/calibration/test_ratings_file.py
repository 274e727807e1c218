"""The ratings file: round trip, and a located error for each kind of bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.calibration import agreement_from_files, read_ratings, write_ratings
from evalkit.errors import RecordsError


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(RecordsError) as info:
        read_ratings(path)
    return [str(p) for p in info.value.problems]


def test_round_trip_keeps_types(tmp_path: Path) -> None:
    rows = [
        {"item": "q1", "rater": "human", "value": 2, "criterion": "helpful", "slice": "easy", "reason": "ok"},
        {"item": "q1", "rater": "judge", "value": 10},
        {"item": "q2", "rater": "human", "value": True, "date": "2024-05-01"},
        {"item": "q2", "rater": "judge", "value": None},
        {"item": "q3", "rater": "judge", "value": "good"},
    ]
    path = write_ratings(tmp_path / "r.jsonl", rows)
    frame = read_ratings(path)
    assert frame["value"].to_list() == ["2", "10", "true", None, "good"]
    assert frame["kind"].to_list() == ["int", "int", "bool", None, "str"]
    assert frame["line"].to_list() == [1, 2, 3, 4, 5]
    again = write_ratings(tmp_path / "again.jsonl", frame)
    assert [json.loads(x) for x in again.read_text().splitlines()] == [
        {k: v for k, v in r.items() if v is not None or k == "value"} for r in rows
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_ordinal_ints_sort_numerically(tmp_path: Path) -> None:
    rows = [{"item": f"i{n}", "rater": r, "value": v} for n, v in enumerate([2, 10, 1]) for r in ("a", "b")]
    path = write_ratings(tmp_path / "r.jsonl", rows)
    result = agreement_from_files([path], scale="ordinal", n_boot=10)
    assert result.pairs[0].confusion.labels == ["1", "2", "10"]


def test_duplicate_names_both_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        [
            '{"item": "q1", "rater": "human", "value": 1}',
            '{"item": "q1", "rater": "judge", "value": 1}',
            '{"item": "q1", "rater": "human", "value": 0}',
            '{"item": "q1", "rater": "human", "value": 0, "criterion": "tone"}',
        ],
    )
    problems = _problems(path)
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}:3: item:")
    assert f"{path}:1" in problems[0]


def test_duplicate_across_files(tmp_path: Path) -> None:
    one = _write(tmp_path / "one.jsonl", ['{"item": "q1", "rater": "h", "value": 1}'])
    two = _write(tmp_path / "two.jsonl", ["", '{"item": "q1", "rater": "h", "value": 1}'])
    with pytest.raises(RecordsError) as info:
        read_ratings(one, two)
    (problem,) = info.value.problems
    assert str(problem).startswith(f"{two}:2: item:") and f"{one}:1" in str(problem)


def test_every_bad_line_is_located(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.jsonl",
        [
            '{"item": "q1", "rater": "human", "value": 1.5}',
            '{"item": "q2", "value": 1}',
            '{"item": "q3", "rater": "human", "value": 1',
            "[1, 2]",
            '{"item": "q4", "rater": "human", "value": [1]}',
            '{"item": "q5", "rater": "human", "value": 1, "score": 3}',
            '{"item": "q6", "rater": "human", "value": 1, "slice": 7}',
            '{"item": "q7", "rater": "human", "value": 1}',
        ],
    )
    problems = _problems(path)
    expected = [
        (1, "value", "float"),
        (2, "rater", "missing"),
        (3, "json", "not valid JSON"),
        (4, "json", "not an object"),
        (5, "value", "list"),
        (6, "score", "unknown field"),
        (7, "slice", "must be a string"),
    ]
    assert len(problems) == len(expected)
    for text, (line, field, words) in zip(problems, expected, strict=True):
        assert text.startswith(f"{path}:{line}: {field}: "), text
        assert words in text
        assert "hint:" in text


def test_missing_file(tmp_path: Path) -> None:
    problems = _problems(tmp_path / "nope.jsonl")
    assert problems == [f"{tmp_path / 'nope.jsonl'}: file: no such file (hint: check the path)"]
