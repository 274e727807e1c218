"""The gate's rule: how far a paired pass rate may fall, and whether a drop must also be significant."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit._report import pts, pval
from evalkit.errors import EvalkitError
from evalkit.stats import PairedComparison

ALPHA = 0.05
DEFAULT_MAX_DROP = 0.02
# Float subtraction leaves dust: 0.80 - 0.78 is 0.0200000000000000178; a drop equal to the limit passes.
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class GateDecision:
    """Whether the gate failed, and the numbers it decided on."""

    failed: bool
    drop: float
    max_drop: float
    require_significant: bool
    p: float
    alpha: float
    reason: str
    unverified: int = 0
    """Baseline cases the run could not verify (errored, unscored, missing)."""
    allow_unscored: int = 0
    allow_version_change: bool = False


def decide(
    paired: PairedComparison,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    alpha: float = ALPHA,
) -> GateDecision:
    """Fail when the pass rate drops by more than ``max_drop``; with ``require_significant``, only when
    McNemar's exact p is also below ``alpha``."""
    if paired.n == 0:
        raise EvalkitError("the run and the baseline share no scored case; there is nothing to gate on")
    drop = -paired.diff
    p = paired.mcnemar_exact_p
    too_far = drop > max_drop + _TOLERANCE
    significant = p < alpha
    failed = too_far and (significant or not require_significant)
    drop_text = f"{100 * drop:.1f} pts"
    limit = f"{100 * max_drop:.1f} pts"
    if failed:
        why = f"FAIL: the pass rate dropped {drop_text}, more than the allowed {limit}"
        if require_significant:
            why += f", and McNemar's exact test calls the drop significant (p = {pval(p)} < {alpha:g})"
    elif too_far:
        why = (
            f"PASS: the pass rate dropped {drop_text}, more than the allowed {limit}, but McNemar's exact "
            f"test does not call it significant (p = {pval(p)} >= {alpha:g}), and --require-significant is set"
        )
    elif drop > 0:
        why = f"PASS: the pass rate dropped {drop_text}, within the allowed {limit}"
    else:
        why = f"PASS: the pass rate changed {pts(paired.diff)} (allowed drop {limit})"
    return GateDecision(failed, drop, max_drop, require_significant, p, alpha, why)
