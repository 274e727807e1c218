"""Model prices, and the cost of a call from its usage.

Prices are USD per million tokens and dated (``PRICES_AS_OF``): check them against the provider's price
page before relying on a cost figure. A model that is not in the table has no known price, and its cost is
``None`` (never 0). Prompt-cache writes cost 1.25x the input price (2x for 1-hour writes), cache reads
0.1x, and Message Batches half of all of it.

Override or extend the table with a JSON or TOML file, passed to ``load_prices(path)`` or named by the
``EVALKIT_PRICES`` environment variable::

    {"as_of": "2026-12-01", "models": {"my-model": {"input": 2.0, "output": 8.0}}}

    [models.my-model]
    input = 2.0
    output = 8.0
    # cache_write, cache_write_1h and cache_read default to 1.25x, 2x and 0.1x input

A file may also map model names to prices at its top level, without ``models``.

An override of an undated alias (``claude-haiku-4-5``) also applies to the dated ids the built-in table
pins it to (``claude-haiku-4-5-20251001``, see ``PINNED_IDS``), so a call priced by the id the API answered
with gets the file's price; a file that also names the dated id gives that id its own price. An override of
a dated id applies to that id only. Prices must be finite and not negative.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError

__all__ = [
    "DEFAULT_PRICES",
    "PINNED_IDS",
    "PRICES_AS_OF",
    "PRICES_ENV_VAR",
    "ModelPrice",
    "cost_usd",
    "current_prices",
    "load_prices",
    "price_for",
    "read_price_file",
]

PRICES_AS_OF = "2026-11-01"
PRICES_ENV_VAR = "EVALKIT_PRICES"
BATCH_DISCOUNT = 0.5

_CACHE_WRITE_MULTIPLIER = 1.25
_CACHE_WRITE_1H_MULTIPLIER = 2.0
_CACHE_READ_MULTIPLIER = 0.1


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float

    @classmethod
    def from_rates(
        cls,
        input: float,
        output: float,
        *,
        cache_write: float | None = None,
        cache_read: float | None = None,
        cache_write_1h: float | None = None,
    ) -> ModelPrice:
        """A price from input and output rates; cache rates default to the usual multiples of input."""
        return cls(
            input=float(input),
            output=float(output),
            cache_write=float(cache_write if cache_write is not None else input * _CACHE_WRITE_MULTIPLIER),
            cache_read=float(cache_read if cache_read is not None else input * _CACHE_READ_MULTIPLIER),
            cache_write_1h=float(
                cache_write_1h if cache_write_1h is not None else input * _CACHE_WRITE_1H_MULTIPLIER
            ),
        )


PINNED_IDS: dict[str, tuple[str, ...]] = {}
"""Each undated alias of the built-in table -> the dated ids it stands for."""


def _pinned(dated: str, alias: str, input: float, output: float) -> dict[str, ModelPrice]:
    price = ModelPrice.from_rates(input, output)
    PINNED_IDS[alias] = (*PINNED_IDS.get(alias, ()), dated)
    return {dated: price, alias: price}


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    # from the 4.6 generation on, the model id is itself the pinned snapshot (no dated suffix)
    "claude-sonnet-4-6": ModelPrice.from_rates(3.0, 15.0),
    "claude-opus-4-6": ModelPrice.from_rates(5.0, 25.0),
    **_pinned("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 3.0, 15.0),
    **_pinned("claude-haiku-4-5-20251001", "claude-haiku-4-5", 1.0, 5.0),
    **_pinned("claude-opus-4-5-20251101", "claude-opus-4-5", 5.0, 25.0),
}
"""The built-in table, as of ``PRICES_AS_OF``: the pinned models and their undated aliases."""


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{where}: a price must be a finite number, got {value}")
    if number < 0:
        raise ValueError(f"{where}: a price cannot be negative ({value})")
    return number


def _parse_table(data: Any, source: str) -> dict[str, ModelPrice]:
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a table of model prices")
    models = data.get("models", data)
    if not isinstance(models, dict):
        raise ValueError(f"{source}: 'models' must be a table")
    table: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        if name == "as_of" and "models" not in data:
            continue
        where = f"{source}: {name}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a table with 'input' and 'output'")
        unknown = set(entry) - {"input", "output", "cache_write", "cache_read", "cache_write_1h"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        if "input" not in entry or "output" not in entry:
            raise ValueError(f"{where}: 'input' and 'output' are required")
        optional = {
            key: _number(entry[key], f"{where}.{key}")
            for key in ("cache_write", "cache_read", "cache_write_1h")
            if key in entry
        }
        table[str(name)] = ModelPrice.from_rates(
            _number(entry["input"], f"{where}.input"), _number(entry["output"], f"{where}.output"), **optional
        )
    return table


def read_price_file(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """Only the prices a JSON or TOML file names (no defaults)."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    if file.suffix.lower() == ".toml":
        data: Any = tomllib.loads(text)
    elif file.suffix.lower() == ".json":
        data = json.loads(text)
    else:
        try:
            data = json.loads(text)
        except ValueError:
            data = tomllib.loads(text)
    return _parse_table(data, str(file))


