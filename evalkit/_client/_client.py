"""The one place evalkit talks to the Anthropic API (and the only module that imports ``anthropic``).

A *request* is a plain JSON dict of ``messages.create`` keyword arguments (``model``, ``max_tokens``,
``system``, ``messages``, ``tools``, ``thinking``, ``output_config``, ...), so callers can hash it for a
cache. Keys that the installed SDK's method does not take as keyword arguments (``temperature``, ``top_p``,
...) are sent in the request body as they are.

Every call returns a ``CallResult`` or raises one exception type, ``CallError``, once the SDK's own
retries (``max_retries``, honouring ``retry-after``) are spent.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, NoReturn, TypeVar

import anthropic
import pydantic

from evalkit._client import _pricing as pricing
from evalkit._client._limiter import RateLimiter
from evalkit._client._paced import is_spend_limit, new_call_waits, pace
from evalkit._client._prompt_cache import PrefixPrimer, PromptCacheTTL, mark_prompt_cache
from evalkit._client._redact import base_url_secrets, redact_url, scrub, secret_forms
from evalkit._client._requests import (
    _backoff,
    _check_request,
    _is_decode_error,
    _keyword_params,
    _split_request,
)
from evalkit._client._result import BatchStatus, CallResult, is_structured
from evalkit._client._sdk import _tracing_option, tls_context
from evalkit._client._spending import SpendingCap, worst_case_usd
from evalkit.errors import CallError, CallErrorKind

__all__ = ["Client"]

ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)
_T = TypeVar("_T")

_SECRET_MIN_LENGTH = 6
_REDACTED = "[redacted]"


def _status_kind(status: int) -> CallErrorKind:
    """The kind of an API error answered with HTTP ``status``."""
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    return "bad_request"


# the API's error types and the HTTP status each is answered with on a direct call
_ERROR_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def _errored_kind(error: Any) -> tuple[CallErrorKind, int | None]:
    """A batch item's error type as the kind and status the same error has on a direct call.

    A type this module does not know is a ``bad_request`` (never retried: trying again could pay twice).
    """
    status = _ERROR_TYPE_STATUS.get(str(error))
    if status is None:
        return "bad_request", None
    return _status_kind(status), status


class Client:
    """Calls the Messages API through the official SDK, with evalkit's request dicts and results.

    ``api_key`` and ``base_url`` default to the SDK's environment handling (``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_BASE_URL``). ``max_concurrency`` bounds the calls in flight: the blocking calls of all
    threads (``create``, ``parse``, ``count_tokens``) share one bound, and each event loop's async calls
    have their own (each running loop gets its own async SDK client and semaphore, as a connection pool
    belongs to one loop; ``aclose`` in a loop closes that loop's client). ``max_retries`` and ``timeout``
    (seconds) go to the SDK. ``prices`` replaces the price table used for ``cost_usd`` (default:
    ``pricing.current_prices()``, which honours ``EVALKIT_PRICES``: a bad file raises ``EvalkitError``
    before a request is sent).

    Blocking Messages calls adapt to the API's rate limits (``RateLimiter``): they are paced by the
    ``anthropic-ratelimit-*`` headers of the replies, and a call refused with 429 waits what ``retry-after``
    says and is sent again without spending ``max_retries``, for up to ``rate_limit_wait`` seconds of such
    waits per call (default 600); past that the 429 counts as any retryable error. ``rate_limit_share`` is
    this client's share of the limits when other processes call with the same key (default 1.0: all of them).

    ``prompt_cache`` (``"5m"``, ``"1h"`` or None for off) marks the stable prefix of each Messages request (its
    tools and system prompt) for the API's prompt cache, with that lifetime, where it may reach the model's
    minimum cacheable length (see ``mark_prompt_cache``). With a ``spending_cap``, a call whose worst case would
    take what was spent and what is in flight past the cap is not sent: ``CallError("spending_cap")``.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        max_concurrency: int = 8,
        max_retries: int = 4,
        timeout: float = 60.0,
        prices: Mapping[str, pricing.ModelPrice] | None = None,
        rate_limit_wait: float = 600.0,
        rate_limit_share: float = 1.0,
        prompt_cache: PromptCacheTTL | None = "5m",
        spending_cap: SpendingCap | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        self._api_key = api_key
        self.base_url = base_url
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.timeout = timeout
        self.prices = prices
        self.prompt_cache = prompt_cache
        self.spending_cap = spending_cap
        self._primer = PrefixPrimer(max_wait_s=timeout)
        self._batch_reserved: dict[str, float] = {}
        if not rate_limit_wait >= 0:
            raise ValueError("rate_limit_wait cannot be negative")
        self.rate_limit_wait = rate_limit_wait
        # shared by the SDK clients of every calling thread, so a 429 in one slows them all
        self.limiter = RateLimiter(max_concurrency=max_concurrency, share=rate_limit_share)
        self._call_waits = new_call_waits()
        self._lock = threading.Lock()
        # one SDK client per calling thread: see sync_client
        self._local = threading.local()
        self._syncs: list[tuple[threading.Thread, anthropic.Anthropic]] = []
        # blocking calls in flight, across threads
        self._slots = threading.BoundedSemaphore(max_concurrency)
        # each event loop's async SDK client and semaphore (dropped with the loop)
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[anthropic.AsyncAnthropic, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()
        self._batch_requests: dict[str, dict[str, dict[str, Any]]] = {}

    def __repr__(self) -> str:
        return (
            f"Client(base_url={redact_url(self.base_url)!r}, max_concurrency={self.max_concurrency}, "
            f"max_retries={self.max_retries}, timeout={self.timeout})"
        )

    # ---- SDK clients ----------------------------------------------------------------------------------------

    def _client_kwargs(self) -> dict[str, Any]:
        self._check_key()
        return {
            "api_key": self._api_key,
            "base_url": self.base_url,
            "max_retries": self.max_retries,
            "timeout": self.timeout,
            **_tracing_option(),
        }

    @property
    def sync_client(self) -> anthropic.Anthropic:
        """The calling thread's SDK client for blocking calls (created on its first use).

        Each thread has its own, and so its own connection pool: a pool's lock is taken three times per
        request, and with 17 threads sharing one pool they waited on it 4 ms per take on average (measured),
        as a holder that gave up the GIL for a syscall kept the others queued behind it.
        """
        client: anthropic.Anthropic | None = getattr(self._local, "sync", None)
        if client is not None:
            return client
        try:
            kwargs = self._client_kwargs()
            http = anthropic.DefaultHttpxClient(verify=tls_context())
            pace(http, self.limiter, self.rate_limit_wait, self._call_waits)
            client = anthropic.Anthropic(**kwargs, http_client=http)
        except Exception as exc:  # e.g. a broken credentials profile
            self._raise(exc)
        with self._lock:
            # the clients of threads that have ended are closed here, so a long session does not pile them up
            ended = [c for t, c in self._syncs if not t.is_alive()]
            self._syncs = [(t, c) for t, c in self._syncs if t.is_alive()]
            self._syncs.append((threading.current_thread(), client))
        for old in ended:
            old.close()
        self._local.sync = client
        return client

    def _async_parts(self) -> tuple[anthropic.AsyncAnthropic, asyncio.Semaphore]:
        """The async SDK client and the concurrency semaphore for the running event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            parts = self._loops.get(loop)
            if parts is None:
                # An httpx connection pool and a semaphore belong to one event loop: make new ones. Another
                # loop's stay its own; one whose loop has closed cannot be closed any more, and is dropped.
                for old in [old for old in self._loops if old.is_closed()]:
                    del self._loops[old]
                try:
                    kwargs = self._client_kwargs()
                    http_async = anthropic.DefaultAsyncHttpxClient(verify=tls_context())
                    client = anthropic.AsyncAnthropic(**kwargs, http_client=http_async)
                except Exception as exc:
                    self._raise(exc)
                parts = self._loops[loop] = (client, asyncio.Semaphore(self.max_concurrency))
            return parts

    def close(self) -> None:
        """Close the blocking SDK clients (the async one is closed by ``aclose``)."""
        with self._lock:
            syncs, self._syncs = self._syncs, []
            self._local = threading.local()
        for _, sync in syncs:
            sync.close()

    async def aclose(self) -> None:
        """Close the running event loop's async SDK client, and the blocking ones."""
        with self._lock:
            parts = self._loops.pop(asyncio.get_running_loop(), None)
        if parts is not None:
            await parts[0].close()
        self.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ---- errors ---------------------------------------------------------------------------------------------

    def _check_key(self) -> None:
        """Refuse a credential with surrounding whitespace (a newline read from a file, say) before it is sent.

        httpx rejects such a header value with an error that shows it; the API would refuse it anyway.
        """
        # the one the SDK sends: the argument, else ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN
        if self._api_key is not None:
            source, value = "the api_key argument", self._api_key
        elif os.environ.get("ANTHROPIC_API_KEY"):
            source, value = "ANTHROPIC_API_KEY", os.environ["ANTHROPIC_API_KEY"]
        else:
            source, value = "ANTHROPIC_AUTH_TOKEN", os.environ.get("ANTHROPIC_AUTH_TOKEN", "")
        if value != value.strip():
            raise CallError(
                "auth",
                None,
                f"the API key in {source} has leading or trailing whitespace (a newline?); remove it",
            )

    def _secrets(self) -> list[str]:
        """Each credential in every form an error text could show it: the API key or token, and any user name
        or password in the base URL."""
        return secret_forms(
            [
                self._api_key,
                os.environ.get("ANTHROPIC_API_KEY"),
                os.environ.get("ANTHROPIC_AUTH_TOKEN"),
                *base_url_secrets(self.base_url),
            ]
        )

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets())

    def _call_error(self, exc: BaseException) -> CallError | None:
        """The CallError for an SDK failure, or None for an exception that is not a call failure."""
        if isinstance(exc, CallError):
            return exc
        kind: CallErrorKind
        status: int | None = None
        request_id: str | None = None
        message = str(exc)
        if isinstance(exc, anthropic.APITimeoutError):
            kind = "timeout"
        elif isinstance(exc, anthropic.APIConnectionError):
            kind = "connection"
            cause = exc.__cause__
            message = f"{exc}: {type(cause).__name__}: {cause}" if cause is not None else str(exc)
            if self.base_url is None and os.environ.get("ANTHROPIC_BASE_URL", "unset").strip() == "":
                message += " (ANTHROPIC_BASE_URL is set but empty: unset it, or give a URL such as http://127.0.0.1:8765)"
        elif isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            request_id = exc.request_id
            message = getattr(exc, "api_message", None) or exc.message
            kind = "overloaded" if isinstance(exc, anthropic.OverloadedError) else _status_kind(status)
            if is_spend_limit(status, message):
                kind = "spend_limit"
        elif isinstance(exc, anthropic.APIResponseValidationError):
            kind, status = "bad_response", exc.status_code
        elif isinstance(exc, json.JSONDecodeError):
            kind, message = "bad_response", f"the reply body is not valid JSON: {exc}"
        elif isinstance(exc, pydantic.ValidationError):
            kind, message = "bad_response", f"the reply does not match the output format: {exc}"
        elif isinstance(exc, anthropic.CredentialsError) or (
            isinstance(exc, TypeError) and "authentication" in str(exc)
        ):
            kind = "auth"  # no key, token or profile to authenticate with
        elif isinstance(exc, anthropic.AnthropicError):
            kind = "bad_request"
        else:
            return None
        return CallError(kind, status, self._scrub(message), request_id)

    def _raise(self, exc: Exception) -> NoReturn:
        error = self._call_error(exc)
        if error is None:
            raise exc
        raise error from None

    def _run(self, call: Callable[[], _T]) -> _T:
        """``call()`` with SDK errors as CallError; a reply body that is not JSON is retried here too."""
        self._call_waits.waited = 0.0  # the waits on 429 this call may spend (rate_limit_wait)
        attempt = 0
        while True:
            try:
                return call()
            except Exception as exc:
                if _is_decode_error(exc) and attempt < self.max_retries:
                    attempt += 1
                    time.sleep(_backoff(attempt))
                    continue
                self._raise(exc)

    async def _arun(self, call: Callable[[], Any]) -> Any:
        attempt = 0
        while True:
            try:
                return await call()
            except Exception as exc:
                if _is_decode_error(exc) and attempt < self.max_retries:
                    attempt += 1
                    await asyncio.sleep(_backoff(attempt))
                    continue
                self._raise(exc)

    def _price_table(self) -> Mapping[str, pricing.ModelPrice]:
        """The prices for a call's cost, read before it is sent: a bad price file fails it unsent."""
        return self.prices if self.prices is not None else pricing.current_prices()

    def _result_from_dict(
        self,
        data: Any,
        request: Mapping[str, Any],
        latency_s: float,
        *,
        structured: bool,
        request_id: str | None,
        prices: Mapping[str, pricing.ModelPrice],
    ) -> CallResult:
        return CallResult.from_message(
            data,
            requested_model=str(request["model"]),
            latency_s=latency_s,
            prices=prices,
            structured=structured,
            request_id=request_id,
        )

    def _result(
        self,
        message: Any,
        request: Mapping[str, Any],
        latency_s: float,
        *,
        structured: bool,
        prices: Mapping[str, pricing.ModelPrice],
    ) -> CallResult:
        request_id = getattr(message, "_request_id", None)
        try:
            data = message.to_dict(mode="json")
        except Exception as exc:  # a reply the SDK could not model
            raise CallError("bad_response", None, f"unreadable reply: {exc}", request_id) from None
        return self._result_from_dict(
            data, request, latency_s, structured=structured, request_id=request_id, prices=prices
        )

    # ---- messages -------------------------------------------------------------------------------------------

    def _outgoing(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        """The request as sent: its stable prefix marked for prompt caching, unless that is off."""
        if self.prompt_cache is None:
            return request
        return mark_prompt_cache(request, self.prompt_cache)

    def _reserve(self, requests: Sequence[Mapping[str, Any]], *, batch: bool = False) -> float:
        """Hold the worst case of `requests` under the spending cap (0.0 without one); CallError if refused."""
        cap = self.spending_cap
        if cap is None:
            return 0.0
        worst = 0.0
        for request in requests:
            price = pricing.price_for(str(request.get("model")), self._price_table())
            if price is None:
                raise CallError(
                    "spending_cap",
                    None,
                    f"not sent: {request.get('model')} has no known price, so the spending "
                    "cap cannot be kept (add its price with EVALKIT_PRICES)",
                )
            worst += worst_case_usd(request, price, batch=batch, ttl=self.prompt_cache)
        if not cap.reserve(worst):
            raise CallError(
                "spending_cap",
                None,
                f"not sent: its worst case ${worst:.4f}, with ${cap.spent_usd:.4f} spent and "
                f"${cap.in_flight_usd:.4f} in flight, would pass the ${cap.cap_usd:.2f} cap",
            )
        return worst

    def _settle(self, worst: float, cost: float | None) -> None:
        if self.spending_cap is not None:
            self.spending_cap.settle(worst, cost)

    def create(self, request: Mapping[str, Any]) -> CallResult:
        """One ``messages.create`` call. Raises ``CallError`` once retries are spent."""
        _check_request(request)
        sent = self._outgoing(request)
        kwargs = _split_request(sent, "create")
        prices = self._price_table()
        client = self.sync_client
        slots = self._slots
        worst = self._reserve([sent])
        started = time.perf_counter()  # from the send: a wait for the prefix's first call is not latency

        def call() -> tuple[Any, str | None]:
            # the raw body, decoded once: building the SDK's message model only to dump it again costs
            # more CPU than the rest of a call's handling
            with slots:
                raw = client.messages.with_raw_response.create(**kwargs)
            return json.loads(raw.http_response.content), raw.headers.get("request-id")

        try:
            with self._primer.first(sent):
                started = time.perf_counter()
                data, request_id = self._run(call)
            result = self._result_from_dict(
                data,
                request,
                time.perf_counter() - started,
                structured=is_structured(request),
                request_id=request_id,
                prices=prices,
            )
        except BaseException:
            self._settle(worst, 0.0)  # a call that failed is not billed
            raise
        self._settle(worst, result.cost_usd)
        return result

    async def acreate(self, request: Mapping[str, Any]) -> CallResult:
        """``create`` for asyncio, with at most ``max_concurrency`` calls in flight."""
        _check_request(request)
        sent = self._outgoing(request)
        kwargs = _split_request(sent, "create")
        prices = self._price_table()
        client, semaphore = self._async_parts()
        async with semaphore:
            worst = self._reserve([sent])
            started = time.perf_counter()
            try:
                message = await self._arun(lambda: client.messages.create(**kwargs))
            except BaseException:
                self._settle(worst, 0.0)
                raise
            latency = time.perf_counter() - started
        result = self._result(message, request, latency, structured=is_structured(request), prices=prices)
        self._settle(worst, result.cost_usd)
        return result

    def parse(self, request: Mapping[str, Any], model_cls: type[ModelT]) -> tuple[ModelT, CallResult]:
        """``messages.parse(output_format=model_cls)``: the validated instance and the call's result.

        A reply that does not validate against ``model_cls`` raises ``CallError("bad_response")``.
        """
        _check_request(request)
        sent = self._outgoing(request)
        kwargs = _split_request(sent, "parse")
        prices = self._price_table()
        client = self.sync_client
        worst = self._reserve([sent])
        started = time.perf_counter()  # from the send: a wait for the prefix's first call is not latency

        def call() -> Any:
            with self._slots:
                return client.messages.parse(**kwargs, output_format=model_cls)

        try:
            with self._primer.first(sent):
                started = time.perf_counter()
                message = self._run(call)
        except BaseException:
            self._settle(worst, 0.0)
            raise
        result = self._result(message, request, time.perf_counter() - started, structured=True, prices=prices)
        self._settle(worst, result.cost_usd)
        return self._parsed(message, model_cls, result), result

    async def aparse(self, request: Mapping[str, Any], model_cls: type[ModelT]) -> tuple[ModelT, CallResult]:
        """``parse`` for asyncio, within the concurrency bound."""
        _check_request(request)
        sent = self._outgoing(request)
        kwargs = _split_request(sent, "parse")
        prices = self._price_table()
        client, semaphore = self._async_parts()
        async with semaphore:
            worst = self._reserve([sent])
            started = time.perf_counter()
            try:
                message = await self._arun(lambda: client.messages.parse(**kwargs, output_format=model_cls))
            except BaseException:
                self._settle(worst, 0.0)
                raise
            latency = time.perf_counter() - started
        result = self._result(message, request, latency, structured=True, prices=prices)
        self._settle(worst, result.cost_usd)
        return self._parsed(message, model_cls, result), result

    @staticmethod
    def _parsed(message: Any, model_cls: type[ModelT], result: CallResult) -> ModelT:
        instance = getattr(message, "parsed_output", None)
        if not isinstance(instance, model_cls):
            raise CallError(
                "bad_response",
                None,
                f"the reply has no {model_cls.__name__} (stop_reason={result.stop_reason})",
                result.request_id,
            )
        return instance

    def count_tokens(self, request: Mapping[str, Any]) -> int:
        """Input tokens for ``request`` from ``messages.count_tokens`` (generation settings are ignored)."""
        _check_request(request, need_max_tokens=False)
        accepted = _keyword_params("count_tokens")
        kwargs: dict[str, Any] = {key: value for key, value in request.items() if key in accepted}
        if "output_format" in request:  # create sends it in the body (see _split_request), and it counts
            kwargs["extra_body"] = {"output_format": request["output_format"]}
        client = self.sync_client

        def call() -> Any:
            with self._slots:
                return client.messages.count_tokens(**kwargs)

        return int(self._run(call).input_tokens)

    # ---- batches --------------------------------------------------------------------------------------------

    def submit_batch(self, items: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Create a Message Batch from ``(custom_id, request)`` pairs; returns the batch id."""
        if not items:
            raise ValueError("a batch needs at least one request")
        requests: dict[str, dict[str, Any]] = {}
        for custom_id, request in items:
            _check_request(request)
            if custom_id in requests:
                raise ValueError(f"duplicate custom_id {custom_id!r}")
            requests[custom_id] = dict(self._outgoing(request))
        if self.prices is None:
            pricing.current_prices()  # a bad price file fails here, before the batch is paid for
        client = self.sync_client
        payload: Any = [{"custom_id": cid, "params": params} for cid, params in requests.items()]
        worst = self._reserve(list(requests.values()), batch=True)  # the whole batch, or none of it
        try:
            batch = self._run(lambda: client.messages.batches.create(requests=payload))
        except BaseException:
            self._settle(worst, 0.0)
            raise
        with self._lock:
            self._batch_requests[batch.id] = requests
            self._batch_reserved[batch.id] = worst
        return str(batch.id)

    @staticmethod
    def _status(batch: Any) -> BatchStatus:
        counts = batch.request_counts
        return BatchStatus(
            id=batch.id,
            processing_status=batch.processing_status,
            processing=counts.processing,
            succeeded=counts.succeeded,
            errored=counts.errored,
            canceled=counts.canceled,
            expired=counts.expired,
            created_at=batch.created_at,
            ended_at=batch.ended_at,
        )

    def batch_status(self, batch_id: str) -> BatchStatus:
        client = self.sync_client
        return self._status(self._run(lambda: client.messages.batches.retrieve(batch_id)))

    def wait_for_batch(
        self, batch_id: str, *, poll_interval: float = 10.0, timeout: float | None = None
    ) -> BatchStatus:
        """Poll until the batch has ended; raises ``TimeoutError`` after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.batch_status(batch_id)
            if status.ended:
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"batch {batch_id} still {status.processing_status} after {timeout}s")
            time.sleep(poll_interval)

    def cancel_batch(self, batch_id: str) -> BatchStatus:
        client = self.sync_client
        return self._status(self._run(lambda: client.messages.batches.cancel(batch_id)))

    def batch_results(
        self,
        batch_id: str,
        requests: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, CallResult | CallError]:
        """Each custom_id's result (at the batch price) or error, once the batch has ended.

        ``requests`` (custom_id -> request) gives each result its requested model and structured flag;
        by default the ones this client submitted are used.
        """
        with self._lock:
            known = requests if requests is not None else self._batch_requests.get(batch_id, {})
        prices = self._price_table()  # a bad price file fails here, before the results are fetched
        status = self.batch_status(batch_id)
        if not status.ended:
            raise CallError(
                "bad_request", None, f"batch {batch_id} has not ended ({status.processing_status})"
            )
        latency = 0.0
        if status.created_at is not None and status.ended_at is not None:
            latency = max(0.0, (status.ended_at - status.created_at).total_seconds())
        client = self.sync_client
        lines = self._run(lambda: list(client.messages.batches.results(batch_id)))
        out: dict[str, CallResult | CallError] = {}
        for line in lines:
            custom_id = str(line.custom_id)
            result = line.result
            request = known.get(custom_id, {})
            if result.type == "succeeded":
                data = result.message.to_dict(mode="json")
                try:
                    out[custom_id] = CallResult.from_message(
                        data,
                        requested_model=str(request.get("model") or data.get("model") or ""),
                        latency_s=latency,
                        batch=True,
                        prices=prices,
                        structured=is_structured(request),
                    )
                except CallError as exc:
                    out[custom_id] = exc
            elif result.type == "errored":
                error = result.error.error
                kind, http_status = _errored_kind(getattr(error, "type", None))
                out[custom_id] = CallError(
                    kind,
                    http_status,
                    self._scrub(str(getattr(error, "message", ""))),
                    getattr(result.error, "request_id", None),
                )
            elif result.type == "canceled":
                out[custom_id] = CallError("canceled", None, "the batch was canceled before this request ran")
            else:
                out[custom_id] = CallError("expired", None, "the batch expired before this request ran")
        with self._lock:
            reserved = self._batch_reserved.pop(batch_id, None)
        if reserved is not None:
            costs = [r.cost_usd for r in out.values() if isinstance(r, CallResult)]
            self._settle(reserved, None if None in costs else sum(c or 0.0 for c in costs))
        return out
