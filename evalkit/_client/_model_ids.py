"""The model ids the installed SDK knows, without importing the SDK to find out which names exist."""

from __future__ import annotations

import functools
from typing import get_args


@functools.cache
def sdk_model_ids() -> frozenset[str]:
    """The model ids the installed anthropic SDK lists (the string literals of its ``ModelParam`` type).

    The SDK is imported only when this is called: loading a suite imports this module to check its model ids,
    and a suite whose models have known prices never needs the list (importing the SDK takes 0.7 s).

    Returns:
        The ids, empty when this SDK version has no such list.
    """
    try:
        from anthropic.types.model_param import ModelParam
    except ImportError:
        return frozenset()
    return frozenset(v for arg in get_args(ModelParam) for v in get_args(arg) if isinstance(v, str))
