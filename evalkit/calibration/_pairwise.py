"""Two-rater agreement from a confusion matrix: percent agreement, Cohen's kappa, Scott's pi, weighted kappa.

Every function takes counts of shape (..., K, K) so one call serves the point estimate and a whole
stack of bootstrap replicates; undefined values (no items, or chance agreement of 1) come back as NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from evalkit.stats import CHUNK_ELEMENTS, resample_chunks

Array = npt.NDArray[np.float64]


def confusion(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], k: int) -> npt.NDArray[np.int64]:
    """Counts of (a label, b label): rows are rater a, columns rater b.

    Parameters
    ----------
    a, b:
        Label codes 0..k-1 of the same items, aligned.
    k:
        Number of labels.

    Returns
    -------
    A k×k integer matrix.
    """
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k)


def _shares(counts: npt.ArrayLike) -> tuple[Array, Array, Array]:
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum(axis=(-2, -1), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = c / n
    return p, p.sum(axis=-1), p.sum(axis=-2)


def _ratio(num: Array, den: Array) -> Array:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    # chance agreement of 1 leaves nothing to beat: the coefficient is undefined, not ±inf
    return np.where(np.isclose(den, 0.0, atol=1e-15), np.nan, out)


def percent_agreement(counts: npt.ArrayLike) -> Array:
    """Share of items on which the two raters gave the same label."""
    p, _, _ = _shares(counts)
    return np.asarray(np.trace(p, axis1=-2, axis2=-1), dtype=np.float64)


def cohen_kappa(counts: npt.ArrayLike) -> Array:
    """Cohen's kappa (unweighted): chance agreement from each rater's own label shares."""
    p, pa, pb = _shares(counts)
    po = np.trace(p, axis1=-2, axis2=-1)
    pe = (pa * pb).sum(axis=-1)
    return _ratio(po - pe, 1.0 - pe)


def scott_pi(counts: npt.ArrayLike) -> Array:
    """Scott's pi: chance agreement from the two raters' pooled label shares."""
    p, pa, pb = _shares(counts)
    po = np.trace(p, axis1=-2, axis2=-1)
    pe = (((pa + pb) / 2.0) ** 2).sum(axis=-1)
    return _ratio(po - pe, 1.0 - pe)


def quadratic_kappa(counts: npt.ArrayLike) -> Array:
    """Cohen's kappa with quadratic weights (i - j)² on the label ranks, for ordinal labels."""
    p, pa, pb = _shares(counts)
    k = p.shape[-1]
    ranks = np.arange(k, dtype=np.float64)
    w = (ranks[:, None] - ranks[None, :]) ** 2
    observed = (w * p).sum(axis=(-2, -1))
    expected = (w * (pa[..., :, None] * pb[..., None, :])).sum(axis=(-2, -1))
    return 1.0 - _ratio(observed, expected)


def bootstrap_counts(
    a: npt.NDArray[np.int64],
    b: npt.NDArray[np.int64],
    k: int,
    *,
    n_boot: int,
    seed: int,
    chunk_elements: int = CHUNK_ELEMENTS,
) -> npt.NDArray[np.int64]:
    """Confusion matrices of `n_boot` resamples of the items (with replacement), shape (n_boot, k, k).

    The resamples are drawn a chunk at a time (`resample_chunks`): memory is bounded by a constant times n,
    and the result does not depend on `chunk_elements`.
    """
    n = len(a)
    cell = a * k + b
    out = np.empty((n_boot, k, k), dtype=np.int64)
    done = 0
    for idx in resample_chunks(n, n_boot, seed, chunk_elements=chunk_elements):
        c = idx.shape[0]
        cells = cell[idx] + (np.arange(c) * k * k)[:, None]
        out[done : done + c] = np.bincount(cells.ravel(), minlength=c * k * k).reshape(c, k, k)
        done += c
    return out


def cohen_kappa_labels(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two aligned lists of labels; None when undefined (no items, or one label only).

    Parameters
    ----------
    a, b:
        The two raters' labels for the same items, in the same order, none missing.

    Returns
    -------
    Kappa, or None.
    """
    if len(a) != len(b):
        raise ValueError(f"the label lists differ in length ({len(a)} and {len(b)})")
    labels = sorted(set(a) | set(b), key=repr)
    code = {label: i for i, label in enumerate(labels)}
    counts = confusion(
        np.array([code[x] for x in a], dtype=np.int64),
        np.array([code[x] for x in b], dtype=np.int64),
        len(labels),
    )
    value = float(cohen_kappa(counts)) if len(a) else float("nan")
    return None if np.isnan(value) else value
