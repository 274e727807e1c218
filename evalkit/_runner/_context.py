"""The resources of one run: what every case's execution reads, made once and shared by threads and workers."""

from __future__ import annotations

import functools
import multiprocessing
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

from evalkit._cache import ResponseCache
from evalkit._runner._options import RunOptions
from evalkit._systems import RunnableSystem
from evalkit.graders import GradingContext, Judge, JudgeFn
from evalkit.suite import Suite


def has_api_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


@dataclass
class Raised:
    """What a Python system raised when it ran ahead of the run (a batch's judge phase)."""

    exc: BaseException


class _LazyClient:
    """The context's current client, looked up on each use (a forked worker makes a client of its own)."""

    def __init__(self, context: RunContext) -> None:
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context.client, name)


@dataclass
class RunContext:
    """Suite, system, options, response cache, judge and client of a run; build it with :meth:`create`."""

    suite: Suite
    system: RunnableSystem
    options: RunOptions
    cache: ResponseCache
    grading: GradingContext
    judge: JudgeFn | None = None
    judge_config: dict[str, Any] | None = None
    repeat_judge: Judge | None = None
    """evalkit's own judge, keyed by the repeat as the system's calls are (None for a caller's judge)."""
    shares_client: bool = False
    """Whether the client or judge came from the caller: it cannot be shared across a fork."""
    prefilled: dict[tuple[str, int], tuple[Any, float]] = field(default_factory=dict)
    """A Python system's outputs from a batch's judge phase, used once: (case id, repeat) -> (output, latency)."""
    spending_cap: Any = None
    """The run's SpendingCap (shared with its forked workers), or None without a max_cost."""
    _client: Any = None
    _rate_share: float = 1.0
    """This process's share of the API's rate limits (a worker's threads over the run's concurrency)."""

    @classmethod
    def create(
        cls,
        suite: Suite,
        system: RunnableSystem,
        options: RunOptions,
        *,
        client: Any = None,
        judge: JudgeFn | None = None,
        judge_config: dict[str, Any] | None = None,
    ) -> RunContext:
        cache = ResponseCache(options.cache_dir, mode=options.cache_mode)  # type: ignore[arg-type]
        ctx = cls(
            suite=suite,
            system=system,
            options=options,
            cache=cache,
            grading=GradingContext(
                base_dir=suite.base_dir,
                output_schema=suite.output_schema,
                user=suite.user,
                check_timeout_s=suite.config.check_timeout_s,
            ),
            shares_client=client is not None or judge is not None,
            _client=client,
        )
        if judge is None and ctx._judge_wanted():
            judge = Judge(client=_LazyClient(ctx), settings=suite.config.judge, cache=cache)
        ctx.judge = judge
        # repeats measure the judge's noise too, and a replay gives each (case, repeat) the verdict it was given
        ctx.repeat_judge = judge if isinstance(judge, Judge) else None
        judge_model = getattr(getattr(judge, "settings", None), "model", None)
        if judge_model is not None and judge_model == system.model:
            warnings.warn(
                f"the judge ({judge_model}) is the model it grades; a different judge model avoids self-preference",
                stacklevel=3,
            )
        describe = getattr(judge, "describe", None)
        ctx.judge_config = judge_config or (describe() if callable(describe) else None)
        return ctx

    def _judge_wanted(self) -> bool:
        if self.options.judge == "off" or not any(
            c.kind == "judge" for case in self.suite.cases for c in case.checks
        ):
            return False
        # a replay reads recorded verdicts and never calls the API, so it needs no key (as in CI)
        return self.options.judge == "on" or has_api_key() or self.cache.mode.value == "replay"

    @property
    def client(self) -> Any:
        """The client, made only when something needs Claude."""
        if self._client is None:
            from evalkit._client import Client  # the SDK loads only for a run that calls Claude

            self._client = Client(
                max_concurrency=self.options.concurrency,
                max_retries=self.options.max_retries,
                timeout=self.options.timeout,
                rate_limit_share=self._rate_share,
                prompt_cache=self.prompt_cache_ttl(),
                spending_cap=self.spending_cap,
            )
        return self._client

    def prompt_cache_ttl(self) -> Literal["5m", "1h"] | None:
        """The prompt-cache lifetime the run's requests ask for (None: off). A run's calls with one prefix follow
        each other within seconds, and each read renews a 5-minute entry; a batch's requests may wait an hour."""
        mode = self.options.prompt_cache
        if mode == "off":
            return None
        if mode == "on":
            return "1h" if self.options.batch else "5m"
        return mode

    @property
    def client_made(self) -> Any:
        """The client if one exists already (given, or made by a call), else None."""
        return self._client

    def judge_for(self, repeat: int) -> JudgeFn | None:
        """The judge function for one repeat's outputs."""
        if self.repeat_judge is not None:
            return functools.partial(self.repeat_judge, repeat=repeat)
        return self.judge

    def processes(self) -> int:
        """Worker processes for this run: the option, or one per 16 cases in flight, at most the cores + 1."""
        if self.shares_client or "fork" not in multiprocessing.get_all_start_methods():
            return 1  # a caller's own client cannot be shared across a fork; workers start by fork only
        if self.options.processes is not None:
            return max(1, self.options.processes)
        # below a few dozen cases in flight one process keeps up; past that its CPU sets the pace. One more
        # process than cores keeps every core busy while the others wait on the network.
        return max(1, min((os.cpu_count() or 1) + 1, self.options.concurrency // 16))

    def in_worker(self, threads: int) -> None:
        """Called in a forked worker of `threads` threads: build a client of its own (sockets must not be shared
        across a fork), which keeps to its share of the API's rate limits so that the workers together keep to
        them."""
        self._client = None
        self._rate_share = min(1.0, threads / max(1, self.options.concurrency))
        self.options.processes = 1
