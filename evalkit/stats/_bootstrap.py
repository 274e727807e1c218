"""Bootstrap resamples drawn in chunks, so that memory is bounded by a constant times n, not n_boot times n."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

CHUNK_ELEMENTS = 1 << 22
"""Indices drawn at once (32 MB of int64): a chunk holds this many // n resamples, at least one."""


def resample_chunks(
    n: int, n_boot: int, seed: int, *, chunk_elements: int = CHUNK_ELEMENTS
) -> Iterator[npt.NDArray[np.int64]]:
    """Row indices of `n_boot` resamples of `n` items with replacement, a few resamples at a time.

    Yields arrays of shape (c, n), c >= 1, in order, which stacked are exactly
    ``np.random.default_rng(seed).integers(0, n, size=(n_boot, n))``: numpy's generator draws the same
    stream whatever the shapes it is asked for, so the resamples, and every interval built on them, do not
    depend on `chunk_elements` (tests/stats/test_bootstrap.py pins that).
    """
    rng = np.random.default_rng(seed)
    per = max(1, chunk_elements // max(n, 1))
    for start in range(0, n_boot, per):
        yield rng.integers(0, n, size=(min(per, n_boot - start), n))
