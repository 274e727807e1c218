"""Located problems in user input, and the one exception that carries all of them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, located as precisely as we can."""

    path: str
    line: int | None
    field: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        text = f"{where}: {self.field}: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


class EvalkitError(Exception):
    """Base class for errors evalkit reports to a user."""


class SuiteValidationError(EvalkitError):
    """A suite failed validation; `problems` lists every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(self._summary())

    def _summary(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} found"
        return head + ":\n" + "\n".join(f"  {p}" for p in self.problems)


def clip(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"
