"""The live position probe: a pairwise judge asked in both orders, its verdicts written as a pairwise verdicts file.

The pairs come from a pairs file (JSONL: ``item``, ``output_a``, ``output_b``, optional ``input`` and
``criteria``) or from a suite run against two systems (each judged check's output of the one against the
other's, the check's rubric as the criteria). Every verdict goes through the response cache, so a rerun is free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit.errors import EvalkitError, JudgeError, Problem, RecordsError
from evalkit.probes._live import LiveOptions, parallel, run_for_outputs
from evalkit.probes._position import PositionProbe, position_probe
from evalkit.probes._verdicts import write_verdicts
from evalkit.stats import mcnemar_cases_needed

if TYPE_CHECKING:
    from evalkit.suite import JudgeSettings

_PAIR_FIELDS = ("item", "input", "output_a", "output_b", "criteria")


@dataclass(frozen=True)
class Pair:
    """Two outputs for the same input, A and B in the caller's labels, and what to judge them on."""

    item: str
    input: Any
    output_a: Any
    output_b: Any
    criteria: tuple[str, ...] = ()


def is_pairs_file(path: str | Path) -> bool:
    """Whether `path` is a pairs file (a JSONL file whose first record has output_a) rather than a suite."""
    import json

    p = Path(path)
    if not p.is_file():
        return False
    with p.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return False
                return isinstance(first, dict) and "output_a" in first
    return False


def read_pairs(path: str | Path) -> list[Pair]:
    """Read a pairs file; every bad line is reported at once, with its place (a `RecordsError`)."""
    from evalkit._records import read_jsonl

    problems: list[Problem] = []
    pairs: list[Pair] = []
    seen: dict[str, int] = {}
    where = str(path)
    for line, obj in read_jsonl(path, problems):
        bad = False
        for name in ("item", "output_a", "output_b"):
            if name not in obj:
                problems.append(Problem(where, line, name, "missing", f'add "{name}"'))
                bad = True
        if "item" in obj and (not isinstance(obj["item"], str) or not obj["item"].strip()):
            problems.append(Problem(where, line, "item", "must be a non-empty string", "quote the item id"))
            bad = True
        criteria = obj.get("criteria", [])
        if not isinstance(criteria, list) or not all(isinstance(c, str) and c.strip() for c in criteria):
            problems.append(
                Problem(where, line, "criteria", "must be a list of non-empty strings", "or leave it out")
            )
            bad = True
        for name in sorted(set(obj) - set(_PAIR_FIELDS)):
            problems.append(
                Problem(where, line, name, "unknown field", f"a pair has only {', '.join(_PAIR_FIELDS)}")
            )
            bad = True
        if bad:
            continue
        if obj["item"] in seen:
            problems.append(
                Problem(where, line, "item", f"item {obj['item']!r} is also on line {seen[obj['item']]}", "")
            )
            continue
        seen[obj["item"]] = line
        pairs.append(Pair(obj["item"], obj.get("input"), obj["output_a"], obj["output_b"], tuple(criteria)))
    if problems:
        raise RecordsError(problems)
    if not pairs:
        raise EvalkitError(f"{where}: no pairs in the file; give one JSON object per line")
    return pairs


def suite_pairs(
    suite: Any, system: Any, against: Any, *, options: LiveOptions | None = None
) -> tuple[list[Pair], JudgeSettings]:
    """Pairs from `suite` run against two systems: per judged check, `system`'s text (A) and `against`'s (B)."""
    first = run_for_outputs(suite, system, options=options, judge=False)
    second = run_for_outputs(first.suite, against, options=options, judge=False)
    theirs = {o.item: o.text for o in second.outputs}
    pairs = [
        Pair(o.item, o.case.input, o.text, theirs[o.item], tuple(o.check.rubric))
        for o in first.outputs
        if o.item in theirs
    ]
    if not pairs:
        raise EvalkitError(f"suite {first.suite.name}: no judged check has a text output from both systems")
    return pairs, first.suite.config.judge


@dataclass
class LivePosition:
    """The position probe of a live pairwise judge: the probe, its verdicts file and the sample size."""

    probe: PositionProbe
    verdicts_path: Path
    verdicts: pl.DataFrame
    target_effect: float
    n_needed: int | None
    served: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": "position",
            "verdicts": str(self.verdicts_path),
            "target_effect": self.target_effect,
            "n_needed": self.n_needed,
            "judge_served": self.served,
            **self.probe.to_json(),
        }


