"""Krippendorff's alpha (nominal or ordinal) from a units × raters matrix of label codes, missing allowed.

Each unit contributes its coincidence matrix once; alpha is a function of their sum, so a bootstrap
over units is a weighted sum of the same per-unit matrices and needs no second pass over the data.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from evalkit.stats import CHUNK_ELEMENTS, resample_chunks

Array = npt.NDArray[np.float64]


def unit_coincidences(codes: npt.NDArray[np.int64], k: int) -> Array:
    """Per-unit coincidence matrices, shape (units, k, k); -1 in `codes` marks a missing rating.

    Units with fewer than two ratings are not pairable and contribute zeros.
    """
    units = codes.shape[0]
    present = codes >= 0
    counts = np.zeros((units, k), dtype=np.float64)
    rows = np.repeat(np.arange(units), codes.shape[1])[present.ravel()]
    np.add.at(counts, (rows, codes.ravel()[present.ravel()]), 1.0)
    m = counts.sum(axis=1)
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)[None]
    with np.errstate(invalid="ignore", divide="ignore"):
        o = pairs / (m - 1.0)[:, None, None]
    return np.where((m >= 2)[:, None, None], o, 0.0)


def _delta(totals: Array, scale: str) -> Array:
    k = totals.shape[-1]
    if scale == "nominal":
        return np.broadcast_to(1.0 - np.eye(k), (*totals.shape[:-1], k, k))
    # ordinal: squared count of values lying between c and k, each end counted half
    s = np.cumsum(totals, axis=-1)
    return (s[..., None, :] - s[..., :, None] + (totals[..., :, None] - totals[..., None, :]) / 2.0) ** 2


def alpha_from_coincidence(o: npt.ArrayLike, scale: str) -> Array:
    """Alpha from coincidence matrices of shape (..., k, k); NaN where it is undefined (one value only)."""
    o = np.asarray(o, dtype=np.float64)
    totals = o.sum(axis=-1)
    n = totals.sum(axis=-1)
    delta = _delta(totals, scale)
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (totals[..., :, None] * totals[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (n - 1.0) * observed / expected
    return np.where(np.isclose(expected, 0.0, atol=1e-12) | (n < 2), np.nan, out)


def krippendorff_alpha(codes: npt.NDArray[np.int64], k: int, *, scale: str = "nominal") -> float:
    """Krippendorff's alpha over all units.

    Parameters
    ----------
    codes:
        Units × raters label codes 0..k-1, -1 where a rater gave no rating.
    k:
        Number of labels (ordinal: codes are ranks).
    scale:
        "nominal" or "ordinal".

    Returns
    -------
    Alpha, or NaN when fewer than two pairable values or only one label occurs.
    """
    return float(alpha_from_coincidence(unit_coincidences(codes, k).sum(axis=0), scale))


def bootstrap_alpha(
    per_unit: Array, scale: str, *, n_boot: int, seed: int, chunk_elements: int = CHUNK_ELEMENTS
) -> Array:
    """Alpha on `n_boot` resamples of the units (with replacement), drawn a chunk at a time.

    Memory is bounded by a constant times the number of units, and the result does not depend on
    `chunk_elements` (`resample_chunks`).
    """
    units, k, _ = per_unit.shape
    flat_units = per_unit.reshape(units, k * k)
    o = np.empty((n_boot, k * k), dtype=np.float64)
    done = 0
    for idx in resample_chunks(units, n_boot, seed, chunk_elements=chunk_elements):
        c = idx.shape[0]
        flat = (idx + (np.arange(c) * units)[:, None]).ravel()
        weights = np.bincount(flat, minlength=c * units).reshape(c, units).astype(np.float64)
        o[done : done + c] = weights @ flat_units
        done += c
    return alpha_from_coincidence(o.reshape(n_boot, k, k), scale)
