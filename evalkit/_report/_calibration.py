"""Whether the judge's verdicts can be trusted, as the report shows it.

The report does not read calibration records or labels itself: the front door builds a `JudgeTrust` with
``evalkit.calibration.judge_trust`` and passes it in; this module only renders it.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from evalkit._report._format import pct

if TYPE_CHECKING:
    from evalkit.calibration import JudgedCheck, JudgeTrust, TrustState

TRUST_CSS = """
.badge{display:inline-block;border-radius:3px;padding:.05rem .45rem;font-size:.85rem;font-weight:600;
vertical-align:middle;white-space:nowrap}
.b-calibrated{background:#eafaf1;color:#1e8449;border:1px solid #1e8449}
.b-uncalibrated,.b-stale,.b-unknown{background:#fff3e0;color:#a04000;border:1px solid #d35400}
.trust{margin:.6rem 0}.trust p{margin:.3rem 0}.trust .meta{font-size:13px}
"""

HOW_TO_LABEL = (
    "draw outputs to label with `evalkit review sample RUN --n 30 --out {labels}/review.jsonl --rater NAME`, "
    "label them in notebooks/03_calibrate_judge.ipynb, then `evalkit calibrate RUN --labels FILE`"
)


def _interval(c: JudgedCheck) -> str:
    return f"{pct(c.ci_low)}–{pct(c.ci_high)}"


def _too_few(c: JudgedCheck) -> str | None:
    """Why a PPI++ check shows no corrected rate: below `PPI_MIN_LABELS` its figures are the labels' own."""
    if c.method != "ppi++":
        return None
    from evalkit.calibration import (
        PPI_MIN_LABELS,
    )  # only here: a run with no labels never imports calibration

    if c.n_labelled >= PPI_MIN_LABELS:
        return None
    return (
        f"too few labels for a corrected rate: {PPI_MIN_LABELS} needed, {c.n_labelled} given; "
        "the human-only Wilson interval is shown"
    )


def _corrected_text(c: JudgedCheck, confidence: float) -> str:
    level = f"{round(100 * confidence)}%"
    why_not = _too_few(c)
    if why_not:
        return f"{why_not}: human rate {pct(c.corrected)} {level} CI {_interval(c)} on {c.n_labelled}"
    if c.method == "human":
        return f"every output labelled: human rate {pct(c.corrected)} {level} CI {_interval(c)} on {c.n_labelled}"
    lam = "" if c.lam is None else f", lambda {c.lam:.2f}"
    left = f" ({c.note})" if c.note else ""
    return (
        f"corrected (PPI++, {c.n_labelled} labelled{lam}) {pct(c.corrected)} {level} CI {_interval(c)}{left}"
    )


def _no_labels(trust: JudgeTrust) -> str:
    if trust.labels_stale and not trust.labels_joined:
        return f"no labels match this run's outputs ({trust.labels_stale} stale: the outputs changed since)"
    return "no labels match this run's outputs" if trust.labels else "no labels"


def trust_lines(trust: JudgeTrust | None) -> list[str]:
    """The judge's state in one line, then one line per judged check that has a corrected rate.

    Parameters
    ----------
    trust: from ``evalkit.calibration.judge_trust`` (None: the run has no judged check).

    Returns
    -------
    The lines, indented as the summary's; none when there is nothing to say.
    """
    if trust is None or trust.quiet:
        return []
    head = f"  {trust.badge}: {trust.reason}"
    shown = [c for c in trust.checks if c.method]
    if not shown and trust.state != "not required":
        head += f"; corrected pass rate: {_no_labels(trust)}"
    lines = [head, *(f"    {p}" for p in trust.problems)]
    for c in shown:
        mark = "" if c.state in ("calibrated", "not required") else f", {c.state}"
        lines.append(
            f"    {c.check} (judge{mark}): judge only {pct(c.judge_only_rate)} on {c.verdicts}; "
            f"{_corrected_text(c, trust.confidence)}"
        )
    return lines


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def trust_badge(trust: JudgeTrust | None, state: TrustState | None = None) -> str:
    """A badge of the judge's state (or of `state`), for beside a rate; empty when nothing needs saying."""
    if trust is None or trust.quiet:
        return ""
    shown = state or trust.state
    if shown == "not required":
        return ""
    word = f"judge {shown}" if state is None else shown
    return f'<span class="badge b-{shown.replace(" ", "-")}">{_e(word)}</span>'


def trust_html(trust: JudgeTrust | None) -> str:
    """The judge's state and each judged check's judge-only and corrected pass rates, as an HTML block."""
    if trust is None or trust.quiet:
        return ""
    level = f"{round(100 * trust.confidence)}%"
    state = trust_badge(trust) or f'<span class="meta">{_e(trust.badge)}</span>'
    parts = [f'<div class="trust" id="judge-trust"><p>{state} {_e(trust.reason)}</p>']
    rows = []
    for c in trust.checks:
        # only a check whose rate is not to be trusted is marked; a calibrated one needs no badge of its own
        mark = "" if c.state == "calibrated" else trust_badge(trust, c.state)
        judge = f"{pct(c.judge_only_rate)} <small>({c.verdicts} cases)</small> {mark}".rstrip()
        why_not = _too_few(c)
        if why_not:
            corrected = f"{pct(c.corrected)} ({level} CI {_interval(c)}) <small>{_e(why_not)}</small>"
        elif c.method:
            label = "human rate, every output labelled" if c.method == "human" else "PPI++"
            left = f"; {c.note}" if c.note else ""
            corrected = (
                f"<b>{pct(c.corrected)}</b> ({level} CI {_interval(c)}) <small>{_e(label + left)}</small>"
            )
        else:
            corrected = f"<i>{_e(c.note or 'no labels')}</i>"
        rows.append(
            "<tr>"
            f"<td>{_e(c.check)}</td><td>{judge}</td><td>{corrected}</td>"
            f'<td class="num">{c.n_labelled}</td>'
            f'<td class="num">{"—" if c.lam is None or why_not else f"{c.lam:.2f}"}</td>'
            f'<td class="num">{"—" if c.kappa is None else f"{c.kappa:.3f}"}</td>'
            "</tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("judged check", "judge-only pass rate", "corrected pass rate", "labelled", "λ", "kappa")
    )
    parts.append(
        f'<table id="judged-checks"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    if any(c.method == "ppi++" for c in trust.checks):
        parts.append(
            '<p class="meta">Corrected: the judge\'s verdict on every case (first repeat; a case the cascade '
            "stopped before the judge counts as a fail), corrected by the human labels of the same outputs, joined "
            "by case, check and output hash (PPI++, Angelopoulos et al. 2023; λ is how much it leans on the "
            "judge, 0 the labels alone). It assumes the labelled outputs are a random sample of the run's.</p>"
        )
    if not any(c.method for c in trust.checks):
        where = trust.labels_dir or "the suite's labels/ folder"
        found = "; ".join(trust.labels) if trust.labels else f"no labels files in {where}"
        parts.append(
            f"<p>No corrected pass rate: {_e(_no_labels(trust))} ({_e(found)}). To get labels: "
            f"{_e(HOW_TO_LABEL.format(labels=where))}.</p>"
        )
    elif trust.labels:
        parts.append(
            f'<p class="meta">Labels: {_e("; ".join(trust.labels))} — {trust.labels_read} read, '
            f"{trust.labels_joined} match this run's outputs, {trust.labels_stale} stale (output changed), "
            f"{trust.labels_unmatched} not in the run.</p>"
        )
    parts.extend(f'<p class="warn">{_e(p)}</p>' for p in trust.problems)
    parts.append("</div>")
    return "".join(parts)
