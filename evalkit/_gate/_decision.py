"""The gate's rule: how far a paired pass rate may fall, and whether a drop must also be significant.

A decision is data: the verdict and the numbers it was reached on. ``render_reason`` is the one place that puts
it into words (and names the command's options in them).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.stats import PairedComparison

ALPHA = 0.05
DEFAULT_MAX_DROP = 0.02
# Float subtraction leaves dust: 0.80 - 0.78 is 0.0200000000000000178; a drop equal to the limit passes.
_TOLERANCE = 1e-9


class GateVerdict(StrEnum):
    """What the gate decided, and on what ground."""

    PASS = "pass"
    """The pass rate held, or fell by no more than the allowed drop."""
    PASS_NOT_SIGNIFICANT = "pass_not_significant"
    """It fell by more than allowed, but require_significant is set and the paired test's p is not below alpha."""
    FAIL_DROP = "fail_drop"
    """It fell by more than allowed (and, with require_significant, significantly)."""
    FAIL_UNVERIFIED = "fail_unverified"
    """The run cannot show the pass rate held: baseline cases it could not verify, or a suite version change."""
    FAIL_UNCALIBRATED = "fail_uncalibrated"
    """The drop rule passed, but judged results are uncalibrated or stale and require_calibrated is set."""

    @property
    def failed(self) -> bool:
        return self in (GateVerdict.FAIL_DROP, GateVerdict.FAIL_UNVERIFIED, GateVerdict.FAIL_UNCALIBRATED)


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict and the numbers it decided on; ``reason`` says it in words."""

    verdict: GateVerdict
    drop: float
    """How far the paired pass rate fell, baseline minus run (negative when it rose)."""
    max_drop: float
    require_significant: bool
    p: float
    """The paired test's p: McNemar's exact test with one repeat, the sign-flip test on case pass rates with
    repeats (``test``)."""
    alpha: float
    shared: int
    """The cases both sides scored, which the drop is measured on."""
    unverified: int = 0
    """Baseline cases the run could not verify (errored, unscored, missing)."""
    allow_unscored: int = 0
    allow_version_change: bool = False
    require_calibrated: bool = False
    calibration: str | None = None
    """The judge's calibration state (calibrated, uncalibrated, stale) when the run has judged checks and the
    suite asks for calibration; None otherwise."""
    test: str = "mcnemar"
    """The paired test behind ``p``: "mcnemar" or "sign-flip" (see ``evalkit.stats.PairedComparison``)."""

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    @property
    def on_shared(self) -> GateVerdict:
        """The drop rule's verdict on the shared cases alone (PASS, PASS_NOT_SIGNIFICANT or FAIL_DROP): the
        verdict itself unless something else failed the gate."""
        if self.verdict in _RULE_VERDICTS:
            return self.verdict
        return _rule(self.drop, self.max_drop, self.p, self.alpha, self.require_significant)

    @property
    def reason(self) -> str:
        """The verdict as the gate prints it (see ``render_reason``)."""
        return render_reason(self)


_RULE_VERDICTS = (GateVerdict.PASS, GateVerdict.PASS_NOT_SIGNIFICANT, GateVerdict.FAIL_DROP)


def _rule(drop: float, max_drop: float, p: float, alpha: float, require_significant: bool) -> GateVerdict:
    if not drop > max_drop + _TOLERANCE:
        return GateVerdict.PASS
    if p < alpha or not require_significant:
        return GateVerdict.FAIL_DROP
    return GateVerdict.PASS_NOT_SIGNIFICANT


def decide(
    paired: PairedComparison,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    alpha: float = ALPHA,
) -> GateDecision:
    """Fail when the pass rate drops by more than ``max_drop``; with ``require_significant``, only when the
    paired test's p is also below ``alpha`` (McNemar's exact test with one repeat, the sign-flip test on case
    pass rates with repeats: the test the report's significance flags use)."""
    if paired.n == 0:
        raise EvalkitError("the run and the baseline share no scored case; there is nothing to gate on")
    drop = -paired.diff
    p = paired.p
    verdict = _rule(drop, max_drop, p, alpha, require_significant)
    return GateDecision(verdict, drop, max_drop, require_significant, p, alpha, paired.n, test=paired.test)


def render_reason(d: GateDecision) -> str:
    """The decision in words, as the last line of ``evalkit gate``: PASS or FAIL, and why."""
    from evalkit._report import pts, pval
    from evalkit.stats import TEST_NAMES

    limit = f"{100 * d.max_drop:.1f} pts"
    rule = d.on_shared
    test = TEST_NAMES[d.test]
    if rule is GateVerdict.FAIL_DROP:
        why = f"the pass rate dropped {100 * d.drop:.1f} pts, more than the allowed {limit}"
        if d.require_significant:
            why += f", and {test} calls the drop significant (p = {pval(d.p)} < {d.alpha:g})"
    elif rule is GateVerdict.PASS_NOT_SIGNIFICANT:
        why = (
            f"the pass rate dropped {100 * d.drop:.1f} pts, more than the allowed {limit}, but {test} does not "
            f"call it significant (p = {pval(d.p)} >= {d.alpha:g}), and --require-significant is set"
        )
    elif d.drop > 0:
        why = f"the pass rate dropped {100 * d.drop:.1f} pts, within the allowed {limit}"
    else:
        why = f"the pass rate changed {pts(-d.drop)} (allowed drop {limit})"
    on_shared = f"{'FAIL' if rule.failed else 'PASS'}: {why}"
    if d.verdict is GateVerdict.FAIL_UNVERIFIED:
        return (
            "FAIL: the run cannot show that the pass rate held (UNVERIFIED above); on the "
            f"{d.shared} cases both sides scored, {why}"
        )
    if d.verdict is GateVerdict.FAIL_UNCALIBRATED:
        return (
            f"FAIL: judged results are {d.calibration} and --require-calibrated is set; calibrate the judge "
            f"(evalkit calibrate RUN --labels FILE) or drop the option. {on_shared}"
        )
    return on_shared
