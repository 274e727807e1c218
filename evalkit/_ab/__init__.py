"""Pairwise A/B: is run B better than run A, by a pairwise judge asked in both orders (``evalkit ab``)."""

from typing import TYPE_CHECKING

from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._ab._bt import Ranking, fit, rank
    from evalkit._ab._compare import ABResult, ab
    from evalkit._ab._pairs import CasePair, case_pairs
    from evalkit._ab._stats import METHOD, tally

__getattr__, __dir__, __all__ = attach(__name__, __file__)
