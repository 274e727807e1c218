"""The cases two runs both answered, as pairs to judge, and those their code checks already decide."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import polars as pl

    from evalkit.suite import Case, Suite


@dataclass(frozen=True)
class CasePair:
    """One case both runs answered: its input, each side's output (first repeat), and the criteria."""

    case_id: str
    slice: str
    input: Any
    output_a: Any
    output_b: Any
    criteria: tuple[str, ...]
    decided_by_code: str | None = None
    """"A" or "B" when one side failed a code check and the other passed them all (no judge call), else None."""


def _outputs(rows: pl.DataFrame) -> dict[str, tuple[Any, bool, str]]:
    """Per case, from its first repeat: the output (None when it has none), whether every code (non-judge)
    check passed, and the slice."""
    import polars as pl

    first = rows.filter(pl.col("repeat") == pl.col("repeat").min().over("case_id"))
    out: dict[str, tuple[Any, bool, str]] = {}
    for r in first.iter_rows(named=True):
        cid = r["case_id"]
        output, ok, slice_name = out.get(cid, (None, True, str(r.get("slice") or "")))
        if r.get("output") is not None and output is None:
            output = json.loads(r["output"])
        if r.get("tier") != "judge" and r.get("status") in ("fail", "error"):
            ok = False
        out[cid] = (output, ok, slice_name)
    return out


def _criteria(case: Case | None, check: str | None, given: tuple[str, ...]) -> tuple[str, ...]:
    if given:
        return given
    if case is None:
        return ()
    judged = [c for c in case.checks if getattr(c, "kind", None) == "judge"]
    if check is not None:
        judged = [c for c in judged if check in (c.name, c.label)]
    return tuple(r for c in judged for r in getattr(c, "rubric", ()))


def _field(case: Case | None, check: str | None) -> str | None:
    """The output field `check` judges on this case, if it names one."""
    if case is None or check is None:
        return None
    return next((c.field for c in case.checks if c.kind == "judge" and check in (c.name, c.label)), None)


def case_pairs(
    rows_a: pl.DataFrame,
    rows_b: pl.DataFrame,
    *,
    suite: Suite | None = None,
    check: str | None = None,
    criteria: tuple[str, ...] = (),
) -> list[CasePair]:
    """Every case both runs answered (an output on each side), in case-id order.

    The criteria are the case's judge checks' rubric (only `check`'s when given, and only the output field it
    judges when it judges one), or `criteria` when given. Each side's first repeat is compared.
    A case where one side fails a code check and the other passes every one is decided for the latter.
    """
    a, b = _outputs(rows_a), _outputs(rows_b)
    if check is not None and suite is not None:
        names = {
            n for c in suite.cases for x in c.checks if x.kind == "judge" for n in (x.name, x.label) if n
        }
        if check not in names:
            raise EvalkitError(
                f"--check {check}: suite {suite.name} has no judge check of that name"
                + (
                    f" (its judge checks: {', '.join(sorted(names))})"
                    if names
                    else " (it has no judge checks)"
                )
            )
    cases = {c.id: c for c in suite.cases} if suite is not None else {}
    pairs = []
    for cid in sorted(set(a) & set(b)):
        (out_a, ok_a, slice_name), (out_b, ok_b, _) = a[cid], b[cid]
        if out_a is None or out_b is None:
            continue
        decided = None if ok_a == ok_b else ("A" if ok_a else "B")
        case = cases.get(cid)
        crit = _criteria(case, check, criteria)
        field = _field(case, check)
        if field is not None:  # the check judges one field of the output: so does the comparison
            from evalkit.graders import get_field, is_missing

            out_a, out_b = get_field(out_a, field), get_field(out_b, field)
            out_a, out_b = (None if is_missing(v) else v for v in (out_a, out_b))
        pairs.append(CasePair(cid, slice_name, case.input if case else None, out_a, out_b, crit, decided))
    return pairs
