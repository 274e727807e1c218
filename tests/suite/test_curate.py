"""Curation: near-duplicates, slice coverage, filtering, and candidates imported from transcripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from rapidfuzz import fuzz, utils

from evalkit.errors import TranscriptError
from evalkit.suite import (
    Case,
    case_text,
    filter_cases,
    load_suite,
    near_duplicates,
    parse_case,
    promote,
    read_transcripts,
    save_new_version,
    slice_coverage,
)

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "goldens"
TRIAGE = GOLDENS / "support-triage"


def _variant(case: Case, new_id: str, **input_changes: str) -> Case:
    obj = {"id": new_id, "input": {**case.input, **input_changes}, "expected_exact": "x"}
    made, problems = parse_case(obj)
    assert made is not None, problems
    return made


def test_planted_near_duplicates_are_found_and_nothing_else() -> None:
    suite = load_suite(TRIAGE)
    c = {x.id: x for x in suite.cases}
    body = c["tri-002"].input["body"]
    planted = [
        _variant(
            c["tri-002"], "dup-typo", body=body.replace("declined", "declned").replace("supermarket", "shop")
        ),
        _variant(c["tri-010"], "dup-words", body=" ".join(reversed(c["tri-010"].input["body"].split()))),
        _variant(c["tri-050"], "dup-same"),  # the very input again
    ]
    found = near_duplicates([*suite.cases, *planted])
    pairs = {(a, b): (s, m) for a, b, s, m in found.iter_rows()}
    assert ("tri-002", "dup-typo") in pairs and pairs["tri-002", "dup-typo"][0] >= 90
    assert pairs["tri-010", "dup-words"] == (100.0, "token_sort_ratio")  # word order does not matter
    assert pairs["tri-050", "dup-same"] == (100.0, "same input")
    # among the shipped cases only the three deliberately empty tickets (empty, "?????", whitespace) pair up:
    # once normalised each is the channel "web-form" alone
    shipped = {p for p in pairs if not any(x.startswith("dup-") for x in p)}
    assert shipped == {("tri-120", "tri-126"), ("tri-120", "tri-131"), ("tri-126", "tri-131")}
    assert found.columns == ["case_a", "case_b", "score", "method"]
    assert found.get_column("score").to_list() == sorted(found.get_column("score").to_list(), reverse=True)


def test_scores_are_rapidfuzz_token_sort_ratio_on_the_normalised_text() -> None:
    suite = load_suite(TRIAGE)
    a, b = suite.case("tri-001"), suite.case("tri-002")
    frame = near_duplicates([a, b], threshold=0)
    expected = fuzz.token_sort_ratio(utils.default_process(case_text(a)), utils.default_process(case_text(b)))
    assert frame.row(0) == ("tri-001", "tri-002", round(expected, 1), "token_sort_ratio")


@pytest.mark.parametrize("name", ["invoice-extraction", "reply-drafter"])
def test_clearly_different_cases_make_no_pair(name: str) -> None:
    assert near_duplicates(load_suite(GOLDENS / name)).is_empty()


def test_a_field_narrows_the_comparison_to_what_differs() -> None:
    suite = load_suite(GOLDENS / "refund-policy-qa")
    # the retrieved chunks repeat across cases, so on the whole input some distinct questions look alike
    assert not near_duplicates(suite, threshold=95).is_empty()
    assert near_duplicates(suite, threshold=95, field="question").is_empty()
    drafts = load_suite(GOLDENS / "reply-drafter")
    body = drafts.cases[0].input["ticket"]["body"]
    copy = drafts.cases[0].model_copy(
        update={"id": "rd-copy", "input": {"ticket": {"body": body + " Thanks!"}}}
    )
    found = near_duplicates([*drafts.cases, copy], field="ticket.body")
    assert found.select("case_a", "case_b").rows() == [(drafts.cases[0].id, "rd-copy")]


@pytest.mark.parametrize("threshold", [50.0, 90.0])
def test_blocks_and_length_windows_lose_no_pair(monkeypatch: pytest.MonkeyPatch, threshold: float) -> None:
    import evalkit.suite._curate as curate

    suite = load_suite(TRIAGE)
    texts = [utils.default_process(case_text(c)) for c in suite.cases]
    brute = {
        (suite.cases[i].id, suite.cases[j].id): round(score, 1)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if texts[i] and texts[j] and (score := fuzz.token_sort_ratio(texts[i], texts[j])) >= threshold
    }
    monkeypatch.setattr(curate, "_BLOCK_CELLS", 7 * len(suite.cases))  # many small blocks
    found = near_duplicates(suite, threshold=threshold)
    assert {(a, b): s for a, b, s, _ in found.iter_rows()} == pytest.approx(brute, abs=0.1)
    assert len(brute) >= (3 if threshold == 90.0 else 50)  # the comparison is not vacuous


def test_slice_coverage_counts_every_case_once() -> None:
    suite = load_suite(GOLDENS / "reply-drafter")
    cov = slice_coverage(suite)
    assert cov.get_column("cases").sum() == len(suite.cases)
    assert cov.get_column("share").sum() == pytest.approx(1.0)
    counts = suite.slice_counts()
    assert dict(cov.select("slice", "cases").rows()) == counts
    row = cov.row(by_predicate=pl.col("slice") == "late-delivery", named=True)
    late = [c for c in suite.cases if c.slice == "late-delivery"]
    assert row["holdout"] == sum(c.split == "holdout" for c in late)
    assert row["dev"] + row["holdout"] == row["cases"]
    assert row["judged"] == len(late)
    assert row["kinds"] == sorted({k.kind for c in late for k in c.checks})


def test_coverage_chart_is_in_the_report_style() -> None:
    from evalkit._report._charts import WIDTH
    from evalkit.charts import slice_coverage_chart

    spec = slice_coverage_chart(slice_coverage(load_suite(TRIAGE)), min_cases=20).to_dict()
    assert spec["width"] == WIDTH
    values = next(iter(spec["datasets"].values()))
    assert {v["split"] for v in values} == {"dev", "holdout"}
    assert sum(v["n"] for v in values) == 159


def test_filter_cases_combines_every_filter() -> None:
    suite = load_suite(TRIAGE)
    sarcasm = filter_cases(suite.cases, slice="sarcasm")
    assert len(sarcasm) == 10
    held = filter_cases(suite.cases, slice="sarcasm", split="holdout")
    assert len(held) == 2 and all(c.split == "holdout" for c in held)
    words = filter_cases(suite.cases, text="INVOICE october")
    assert [c.id for c in words] == ["tri-001"]
    assert filter_cases(suite.cases, kind="judge") == []
    assert len(filter_cases(suite.cases, kind="exact")) == 159


def test_read_transcripts_reads_the_shipped_synthetic_file() -> None:
    cands = read_transcripts(TRIAGE / "transcripts.jsonl", input_fields=["subject", "body", "channel"])
    assert len(cands) == 12
    assert all(c.extra == {"synthetic": True} for c in cands)
    first = cands[0]
    assert first.id == "t-0001" and first.answer == "billing" and first.timestamp == "2025-03-03T08:12:40Z"
    assert list(first.input) == ["subject", "body", "channel"]
    assert first.where == "transcripts.jsonl:1"


def test_candidates_already_in_the_suite_are_found() -> None:
    suite = load_suite(TRIAGE)
    cands = read_transcripts(TRIAGE / "transcripts.jsonl", input_fields=["subject", "body", "channel"])
    found = near_duplicates([*suite.cases, *cands]).filter(pl.col("case_b").str.starts_with("t-"))
    assert found.select("case_a", "case_b", "method").rows() == [
        ("tri-119", "t-0012", "same input"),  # "help" by chat
        ("tri-001", "t-0005", "token_sort_ratio"),  # the October invoice again, one word changed
    ]


def test_read_transcripts_locates_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "body": "fine"}),
                '{"id": "b", "body": ',
                json.dumps({"id": "c", "bdy": "typo"}),
                json.dumps(["not", "an", "object"]),
                json.dumps({"id": "a", "body": "again"}),
                json.dumps({"id": "e", "body": "x", "timestamp": "yesterday"}),
            ]
        )
        + "\n"
    )
    with pytest.raises(TranscriptError) as err:
        read_transcripts(path, input_fields=["body"])
    got = [(p.line, p.field) for p in err.value.problems]
    assert got == [(2, "(json)"), (3, "body"), (4, "(row)"), (5, "id"), (6, "timestamp")]
    assert "did you mean 'bdy'?" in err.value.problems[1].hint
    with pytest.raises(TranscriptError, match="unknown transcript format"):
        read_transcripts(tmp_path / "t.txt")
    with pytest.raises(TranscriptError, match="cannot read"):
        read_transcripts(tmp_path / "absent.jsonl")


def test_read_transcripts_reads_csv_with_multiline_values(tmp_path: Path) -> None:
    path = tmp_path / "traffic.csv"
    path.write_text('question,answer,timestamp\n"two\nlines",yes,2025-01-02T03:04:05Z\nplain,no,\n')
    cands = read_transcripts(path, input_fields="question")
    assert [(c.id, c.input, c.answer, c.line) for c in cands] == [
        ("traffic-2", "two\nlines", "yes", 2),
        ("traffic-4", "plain", "no", 4),
    ]
    assert cands[1].timestamp is None
    path.write_text("question,answer\nok,yes\n")
    with pytest.raises(TranscriptError) as err:
        read_transcripts(path, input_fields=["question", "context"])
    assert [(p.line, p.field) for p in err.value.problems] == [(2, "context")]


def test_promoted_cases_are_valid_record_their_row_and_save_in_the_suite_form(tmp_path: Path) -> None:
    dest = tmp_path / "support-triage"
    shutil.copytree(TRIAGE, dest)
    suite = load_suite(dest)
    cands = read_transcripts(dest / "transcripts.jsonl", input_fields=["subject", "body", "channel"])
    new = promote(
        cands,
        {"t-0006": "tri-160", "t-0010": "tri-161"},
        expected={"t-0006": "refund", "t-0010": "shipping"},
        slice={"t-0006": "multi-intent", "t-0010": "injected-instructions"},
        source="synthetic transcript",
        normalize=["strip", "casefold"],
    )
    assert [c.id for c in new] == ["tri-160", "tri-161"]
    assert new[0].source == "synthetic transcript: transcripts.jsonl:6"
    assert new[1].input == cands[9].input
    result = save_new_version(suite, [*suite.cases, *new])
    lines = (dest / "cases.jsonl").read_text().splitlines()
    assert len(lines) == 161
    last = json.loads(lines[-1])
    assert list(last) == ["id", "input", "expected", "grader", "normalize", "slice", "source"]
    assert load_suite(dest).version == result.new_version


def test_promote_says_what_is_missing() -> None:
    cands = read_transcripts(TRIAGE / "transcripts.jsonl", input_fields=["subject", "body", "channel"])
    with pytest.raises(TranscriptError, match=r"no candidate 't-001' \(hint: did you mean 't-00"):
        promote(cands, ["t-001"], expected=lambda c: "billing")
    with pytest.raises(TranscriptError, match="no expected given for candidate 't-0002'"):
        promote(cands, ["t-0001", "t-0002"], expected={"t-0001": "billing"})
    with pytest.raises(TranscriptError) as err:
        promote(cands, ["t-0003"], expected=lambda c: ["not", "facts"], grader="judge", slice="")
    assert err.value.problems[0].line == 3 and err.value.problems[0].path == "transcripts.jsonl"
    answered = promote(cands, ["t-0004"], expected=lambda c: c.answer, slice="common")
    assert answered[0].checks[0].expected == "technical"  # type: ignore[union-attr]
