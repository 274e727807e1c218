"""Number and text normalisers, property-based."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.graders import normalize, parse_number

amounts = st.decimals(min_value=Decimal("0"), max_value=Decimal("99999999.99"), places=2, allow_nan=False)


def en(d: Decimal) -> str:
    return f"{d:,.2f}"


def de(d: Decimal) -> str:
    return f"{d:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")


@given(amounts)
def test_number_spellings_compare_equal(d: Decimal) -> None:
    spellings = {en(d), f"{d:.2f}", de(d), f"€ {en(d)}", f"{de(d)} EUR"}
    if d == d.to_integral_value() and d >= 1000:
        spellings.add(str(int(d)))
    values = {normalize(s, ["numbers"]) for s in spellings}
    assert values == {d}, spellings


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_int_and_string_forms(n: int) -> None:
    assert normalize(n, ["numbers"]) == normalize(f"{n}.00", ["numbers"]) == normalize(f"{n:,}", ["numbers"])


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,240.00", Decimal("1240")),
        ("1240.00", Decimal("1240")),
        ("1.240,00", Decimal("1240")),
        ("1 240,50", Decimal("1240.5")),
        ("12,5", Decimal("12.5")),
        ("1,240", Decimal("1240")),
        ("1.240", Decimal("1.24")),
        ("1.240.000", Decimal("1240000")),
        ("(45.00)", Decimal("-45")),
        ("CHF 1'240.00", Decimal("1240")),
    ],
)
def test_parse_number_cases(text: str, value: Decimal) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1.2.3,4,5", "12 apples", "--3", True])
def test_not_numbers(text: object) -> None:
    assert parse_number(text) is None


@given(st.text())
def test_text_normalisers_are_idempotent(s: str) -> None:
    steps = ["strip", "casefold", "whitespace"]
    once = normalize(s, steps)
    assert normalize(once, steps) == once


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30), st.sampled_from([" ", "\t", "\n  "]))
def test_whitespace_ignores_padding_and_runs(s: str, pad: str) -> None:
    assert normalize(pad + s.replace(" ", "  ") + pad, ["whitespace"]) == normalize(s, ["whitespace"])


def test_punctuation_is_dropped_and_spacing_kept_sane() -> None:
    steps = ["punctuation", "casefold"]
    assert normalize("Blue Heron Software, LLC", steps) == normalize("Blue Heron Software LLC", steps)
    assert normalize("Müller & Söhne GmbH.", steps) == "müller söhne gmbh"
    assert normalize("«Café» — Paris", steps) == "café paris"


@given(st.text())
def test_punctuation_normaliser_is_idempotent(s: str) -> None:
    once = normalize(s, ["punctuation"])
    assert normalize(once, ["punctuation"]) == once


def test_no_steps_is_identity() -> None:
    assert normalize(" A ", []) == " A "
    assert normalize({"a": [" X "]}, ["strip"]) == {"a": ["X"]}