def load_prices(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """The built-in table with a JSON or TOML file's prices laid over it (the file wins).

    A file's price for an alias also replaces the built-in price of its dated ids (``PINNED_IDS``), unless
    the file prices the dated id itself.
    """
    overrides = read_price_file(path)
    table = dict(DEFAULT_PRICES)
    for alias, dated_ids in PINNED_IDS.items():
        if alias in overrides:
            table.update(dict.fromkeys(dated_ids, overrides[alias]))
    table.update(overrides)
    return table


_RECHECK_S = 1.0
"""How long a price file is trusted unchanged before it is looked at again: a stat on every call cost about 2%
of a worker's CPU, for a file that changes between runs, not during one."""

_clock = time.monotonic


@dataclass(frozen=True)
class _EnvPrices:
    """What ``EVALKIT_PRICES`` last gave: the table, or the error a bad or missing file raises on every call."""

    path: str
    checked: float
    stamp: tuple[int, int, int] | None
    table: Mapping[str, ModelPrice] | None = None
    error: str | None = None

    def result(self) -> Mapping[str, ModelPrice]:
        if self.error is not None:
            raise EvalkitError(self.error)
        assert self.table is not None
        return self.table


_env_cache: _EnvPrices | None = None
_env_lock = threading.Lock()


def _read_env_file(path: str, now: float, previous: _EnvPrices | None) -> _EnvPrices:
    fix = f"fix the file, or unset {PRICES_ENV_VAR} to use the built-in prices"
    try:
        st = os.stat(path)
    except OSError as exc:
        return _EnvPrices(path, now, None, error=f"{path} (named by {PRICES_ENV_VAR}): {exc.strerror}; {fix}")
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    if previous is not None and previous.path == path and previous.stamp == stamp:
        return _EnvPrices(path, now, stamp, previous.table, previous.error)
    try:
        return _EnvPrices(path, now, stamp, table=load_prices(path))
    except (OSError, ValueError) as exc:  # JSON and TOML decode errors are ValueErrors
        detail = exc.strerror if isinstance(exc, OSError) else str(exc)
        return _EnvPrices(path, now, stamp, error=f"{path} (named by {PRICES_ENV_VAR}): {detail}; {fix}")


def current_prices() -> Mapping[str, ModelPrice]:
    """The built-in table, overlaid with the file ``EVALKIT_PRICES`` names, if set.

    The file is read once per path and version (modification time, size, inode) and looked at again at most
    once a second, so a changed file is picked up within a second. A bad or missing file raises
    ``EvalkitError`` (naming it and the fix) on every call, before anything is sent.
    """
    global _env_cache
    path = os.environ.get(PRICES_ENV_VAR)
    if not path:
        return DEFAULT_PRICES
    now = _clock()
    cached = _env_cache
    if cached is not None and cached.path == path and now - cached.checked < _RECHECK_S:
        return cached.result()
    with _env_lock:
        cached = _env_cache
        if cached is None or cached.path != path or now - cached.checked >= _RECHECK_S:
            cached = _env_cache = _read_env_file(path, now, cached)
    return cached.result()


def price_for(model: str | None, prices: Mapping[str, ModelPrice] | None = None) -> ModelPrice | None:
    """A model's price, or None when the table does not know it."""
    if not model:
        return None
    table = current_prices() if prices is None else prices
    return table.get(model)


def _usage_value(usage: Any, name: str) -> Any:
    if isinstance(usage, Mapping):
        return usage.get(name)
    return getattr(usage, name, None)


def _tokens(usage: Any, name: str) -> int:
    value = _usage_value(usage, name)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


SIMULATED_PREFIX = "simulated-"
"""Model ids that evalkit's local server answers as (``evalkit serve``): nothing is billed for them."""


def is_simulated(model: str | None) -> bool:
    """Whether `model` is a reply of evalkit's simulated server rather than of Claude."""
    return bool(model) and str(model).startswith(SIMULATED_PREFIX)


def cost_usd(
    model: str | None,
    usage: Any,
    batch: bool = False,
    *,
    prices: Mapping[str, ModelPrice] | None = None,
) -> float | None:
    """The USD cost of one call, or None when the model's price is unknown.

    ``usage`` is the API's usage (a mapping or an object with ``input_tokens``, ``output_tokens``,
    ``cache_creation_input_tokens``, ``cache_read_input_tokens``, and optionally ``cache_creation``
    with its 5-minute and 1-hour split). ``batch`` halves the cost. ``prices`` replaces the table
    (default: ``current_prices()``).
    """
    if is_simulated(model):
        return 0.0  # a known zero: the local server bills nothing, whatever model it stands in for
    price = price_for(model, prices)
    if price is None:
        return None
    cache_write = _tokens(usage, "cache_creation_input_tokens")
    split = _usage_value(usage, "cache_creation")
    write_1h = _tokens(split, "ephemeral_1h_input_tokens") if split is not None else 0
    write_1h = min(write_1h, cache_write)
    total = (
        _tokens(usage, "input_tokens") * price.input
        + _tokens(usage, "output_tokens") * price.output
        + (cache_write - write_1h) * price.cache_write
        + write_1h * price.cache_write_1h
        + _tokens(usage, "cache_read_input_tokens") * price.cache_read
    ) / 1_000_000
    return total * BATCH_DISCOUNT if batch else total