def judge_pairs(
    pairs: list[Pair],
    *,
    settings: JudgeSettings | None = None,
    options: LiveOptions | None = None,
    client: Any = None,
    judge_name: str | None = None,
    served: set[str] | None = None,
) -> pl.DataFrame:
    """Every pair judged in both orders by the pairwise judge: a pairwise verdicts frame (winner in A/B labels).

    The client is built as a run's is (`Client` with the options' concurrency and retries, base URL and key
    from the environment) unless one is given; a malformed verdict after its retry is a null winner.
    `served`, when given, collects the model ids the replies named (a simulated judge names itself).
    """
    from evalkit._cache import ResponseCache
    from evalkit.graders import PairwiseJudge
    from evalkit.suite import JudgeSettings

    opts = options or LiveOptions()
    chosen = settings or JudgeSettings()
    if client is None:
        from evalkit._client import Client

        client = Client(max_concurrency=opts.concurrency, max_retries=opts.max_retries, timeout=120.0)
    cache = ResponseCache(opts.cache_dir, mode=opts.cache_mode)  # type: ignore[arg-type]
    judge = PairwiseJudge(client=client, settings=chosen, cache=cache)
    name = judge_name or chosen.model
    served = served if served is not None else set()

    def both(pair: Pair) -> list[dict[str, Any]]:
        winners: tuple[str | None, str | None]
        try:
            result = judge.compare(
                pair.input, pair.output_a, pair.output_b, list(pair.criteria), label=f"pair {pair.item}"
            )
        except JudgeError:  # no usable verdict in one order: both are missing, and counted as such
            winners = (None, None)
        else:
            # in the A-first order the shown labels are the caller's; the B-first verdict comes mapped back
            winners = (result.raw[0]["winner"], result.raw[1]["as_caller"])
            served.update(str(r["model"]) for r in result.raw if r.get("model"))
        return [
            {"item": pair.item, "judge": name, "shown_first": first, "winner": w}
            for first, w in zip(("A", "B"), winners, strict=True)
        ]

    rows = [r for pair_rows in parallel(both, pairs, concurrency=opts.concurrency) for r in pair_rows]
    return pl.DataFrame(
        rows,
        schema={"item": pl.String, "judge": pl.String, "shown_first": pl.String, "winner": pl.String},
        orient="row",
    )


def discordant_share(verdicts: pl.DataFrame) -> float:
    """On items decisive in both orders, the share whose winner changed with the order."""
    wide = verdicts.filter(pl.col("winner").is_not_null() & (pl.col("winner") != "tie")).pivot(
        on="shown_first", index="item", values="winner", aggregate_function="first"
    )
    if "A" not in wide.columns or "B" not in wide.columns:
        return 0.0
    both = wide.drop_nulls(["A", "B"])
    return both.filter(pl.col("A") != pl.col("B")).height / both.height if both.height else 0.0


def position_live(
    source: str | Path,
    *,
    system: Any = None,
    against: Any = None,
    out: str | Path | None = None,
    options: LiveOptions | None = None,
    settings: JudgeSettings | None = None,
    confidence: float = 0.95,
    target_effect: float = 0.05,
) -> LivePosition:
    """Run the pairwise judge in both orders on `source`'s pairs, write the verdicts file, and probe it.

    Parameters
    ----------
    source:
        A pairs file, or a suite (folder or cases file), whose `system` and `against` outputs are paired.
    system, against:
        For a suite: the two systems (system None: the suite's default; against is required).
    out:
        Where to write the pairwise verdicts file (default ``<runs_dir>/probes/position-<name>.jsonl``).
    options:
        Run directory root, cache and concurrency.
    settings:
        The judge's settings (default: the suite's judge; for a pairs file, evalkit's default judge).
    confidence, target_effect:
        Interval coverage, and the position bias the sample size is given for (McNemar, 80% power).

    Returns
    -------
    A `LivePosition`.
    """
    opts = options or LiveOptions()
    path = Path(source)
    if is_pairs_file(path):
        if against is not None or system is not None:
            raise EvalkitError(f"{path} is a pairs file: --system and --against are for a suite")
        pairs, chosen = read_pairs(path), settings
    else:
        if against is None:
            raise EvalkitError(
                f"{path}: a suite's position probe compares two systems' outputs; name the second with "
                "--against (e.g. --against baseline), or give a pairs file"
            )
        pairs, suite_settings = suite_pairs(path, system, against, options=opts)
        chosen = settings or suite_settings
    served: set[str] = set()
    verdicts = judge_pairs(pairs, settings=chosen, options=opts, served=served)
    target = (
        Path(out)
        if out is not None
        else opts.runs_dir / "probes" / f"position-{path.stem or path.name}.jsonl"
    )
    if target.name == "position-cases.jsonl":  # a suite given by its cases file: name it by its folder
        target = target.with_name(f"position-{path.parent.name}.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_verdicts(target, verdicts)
    probe = position_probe(verdicts, confidence=confidence)
    share = discordant_share(verdicts)
    needed = (
        mcnemar_cases_needed(target_effect, discordant=max(share, abs(target_effect)), alpha=1 - confidence)
        if share > 0
        else None
    )
    return LivePosition(probe, target, verdicts, target_effect, needed, sorted(served))
