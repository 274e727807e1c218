"""What differs between the setups of two runs: suite version, system, prompt, models, code, judge."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from evalkit._baseline import RunInfo

# (what, RunInfo field), in the order and with the names `evalkit._baseline.run_changes` words them, so a
# changed row here reads as that line of the report: "<what>: <before> -> <after>"
_FIELDS = (
    ("suite version", "suite_version"),
    ("system", "system_name"),
    ("system prompt (hash)", "prompt_hash"),
    ("system model", "system_model"),
    ("resolved system model", "system_model_versions"),
    ("system code (hash)", "code_hash"),
    ("judge model", "judge_model"),
    ("judge prompt (hash)", "judge_prompt_hash"),
    ("resolved judge model", "judge_model_versions"),
)


def _value(info: RunInfo, field: str) -> str | None:
    value = getattr(info, field)
    if isinstance(value, tuple):  # resolved versions: sorted already; none recorded is unknown, not ""
        return ", ".join(value) or None
    return None if value is None else str(value)


def setup_changes(a: RunInfo, b: RunInfo) -> pl.DataFrame:
    """Every part of a run's setup, before (run A) and after (run B), and whether it changed.

    A side that did not record a part (a baseline system has no model; an older baseline.json no code hash)
    is not taken to have changed it, as in the report's "changed since the baseline" lines.

    Parameters
    ----------
    a, b:
        The two runs' identities (`evalkit._baseline.run_info`, or a baseline's `baseline_info`).

    Returns
    -------
    polars.DataFrame
        One row per part: what, before, after, changed (a bool). Parts: suite version, system, system prompt
        (hash), system model (requested), resolved system model, system code (hash), judge model, judge
        prompt (hash), resolved judge model.
    """
    import polars as pl

    rows = []
    for what, field in _FIELDS:
        before, after = _value(a, field), _value(b, field)
        changed = before is not None and after is not None and before != after
        rows.append({"what": what, "before": before, "after": after, "changed": changed})
    schema = {"what": pl.String, "before": pl.String, "after": pl.String, "changed": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)
