"""pyproject.toml and environment.yml list the same packages at the same minimum versions."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$")


def _parse(spec: str) -> tuple[str, str]:
    match = _REQ.match(spec)
    assert match, spec
    # an extra (moto[server]) has no conda spelling: conda-forge's package brings what the extra adds
    rest = re.sub(r"^\[[^\]]*\]", "", match.group(2).replace(" ", ""))
    return match.group(1).lower().replace("_", "-"), rest


def pyproject_packages() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    specs = list(data["project"]["dependencies"])
    for extra in data["project"]["optional-dependencies"].values():
        specs.extend(extra)
    return dict(_parse(s) for s in specs)


def conda_packages() -> dict[str, str]:
    out: dict[str, str] = {}
    in_deps = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        if not in_deps or not line.startswith("  - ") or line.strip() == "- pip:":
            continue
        name, version = _parse(line.strip()[2:])
        if name not in ("python", "pip"):
            out[name] = version
    return out


def test_environment_yml_matches_pyproject() -> None:
    pip, conda = pyproject_packages(), conda_packages()
    assert set(conda) == set(pip), (
        f"only in pyproject: {set(pip) - set(conda)}; only in environment.yml: {set(conda) - set(pip)}"
    )
    drift = {n: (pip[n], conda[n]) for n in pip if pip[n] != conda[n]}
    assert not drift, f"version specifiers differ (pyproject, environment.yml): {drift}"


def test_parser_sees_every_package() -> None:
    # guards the guard: a parser that read nothing would make the comparison above vacuous
    assert {"anthropic", "polars", "nbval", "scipy"} <= set(conda_packages())
