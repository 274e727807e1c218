"""The price table, price files and the cost of a call."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from client_helpers import TICKET, MakeServer, Ticket, ask, client_for

from evalkit._client import (
    CallResult,
)
from evalkit._client import _pricing as pricing
from evalkit.errors import EvalkitError
from evalkit.testing import PINNED_MODEL_IDS, LocalAnthropicServer

# ---- prices ----------------------------------------------------------------------------------------------------


def test_price_table() -> None:
    assert pricing.PRICES_AS_OF == "2026-11-01"
    for dated, alias, rates in [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", (3.0, 15.0)),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5", (1.0, 5.0)),
        ("claude-opus-4-5-20251101", "claude-opus-4-5", (5.0, 25.0)),
    ]:
        price = pricing.DEFAULT_PRICES[dated]
        assert pricing.DEFAULT_PRICES[alias] == price
        assert (price.input, price.output) == rates
        assert price.cache_write == pytest.approx(rates[0] * 1.25)
        assert price.cache_read == pytest.approx(rates[0] * 0.1)


def test_cost_usd() -> None:
    usage = {
        "input_tokens": 1_000_000,
        "output_tokens": 1_000_000,
        "cache_creation_input_tokens": 1_000_000,
        "cache_read_input_tokens": 1_000_000,
    }
    assert pricing.cost_usd("claude-opus-4-5", usage) == pytest.approx(5 + 25 + 6.25 + 0.5)
    assert pricing.cost_usd("claude-opus-4-5", usage, batch=True) == pytest.approx((5 + 25 + 6.25 + 0.5) / 2)
    assert pricing.cost_usd("claude-haiku-4-5", {"input_tokens": 0, "output_tokens": 0}) == 0.0
    assert pricing.cost_usd("claude-haiku-4-5", {"input_tokens": 10, "output_tokens": None}) == pytest.approx(
        1e-5
    )
    one_hour = {
        "cache_creation_input_tokens": 1_000_000,
        "cache_creation": {"ephemeral_1h_input_tokens": 1_000_000},
    }
    assert pricing.cost_usd("claude-sonnet-4-5", one_hour) == pytest.approx(6.0)
    assert pricing.cost_usd("gpt-unknown", usage) is None
    assert pricing.cost_usd(None, usage) is None


def test_price_files_and_the_environment_variable(
    tmp_path: Path, anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    json_file = tmp_path / "prices.json"
    json_file.write_text(
        json.dumps({"as_of": "2026-12-01", "models": {"house-model": {"input": 2, "output": 8}}})
    )
    toml_file = tmp_path / "prices.toml"
    toml_file.write_text("[models.claude-haiku-4-5]\ninput = 2.0\noutput = 10.0\ncache_read = 0.5\n")

    from_json = pricing.load_prices(json_file)
    assert from_json["house-model"] == pricing.ModelPrice.from_rates(2, 8)
    assert from_json["claude-opus-4-5"] == pricing.DEFAULT_PRICES["claude-opus-4-5"]
    from_toml = pricing.load_prices(toml_file)
    assert (from_toml["claude-haiku-4-5"].output, from_toml["claude-haiku-4-5"].cache_read) == (10.0, 0.5)
    assert from_toml["claude-haiku-4-5-20251001"] == from_toml["claude-haiku-4-5"]  # the alias's dated id too
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"m": {"input": -1, "output": 1}}))
    with pytest.raises(ValueError, match="negative"):
        pricing.load_prices(bad)

    request = ask(model="house-model")
    assert client_for(anthropic_server).create(request).cost_usd is None
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(json_file))
    priced = client_for(anthropic_server).create(request)
    assert priced.cost_usd == pytest.approx((priced.input_tokens * 2 + priced.output_tokens * 8) / 1e6)
    explicit = client_for(anthropic_server, prices=from_toml).create(ask())
    assert explicit.cost_usd == pytest.approx((explicit.input_tokens * 2 + explicit.output_tokens * 10) / 1e6)


def test_a_price_file_override_of_an_alias_prices_its_dated_ids(
    tmp_path: Path, make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_anthropic_server(models=PINNED_MODEL_IDS, batch_delay=0)
    alias_file = tmp_path / "alias.toml"
    alias_file.write_text("[models.claude-haiku-4-5]\ninput = 2.0\noutput = 10.0\n")
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(alias_file))
    client = client_for(server)
    result = client.create(ask())
    assert result.model == "claude-haiku-4-5-20251001"
    assert result.cost_usd == pytest.approx((result.input_tokens * 2 + result.output_tokens * 10) / 1e6)
    batched = client.batch_results(client.submit_batch([("one", ask())]))["one"]
    assert isinstance(batched, CallResult) and batched.model == "claude-haiku-4-5-20251001"
    assert batched.cost_usd == pytest.approx((batched.input_tokens * 2 + batched.output_tokens * 10) / 2e6)
    assert (
        pricing.current_prices()["claude-sonnet-4-5-20250929"] == pricing.DEFAULT_PRICES["claude-sonnet-4-5"]
    )

    # a dated id's own price wins over its alias's; an override of a dated id leaves the alias alone
    both = tmp_path / "both.json"
    both.write_text(
        json.dumps(
            {
                "claude-haiku-4-5": {"input": 2, "output": 10},
                "claude-haiku-4-5-20251001": {"input": 3, "output": 12},
                "claude-opus-4-5-20251101": {"input": 4, "output": 20},
            }
        )
    )
    table = pricing.load_prices(both)
    assert table["claude-haiku-4-5"] == pricing.ModelPrice.from_rates(2, 10)
    assert table["claude-haiku-4-5-20251001"] == pricing.ModelPrice.from_rates(3, 12)
    assert table["claude-opus-4-5-20251101"] == pricing.ModelPrice.from_rates(4, 20)
    assert table["claude-opus-4-5"] == pricing.DEFAULT_PRICES["claude-opus-4-5"]


@pytest.mark.parametrize(
    ("name", "text", "field", "value"),
    [
        ("nan.toml", "[models.house-model]\ninput = nan\noutput = 1.0\n", "input", "nan"),
        ("inf.toml", "[models.house-model]\ninput = 1.0\noutput = inf\n", "output", "inf"),
        ("nan.json", '{"house-model": {"input": 1, "output": 1, "cache_read": NaN}}', "cache_read", "nan"),
        ("huge.json", '{"house-model": {"input": 1, "output": 1e999}}', "output", "inf"),
        ("big.json", '{"house-model": {"input": 1' + "0" * 400 + ', "output": 1}}', "input", "1000"),
        ("negative.toml", "[models.house-model]\ninput = -1.0\noutput = 1.0\n", "input", "-1.0"),
    ],
)
def test_prices_must_be_finite_and_not_negative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, field: str, value: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        pricing.load_prices(path)
    assert f"{path}: house-model.{field}" in str(caught.value) and value in str(caught.value)
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(path))
    with pytest.raises(EvalkitError, match=f"named by {pricing.PRICES_ENV_VAR}.*house-model.{field}"):
        pricing.current_prices()  # as a run checks the file before it starts


@pytest.mark.parametrize(
    "text", ["{not json", "[models.x]\ninput = \n", '{"house-model": {"input": NaN, "output": 1}}']
)
def test_a_bad_price_file_fails_calls_before_they_are_sent(
    tmp_path: Path, make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    server = make_anthropic_server(lambda body: TICKET)
    client = client_for(server, max_retries=0)
    batch_id = client.submit_batch([("one", ask())])  # submitted while the prices were fine
    path = tmp_path / "prices"
    path.write_text(text)
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(path))
    sent = len(server.requests)

    async def acreate() -> CallResult:
        try:
            return await client.acreate(ask())
        finally:
            await client.aclose()

    for call in (
        lambda: client.create(ask()),
        lambda: client.parse(ask(), Ticket),
        lambda: asyncio.run(acreate()),
        lambda: client.submit_batch([("two", ask())]),
        lambda: client.batch_results(batch_id),
    ):
        with pytest.raises(EvalkitError, match=f"{path} \\(named by {pricing.PRICES_ENV_VAR}\\)"):
            call()
    assert len(server.requests) == sent  # nothing was sent, so nothing was paid for and thrown away
    assert client.count_tokens(ask()) > 0  # a count has no cost to price


def test_a_price_file_is_read_once_per_version_and_looked_at_once_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"house-model": {"input": 2, "output": 8}}))
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(path))
    now = [1000.0]
    monkeypatch.setattr(pricing, "_clock", lambda: now[0])
    monkeypatch.setattr(pricing, "_env_cache", None)
    reads: list[str] = []
    stats: list[str] = []
    real_load, real_stat = pricing.load_prices, os.stat

    def load(p: Any) -> dict[str, pricing.ModelPrice]:
        reads.append(str(p))
        return real_load(p)

    def stat(p: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if str(p) == str(path):
            stats.append(str(p))
        return real_stat(p, *args, **kwargs)

    monkeypatch.setattr(pricing, "load_prices", load)
    monkeypatch.setattr(os, "stat", stat)
    for _ in range(1000):  # a worker's calls within one second
        assert pricing.current_prices()["house-model"].input == 2
    assert (len(reads), len(stats)) == (1, 1)

    now[0] += 5  # unchanged a while later: looked at, not read again
    assert pricing.current_prices()["house-model"].input == 2
    assert (len(reads), len(stats)) == (1, 2)

    path.write_text(json.dumps({"house-model": {"input": 3.5, "output": 8}}))
    assert pricing.current_prices()["house-model"].input == 2  # within the second
    now[0] += 1
    assert pricing.current_prices()["house-model"].input == 3.5  # picked up once it is looked at again
    assert len(reads) == 2

    path.write_text("{not json")
    now[0] += 1
    for _ in range(3):  # a bad file fails every call, early, though it is parsed once
        with pytest.raises(EvalkitError, match=f"named by {pricing.PRICES_ENV_VAR}"):
            pricing.current_prices()
    assert len(reads) == 3
    path.unlink()
    now[0] += 1
    with pytest.raises(EvalkitError, match="No such file"):
        pricing.current_prices()
