"""Names a package exports but imports only when first used, so `import evalkit` stays fast."""

from __future__ import annotations

import importlib
from collections.abc import Mapping


def load(package: str, names: Mapping[str, str], name: str) -> object:
    """The attribute `name` of `package`, imported from the module `names` maps it to."""
    try:
        module = names[name]
    except KeyError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), name)
