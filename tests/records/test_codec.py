"""One JSONL codec: what evalkit writes its own readers read back, and every reader keeps the same limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._records import decode_line, encode_line, read_jsonl, split_lines
from evalkit.calibration import Label, read_labels, read_ratings, write_labels, write_ratings
from evalkit.cli import main
from evalkit.errors import Problem, RecordsError
from evalkit.probes import read_verdicts, write_verdicts
from evalkit.suite import load_suite

# each breaks a line for str.splitlines (U+2028, U+2029, U+0085), or cannot be encoded as UTF-8 (a lone surrogate)
AWKWARD = [
    "line\u2028separator",
    "para\u2029graph",
    "next\u0085line",
    "lone \ud800 surrogate",
    "tab\tand \r cr",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_a_line_encodes_to_one_line_and_decodes_to_what_was_written(text: str) -> None:
    line = encode_line({"reason": text, "n": 1})
    assert line.splitlines() == [line] and "\n" not in line
    line.encode("utf-8")  # a lone surrogate is escaped, so the line can be written
    assert json.loads(line) == {"reason": text, "n": 1}
    # read back: the same, but for a lone surrogate, which no UTF-8 file or frame can hold
    assert decode_line(line) == ({"reason": text.replace("\ud800", "\ufffd"), "n": 1}, None)


@pytest.mark.parametrize("text", AWKWARD)
def test_labels_with_any_text_round_trip(tmp_path: Path, text: str) -> None:
    path = tmp_path / "labels.jsonl"
    labels = [
        Label(
            case_id=f"c{i}",
            check="faithfulness",
            output_hash="ab" * 6,
            rater="ana",
            passed=i % 2 == 0,
            reason=text,
        )
        for i in range(4)
    ]
    write_labels(path, labels)
    back = read_labels(path)
    assert [x.reason for x in back] == [text.replace("\ud800", "\ufffd")] * 4
    assert [x.model_copy(update={"reason": None}) for x in back] == [
        x.model_copy(update={"reason": None}) for x in labels
    ]


@pytest.mark.parametrize("text", AWKWARD)
def test_ratings_and_verdicts_with_any_text_round_trip(tmp_path: Path, text: str) -> None:
    ratings = [{"item": f"i{i}", "rater": "ana", "value": True, "reason": text} for i in range(3)]
    write_ratings(tmp_path / "ratings.jsonl", ratings)
    read = read_ratings(tmp_path / "ratings.jsonl")
    text = text.replace("\ud800", "\ufffd")
    assert read.height == 3 and read.get_column("reason").to_list() == [text] * 3
    verdicts = [{"item": f"{text}-{i}", "judge": "j", "shown_first": "A", "winner": "B"} for i in range(3)]
    # (written with a lone surrogate would need it kept: the text above already has it replaced)
    write_verdicts(tmp_path / "verdicts.jsonl", verdicts)
    assert read_verdicts(tmp_path / "verdicts.jsonl").get_column("item").to_list() == [
        v["item"] for v in verdicts
    ]


HOSTILE = {
    "5000 digits": '{"item": "a", "value": ' + "9" * 5000 + "}",
    "100000 deep": '{"item": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "duplicate key": '{"item": "a", "item": "b"}',
    "NaN": '{"item": "a", "value": NaN}',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("reader", ["baseline", "calibration record"])
def test_hostile_json_documents_are_refused_with_the_file_named(
    tmp_path: Path, name: str, reader: str
) -> None:
    """baseline.json and calibration.json keep the JSONL readers' limits: an EvalkitError naming the file, never
    a traceback."""
    from evalkit._baseline import load_baseline
    from evalkit.calibration import read_calibration_record
    from evalkit.errors import EvalkitError

    path = tmp_path / "file.json"
    path.write_text(HOSTILE[name], encoding="utf-8")  # refused as it is read, before any field is looked at
    with pytest.raises(EvalkitError) as caught:
        (load_baseline if reader == "baseline" else read_calibration_record)(path)
    assert str(caught.value).startswith(f"{path}: ") and ";" in str(caught.value)


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("reader", [read_labels, read_ratings, read_verdicts])
def test_hostile_lines_are_located_problems_not_tracebacks(tmp_path: Path, name: str, reader: object) -> None:
    path = tmp_path / "file.jsonl"
    path.write_text('{"item": "fine"}\n' + HOSTILE[name] + "\n", encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        reader(path)  # type: ignore[operator]
    located = [p for p in caught.value.problems if p.line == 2]
    assert located and located[0].hint, caught.value.problems


def test_lines_end_at_newlines_only_and_a_leading_bom_is_dropped(tmp_path: Path) -> None:
    assert split_lines('\ufeff{}\r\n{"a": "x\u2028y"}\n') == ["{}", '{"a": "x\u2028y"}', ""]
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"a": 1}\n{"b": "p\xe2\x80\xa8q"}\n')
    problems: list[Problem] = []
    assert list(read_jsonl(path, problems)) == [(1, {"a": 1}), (2, {"b": "p\u2028q"})]
    assert problems == []


def test_a_suite_toml_with_a_bom_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "suite.toml").write_bytes(b'\xef\xbb\xbfname = "bom"\n')
    (tmp_path / "cases.jsonl").write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps({"id": "a", "input": "x", "expected": "x", "grader": "exact"}).encode()
        + b"\n"
    )
    (tmp_path / "baseline.py").write_text("def predict(x):\n    return x\n", encoding="utf-8")
    assert load_suite(tmp_path).name == "bom"
    assert main(["validate", str(tmp_path)]) == 0


def test_a_repeated_key_in_a_document_is_located_at_its_second_writing() -> None:
    from evalkit._records._document import decode_document
    from evalkit.errors import EvalkitError

    # the same key in two objects is fine; twice in one object is refused, at the line of the second
    text = '{\n  "cases": {\n    "a": {"verdict": "pass"},\n    "b": {"verdict": "pass",\n      "verdict": "fail"}\n  }\n}\n'
    with pytest.raises(
        EvalkitError, match=r"baseline.json: the key 'verdict' appears twice .* \(again at line 5\)"
    ):
        decode_document(text, "baseline.json")
    assert (
        decode_document(text.replace('"verdict": "fail"', '"score": 1'), "baseline.json")["cases"]["b"][
            "score"
        ]
        == 1
    )
