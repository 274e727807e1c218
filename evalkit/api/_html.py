"""What a notebook shows for a run, a comparison and a report: small escaped HTML, no script, no CDN."""

from __future__ import annotations

import html
import math
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from evalkit._report import GateSummary, Report
    from evalkit.api._compare import RunComparison
    from evalkit.api._run import Run
    from evalkit.calibration import JudgeTrust

_CARD = (
    '<div style="font-family:system-ui,sans-serif;border:1px solid #ccd;border-radius:6px;padding:8px 12px;'
    'max-width:760px">{body}</div>'
)


def _e(x: Any) -> str:
    return html.escape(str(x))


def _pct(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def summary_card(run: Run) -> str:
    """A run's headline: suite and version, system, pass rate with interval, errors, cost, p95 latency."""
    m = run.manifest
    h = run._headline()
    rate = (
        f"<b>{_pct(h['rate'])}</b> pass ({h['passes']}/{h['n']} scored; 95% CI {_pct(h['ci_low'])} to "
        f"{_pct(h['ci_high'])})"
        if h["n"]
        else "<b>no scored case</b>"
    )
    extra = []
    if h["errors"]:
        extra.append(f"{h['errors']} errored")
    if h["not_scored"]:
        extra.append(f"{h['not_scored']} not scored")
    cost = "unknown" if h["cost"] is None else f"${h['cost']:.4f}"
    p95 = "–" if h["p95"] is None else f"{h['p95']:.2f} s"
    from evalkit._baseline import run_info
    from evalkit._report import asked_and_got

    info = run_info(m, run.checks())
    # what was asked for and, where it differs, what answered (a simulated server's model too), as the CLI says
    model = asked_and_got(m.system.get("model"), info.system_model_versions)
    judge = asked_and_got((m.judge or {}).get("model"), info.judge_model_versions) if m.judge else ""
    body = (
        f"<div><code>{_e(m.run_id)}</code> · {_e(m.status)}</div>"
        f"<div>suite <b>{_e(m.suite)}</b> version <code>{_e(m.suite_version)}</code> · system "
        f"<b>{_e(m.system.get('name'))}</b>{f' ({_e(model)})' if model else ''}"
        f"{f' · judge {_e(judge)}' if judge else ''}</div>"
        f"<div>{rate}{' · ' + _e(', '.join(extra)) if extra else ''}</div>"
        f"{_trust_line(run)}"
        f"<div>{m.cases} cases × {m.repeats} repeat(s) · cost {cost} · p95 latency {p95}</div>"
        f'<div style="color:#667">{_e(run.path)}</div>'
    )
    return _CARD.format(body=body)


def _trust_line(run: Run) -> str:
    """The judge's state and the corrected rates, one line each, when the run has judged checks."""
    trust = run.judge_trust()
    if trust is None:
        return ""
    from evalkit._report import trust_lines

    lines = [x.strip() for x in trust_lines(trust)]
    if not lines:
        return ""
    warn = trust.state not in ("calibrated", "not required")
    style = ' style="color:#a04000"' if warn else ""
    return f"<div{style}>{_e(lines[0])}</div>" + "".join(f"<div>{_e(x)}</div>" for x in lines[1:])


def comparison_card(cmp: RunComparison) -> str:
    """The paired change in a line, with what may explain it."""
    from evalkit._report import pval

    s = cmp.summary()
    diff = (
        "–"
        if s["n"] == 0
        else f"{s['diff'] * 100:+z.1f} pts (95% CI {s['ci_low'] * 100:+z.1f} to {s['ci_high'] * 100:+z.1f})"
    )
    body = (
        f"<div><code>{_e(s['run_b'])}</code> against <code>{_e(s['run_a'])}</code>, {s['n']} shared cases</div>"
        f"<div><b>{_pct(s['rate_b'])}</b> vs {_pct(s['rate_a'])}: {diff}</div>"
        f"<div>{s['pass_to_fail']} pass→fail, {s['fail_to_pass']} fail→pass · "
        f"{cmp.comparison.paired.p_label} {pval(s['p'], digits=3)}</div>"
        + "".join(f'<div style="color:#a40">{_e(w)}</div>' for w in cmp.warnings())
    )
    return _CARD.format(body=body)


class HTMLReport:
    """A run's report: displayed inline (in an isolated frame), written with `save`, printed with `text`.

    The HTML page and the text are the ones ``evalkit report`` writes and prints for the same run, baseline and
    labels.
    """

    def __init__(self, report: Report, *, gate: GateSummary | None = None, max_flipped: int = 200) -> None:
        self._report = report
        self._gate = gate
        self._max_flipped = max_flipped

    @cached_property
    def html(self) -> str:
        """The self-contained HTML page."""
        from evalkit._report import render_html

        return render_html(self._report, max_flipped=self._max_flipped, gate=self._gate)

    def text(self, *, show_failures: int | Literal["all"] = 10) -> str:
        """The report as ``evalkit report`` prints it (up to `show_failures` failing cases, or ``"all"``)."""
        from evalkit._report import format_report

        return format_report(self._report, show_failures=show_failures)

    def save(self, path: str | Path) -> Path:
        """Write the page atomically to `path`; returns the path."""
        from evalkit._fs import atomic_write_text

        target = Path(path)
        atomic_write_text(target, self.html)
        return target

    def _repr_html_(self) -> str:
        # the page brings its own CSS: an iframe keeps it from restyling the notebook
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:720px;'
            'border:1px solid #ccd"></iframe>'
        )


def report(
    run: Run,
    baseline: Run | str | Path | None,
    *,
    judge: JudgeTrust | None = None,
    gate: GateSummary | None = None,
    max_flipped: int = 200,
    compare: bool = True,
) -> HTMLReport:
    """The report of `run`, against `baseline` (or the suite's baseline.json when there is one), with the
    judge's calibration state and corrected pass rates when given."""
    from evalkit._report import build_report
    from evalkit.api._reference import reference_of

    if not compare:
        reference = None
    elif baseline is None:
        committed = run.baseline_path
        reference = reference_of(committed) if committed is not None else None
    else:
        reference = reference_of(baseline)
    built = build_report(run.manifest, run.checks(), reference, run_dir=run.path, judge=judge)
    return HTMLReport(built, gate=gate, max_flipped=max_flipped)
