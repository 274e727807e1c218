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
    value = getattr(importlib.import_module(module), name)
    # kept in the package, so the next lookup is a plain attribute and not another call through __getattr__
    setattr(importlib.import_module(package), name, value)
    return value
