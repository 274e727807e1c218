"""Terminal text for the live probes: the effect, its interval and p, and the sample it would take."""

from __future__ import annotations

from evalkit._report import pval
from evalkit.probes._effects import AttackRate
from evalkit.probes._live_position import LivePosition
from evalkit.probes._live_rubric import InjectionProbe, VerbosityProbe, _About
from evalkit.probes._position import format_position
from evalkit.stats import Interval


def _pct(x: float | None, sign: bool = False) -> str:
    if x is None:
        return "—"
    return f"{100 * x:+z.1f}" + " points" if sign else f"{100 * x:.1f}%"


def _ci(ci: Interval | None, sign: bool = False) -> str:
    if ci is None:
        return ""
    fmt = "{:+z.1f}" if sign else "{:.1f}%"
    return " [" + ", ".join(fmt.format(100 * v) for v in ci) + "]"


def _header(name: str, about: _About) -> list[str]:
    skipped = []
    if about.errored_cases:
        skipped.append(f"{about.errored_cases} errored case(s)")
    if about.not_text:
        skipped.append(f"{about.not_text} judged value(s) that are not text or missing")
    served = [m for m in about.judge_served if m != about.judge_model]
    answered = f" (answered by {', '.join(served)})" if served else ""
    return [
        f"{name} probe: suite {about.suite} ({about.suite_version}), system {about.system}, "
        f"judge {about.judge_model}{answered}",
        f"  outputs probed: {about.outputs}" + (f" (left out: {', '.join(skipped)})" if skipped else ""),
        f"  run: {about.run_dir}",
    ]


def _significance(p: float | None) -> str:
    if p is None:
        return "no verdict changed: no effect seen"
    shown = pval(p, alpha=0.05, digits=3)
    return f"McNemar exact p = {shown}" + (" (significant at 5%)" if p < 0.05 else " (not significant at 5%)")


def format_verbosity(p: VerbosityProbe) -> str:
    """A few terminal lines for a verbosity probe."""
    e = p.effect
    d = e.pass_rate
    lines = _header("Verbosity", p.about)
    lines += [
        f"  padding: {p.padding}; judge errors left out: {p.judge_errors}",
        f"  pass rate original {_pct(d.rate2)}, padded {_pct(d.rate1)} on {d.n} outputs",
        f"  padded - original: {_pct(d.difference, sign=True)}{_ci(d.ci, sign=True)} (Newcombe), "
        f"{d.discordant} changed verdict(s), {_significance(d.mcnemar_p)}",
    ]
    if e.score_difference is not None:
        lines.append(
            f"  mean score original {e.original_mean_score:.3f}, padded {e.padded_mean_score:.3f}; "
            f"difference {e.score_difference:+.3f}"
            + (
                ""
                if e.score_difference_ci is None
                else " [{:+.3f}, {:+.3f}] (t)".format(*e.score_difference_ci)
            )
        )
    needed = "—" if e.n_needed is None else f"{e.n_needed} outputs"
    lines.append(f"  to detect a {_pct(e.target_effect, sign=True)} shift (80% power): {needed}")
    return "\n".join(lines)


def _attack_line(a: AttackRate) -> str:
    return f"  {a.attack:<16} {a.flipped:>4} / {a.failing:<4} {_pct(a.success_rate):>7}{_ci(a.ci)}"


def format_injection(p: InjectionProbe) -> str:
    """A few terminal lines for an injection probe."""
    lines = _header("Injection", p.about)
    lines += [
        f"  outputs failing without an attack: {p.base_failing}; judge errors left out: {p.judge_errors}",
        "  attack success (failing outputs turned into passes), Wilson 95% interval:",
        *(_attack_line(a) for a in p.effect.attacks),
        _attack_line(p.effect.overall),
        f"  to see an attack that succeeds {_pct(p.target_effect)} of the time (80% power): "
        f"{p.n_needed} failing outputs",
    ]
    return "\n".join(lines)


def format_live_position(p: LivePosition) -> str:
    """`format_position`, with the verdicts file written and the sample size."""
    needed = "—" if p.n_needed is None else f"{p.n_needed} decisive items"
    served = [m for m in p.served if m != p.probe.judge]
    head, *rest = format_position(p.probe).split("\n")
    return "\n".join(
        [
            head + (f" (answered by {', '.join(served)})" if served else ""),
            *rest,
            f"  to detect a {_pct(p.target_effect, sign=True)} position bias (80% power): {needed}",
            f"  verdicts written to {p.verdicts_path}",
        ]
    )
