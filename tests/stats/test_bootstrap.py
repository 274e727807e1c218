"""Chunked bootstrap resamples: the same resamples, and so the same intervals, whatever the chunk size."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.calibration import _alpha, _pairwise
from evalkit.stats import resample_chunks


@pytest.mark.parametrize("chunk", [1, 7, 64, 10_000, 1 << 22])
def test_chunks_stack_to_one_draw(chunk: int) -> None:
    whole = np.random.default_rng(5).integers(0, 13, size=(37, 13))
    parts = list(resample_chunks(13, 37, 5, chunk_elements=chunk))
    assert all(p.shape[0] >= 1 and p.shape[0] * 13 <= max(chunk, 13) for p in parts)
    assert np.array_equal(np.concatenate(parts), whole)


def test_kappa_and_alpha_bootstraps_do_not_depend_on_the_chunk_size() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, size=101)
    b = np.where(rng.random(101) < 0.7, a, rng.integers(0, 3, size=101))
    one = _pairwise.bootstrap_counts(a, b, 3, n_boot=250, seed=9, chunk_elements=1)
    for chunk in (50, 1000, 1 << 22):
        assert np.array_equal(
            _pairwise.bootstrap_counts(a, b, 3, n_boot=250, seed=9, chunk_elements=chunk), one
        )
    per_unit = _alpha.unit_coincidences(np.stack([a, b], axis=1), 3)
    first = _alpha.bootstrap_alpha(per_unit, "ordinal", n_boot=250, seed=9, chunk_elements=1)
    for chunk in (50, 1000, 1 << 22):
        again = _alpha.bootstrap_alpha(per_unit, "ordinal", n_boot=250, seed=9, chunk_elements=chunk)
        assert np.array_equal(again, first)


def test_a_chunk_is_bounded_by_n_not_by_n_boot() -> None:
    sizes = [p.size for p in resample_chunks(100_000, 50, 0, chunk_elements=1 << 18)]
    assert max(sizes) <= 1 << 18 and sum(sizes) == 50 * 100_000
