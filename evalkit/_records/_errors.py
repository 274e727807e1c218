"""The error raised when an input file has problems: every problem, each located."""

from __future__ import annotations

from evalkit.errors import EvalkitError, Problem


class RecordsError(EvalkitError):
    """An input file has problems; `problems` lists all of them, not only the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} found"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in self.problems))
