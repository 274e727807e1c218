"""Evals as tests: ``pytest --evalkit SUITE`` collects one test item per case, and an ``evalkit_run`` fixture.

Loaded by the ``pytest11`` entry point of an installed evalkit, or with ``-p evalkit.pytest_plugin``. Without
``--evalkit`` (or the ``evalkit_suites`` ini option) it adds only the fixture, and imports nothing heavy. See
docs/pytest.md.
"""

from evalkit._lazy import attach
from evalkit.pytest_plugin._plugin import (
    evalkit_run,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
)

__getattr__, __dir__, __all__ = attach(__name__, __file__)
