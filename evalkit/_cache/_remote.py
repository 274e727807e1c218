"""The response cache on a store: entries are objects named like their files, written only if absent, read
through the local layer (the local folder mirroring the store's prefix)."""

from __future__ import annotations

import threading
import uuid

from evalkit._store import Bucket, Location

LIST_LIMIT = 20_000
"""Up to this many entries, a cache on a store is listed once instead of asked for each key it lacks."""


class RemoteEntries:
    """The entries under one store location (``s3://bucket/prefix/<key[:2]>/<key>.json``)."""

    def __init__(self, where: Location) -> None:
        self.where = where
        self._bucket = Bucket(where)
        self._lock = threading.Lock()
        self._bad: dict[str, str] = {}
        """Keys whose stored entry failed its check here, with its ETag: replaced (only that version) when the
        response is fetched again."""
        self.fetched = 0
        self.written = 0
        self._listed: set[str] | None = None
        self._listing_done = False

    def _known(self) -> set[str] | None:
        """The keys the store held when first asked (listed once, up to LIST_LIMIT entries; None past that): a
        key not among them is not looked up, so a cold run sends no request per miss. An entry another machine
        writes after the listing is not seen by this cache object (its request is made again; the first
        recording stays on the store)."""
        with self._lock:
            if not self._listing_done:
                found = self._bucket.keys_at_most(self.where.prefix, LIST_LIMIT)
                if found is not None:
                    name = len(self.where.prefix) + 1 if self.where.prefix else 0
                    self._listed = {k[name:].rpartition("/")[2].removesuffix(".json") for k in found}
                self._listing_done = True
            return self._listed

    def _key(self, key: str) -> str:
        return self.where.key(f"{key[:2]}/{key}.json")

    def may_hold(self, key: str) -> bool:
        """Whether the store may hold `key` (it was listed, or the store was too large to list)."""
        known = self._known()
        return known is None or key in known

    def fetch(self, key: str) -> tuple[bytes, str | None] | None:
        """The stored entry's bytes and ETag, or None when the store has none."""
        if not self.may_hold(key):
            return None
        got = self._bucket.get(self._key(key))
        if got is None:
            return None
        with self._lock:
            self.fetched += 1
        return got.data, got.etag

    def mark_bad(self, key: str, etag: str | None) -> None:
        if etag is not None:
            with self._lock:
                self._bad[key] = etag

    def store(self, key: str, payload: bytes, *, replace: bool = False) -> None:
        """Write the entry if the store has none (or, with `replace`, whatever it has). A stored entry that failed
        its check here is replaced if it is still that version; another writer's entry for the key is kept (the
        same request: the first recording wins everywhere, as it does in one folder)."""
        with self._lock:
            bad = self._bad.pop(key, None)
        if replace:
            self._bucket.put(self._key(key), payload)
        elif self._bucket.put_if(self._key(key), payload, create=bad is None, if_match=bad) is None:
            return
        with self._lock:
            self.written += 1

    def check_writable(self) -> None:
        """Write and delete a probe object: a store that refuses writes fails before a run starts."""
        probe = self.where.key(f"write-probe-{uuid.uuid4().hex[:12]}")
        self._bucket.put(probe, b"probe\n")
        self._bucket.delete(probe)

    def check_readable(self) -> None:
        """List the prefix: a missing bucket, no credentials or no endpoint fail before a run starts."""
        self._bucket.folders(self.where.prefix)
