"""The ``evalkit`` command."""

from evalkit.cli._main import main

__all__ = [
    "main",
]
