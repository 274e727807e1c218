"""The slice chart of SliceFailures: a band under each row takes the click, and the picked slice stands out."""

from __future__ import annotations

import polars as pl

from evalkit.widgets._slice_failures import SELECTION, slice_chart


def test_a_row_band_takes_the_click_and_the_pick_fades_the_others() -> None:
    rates = pl.DataFrame(
        {"slice": ["a", "b"], "rate": [0.5, 0.8], "ci_low": [0.3, 0.6], "ci_high": [0.7, 0.9], "n": [10, 12]}
    )
    spec = slice_chart(rates).to_dict()
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]
    ]
    assert marks[0] == "bar"  # the band along each slice's row
    (pick,) = [p for p in spec.get("params", []) if p.get("name") == SELECTION]
    assert pick["views"] == [spec["layer"][0]["name"]]  # the row band (the whole row) takes the click
    faded = [layer["encoding"]["opacity"] for layer in spec["layer"][1:]]
    assert all(o["condition"]["param"] == SELECTION and o["value"] < 1 for o in faded)
