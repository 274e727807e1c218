"""The Message Batches endpoints: a store of batches that end after a delay, or when canceled."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from evalkit.testing.server._api_errors import _RequestError, error_payload
from evalkit.testing.server._clock import rfc3339

__all__ = ["BATCH_PATH", "Batch", "BatchStore"]

BATCH_PATH = re.compile(r"/v1/messages/batches/([^/]+)(/results|/cancel)?")
"""``/v1/messages/batches/<id>`` with an optional ``/results`` or ``/cancel``."""

_BATCH_TTL = timedelta(hours=24)
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass
class Batch:
    id: str
    created_at: datetime
    ready_at: float
    items: list[tuple[str, dict[str, Any]]]
    delay: timedelta = timedelta(0)
    cancel_initiated_at: datetime | None = None
    ended_at: datetime | None = None
    results: list[dict[str, Any]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class BatchStore:
    """The server's batches.

    ``make_message(params)`` answers one batch item (a ``_RequestError`` makes it ``errored``); ``new_id(prefix)``
    names batches; ``base_url()`` is where results are served.
    """

    make_message: Callable[[dict[str, Any]], dict[str, Any]]
    new_id: Callable[[str], str]
    base_url: Callable[[], str]
    _batches: dict[str, Batch] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def create(self, body: dict[str, Any], *, delay: float) -> dict[str, Any]:
        """A new batch that ends ``delay`` seconds from now (0: at its first retrieve)."""
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _RequestError(400, "requests: at least one request is required")
        items: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for i, item in enumerate(requests):
            if not isinstance(item, dict):
                raise _RequestError(400, f"requests.{i}: must be an object")
            custom_id = item.get("custom_id")
            params = item.get("params")
            if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
                raise _RequestError(400, f"requests.{i}.custom_id: 1-64 letters, digits, '_' or '-'")
            if custom_id in seen:
                raise _RequestError(400, f"requests.{i}.custom_id: duplicate custom_id {custom_id!r}")
            if not isinstance(params, dict):
                raise _RequestError(400, f"requests.{i}.params: must be an object")
            seen.add(custom_id)
            items.append((custom_id, params))
        batch = Batch(
            id=self.new_id("msgbatch"),
            created_at=datetime.now(UTC),
            ready_at=time.monotonic() + delay,
            items=items,
            delay=timedelta(seconds=delay),
        )
        with self._lock:
            self._batches[batch.id] = batch
        return self.to_json(batch, fresh=True)

    def get(self, batch_id: str) -> Batch:
        with self._lock:
            batch = self._batches.get(batch_id)
        if batch is None:
            raise _RequestError(404, f"no message batch {batch_id!r}")
        return batch

    def delete(self, batch_id: str) -> None:
        batch = self.get(batch_id)
        self._settle(batch)
        if batch.ended_at is None:
            raise _RequestError(400, "a batch can be deleted only once it has ended; cancel it first")
        with self._lock:
            self._batches.pop(batch_id, None)

    def page(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        """A page of batches, newest first: ``limit`` (1-1000, default 20) of them, after ``after_id`` or just
        before ``before_id``, as the API pages them."""
        limit_text = query.get("limit", ["20"])[-1]
        if not (limit_text.isascii() and limit_text.isdigit() and 1 <= int(limit_text) <= 1000):
            raise _RequestError(400, f"limit: must be an integer from 1 to 1000, got {limit_text!r}")
        limit = int(limit_text)
        after_id, before_id = query.get("after_id", [""])[-1], query.get("before_id", [""])[-1]
        if after_id and before_id:
            raise _RequestError(400, "after_id and before_id cannot both be given")
        with self._lock:
            # newest first; ids count up in order of creation (created_at may tie, or step back with the clock)
            batches = sorted(self._batches.values(), key=lambda b: b.id, reverse=True)
        ids = [b.id for b in batches]
        cursor = after_id or before_id
        if cursor and cursor not in ids:
            raise _RequestError(
                404, f"no message batch {cursor!r} (the {'after_id' if after_id else 'before_id'})"
            )
        if before_id:
            end = ids.index(before_id)
            page, has_more = batches[max(0, end - limit) : end], end > limit
        else:
            start = ids.index(after_id) + 1 if after_id else 0
            page, has_more = batches[start : start + limit], start + limit < len(batches)
        data = [self.to_json(b) for b in page]
        return {
            "data": data,
            "has_more": has_more,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def cancel(self, batch_id: str) -> dict[str, Any]:
        batch = self.get(batch_id)
        self._settle(batch)
        with batch.lock:
            if batch.results is None and batch.cancel_initiated_at is None:
                batch.cancel_initiated_at = datetime.now(UTC)
        # The cancel reply shows `canceling`; the next retrieve shows the batch ended.
        return self.to_json(batch, fresh=True)

    def results(self, batch_id: str) -> list[dict[str, Any]]:
        batch = self.get(batch_id)
        self._settle(batch)
        if batch.results is None:
            raise _RequestError(400, f"message batch {batch_id!r} is still processing")
        return list(batch.results)

    def to_json(self, batch: Batch, *, fresh: bool = False) -> dict[str, Any]:
        """The batch object the API answers with (settled first unless ``fresh``)."""
        if not fresh:
            self._settle(batch)
        ended = batch.results is not None
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.results is None:
            counts["processing"] = len(batch.items)
            status = "canceling" if batch.cancel_initiated_at is not None else "in_progress"
        else:
            for line in batch.results:
                counts[line["result"]["type"]] += 1
            status = "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": rfc3339(batch.created_at),
            "expires_at": rfc3339(batch.created_at + _BATCH_TTL),
            "ended_at": rfc3339(batch.ended_at) if batch.ended_at else None,
            "cancel_initiated_at": rfc3339(batch.cancel_initiated_at) if batch.cancel_initiated_at else None,
            "archived_at": None,
            "results_url": f"{self.base_url()}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _settle(self, batch: Batch) -> None:
        """End the batch if it is due (or canceled), computing its results once."""
        with batch.lock:
            if batch.results is not None:
                return
            # ended_at is when the batch ended (at its cancel, or its delay after creation), whenever it is seen
            if batch.cancel_initiated_at is not None:
                batch.results = [{"custom_id": cid, "result": {"type": "canceled"}} for cid, _ in batch.items]
                batch.ended_at = batch.cancel_initiated_at
            elif time.monotonic() >= batch.ready_at:
                batch.results = [self._item_result(cid, params) for cid, params in batch.items]
                batch.ended_at = batch.created_at + batch.delay

    def _item_result(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            message = self.make_message(params)
        except _RequestError as exc:
            error = error_payload(exc.status, exc.message, None)
            return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}
