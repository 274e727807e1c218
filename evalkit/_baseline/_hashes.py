"""Per-case content hashes: which cases of a suite kept their meaning when the suite version changed."""

from __future__ import annotations

from pathlib import Path

from evalkit._hashing import content_hash
from evalkit.errors import EvalkitError
from evalkit.suite import Suite, load_suite


def case_hashes(suite: Suite) -> dict[str, str]:
    """One short hash per case id of what the suite version hashes for that case (with the output schema).

    Two cases with the same hash are scored the same way, so their verdicts compare across suite versions.
    """
    return {
        c.id: content_hash({"case": c.version_record(), "extra": suite.output_schema}, 12)
        for c in suite.cases
    }


def suite_case_hashes(suite_path: str | Path, version: str) -> dict[str, str] | None:
    """The case hashes of the suite at ``suite_path`` if it still is ``version``; None when it is not there,
    does not load, or has changed since (hashes of another version would say the wrong cases changed)."""
    try:
        suite = load_suite(suite_path)
    except (EvalkitError, OSError):
        return None
    if suite.version != version:
        return None
    return case_hashes(suite)
