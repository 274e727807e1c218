"""The ``evalkit`` command."""

from evalkit._lazy import attach
from evalkit.cli._main import main

__getattr__, __dir__, __all__ = attach(__name__, __file__)
