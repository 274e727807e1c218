"""Objects in a bucket, through obstore: get, put (create-only or if-unchanged), list, delete; and the store's
failures said as one line with what to do.

obstore (the Rust object_store crate that polars also speaks) reads the standard AWS variables
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ...), so S3, MinIO, R2 and
GCS's S3 API all work, and its conditional puts are what make a cache write create-only and a run's manifest a
compare-and-swap.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from evalkit._store._url import Location
from evalkit.errors import StorageError

if TYPE_CHECKING:
    from obstore.store import S3Store

T = TypeVar("T")

_stores: dict[tuple[Any, ...], S3Store] = {}
_started: set[int] = set()


class _Refused(Exception):
    """A conditional put found the object there (create-only), or another version (if-match)."""


@dataclass(frozen=True)
class Got:
    data: bytes
    etag: str | None


def started_here() -> bool:
    """Whether this process has used a store: its I/O runtime then does not survive a fork, so a run that uses
    one keeps to threads."""
    return os.getpid() in _started


def endpoint() -> str:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or "AWS S3"


_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_REGION", "AWS_DEFAULT_REGION",
        "AWS_SESSION_TOKEN", "EVALKIT_STORE_RETRIES")  # fmt: skip


def _store(bucket: str) -> S3Store:
    # one client per process, bucket and settings: a fork or a changed variable gets a new one
    key = (os.getpid(), bucket, *(os.environ.get(name) for name in _ENV))
    made = _stores.get(key)
    if made is not None:
        return made
    from obstore.store import S3Store

    url = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    options: dict[str, Any] = {"connect_timeout": "5s", "timeout": "120s"}
    if url and url.startswith("http://"):
        options["allow_http"] = True  # a local MinIO or test endpoint: the URL itself says plain HTTP
    raw = os.environ.get("EVALKIT_STORE_RETRIES", "3")
    if not raw.isdigit():
        raise StorageError(f"EVALKIT_STORE_RETRIES={raw!r}: give a whole number of retries, e.g. 3")
    retries = int(raw)
    retry = {
        "max_retries": retries,
        "backoff": {
            "init_backoff": dt.timedelta(milliseconds=100),
            "max_backoff": dt.timedelta(seconds=5),
            "base": 2.0,
        },
        "retry_timeout": dt.timedelta(seconds=60),
    }
    config: dict[str, Any] = {"endpoint": url} if url else {}
    if not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
        # requests are signed for a region: MinIO and moto take any, AWS wants the bucket's (set AWS_REGION)
        config["region"] = "us-east-1"
    made = S3Store(bucket, config=config, client_options=options, retry_config=retry)  # type: ignore[arg-type]
    _stores[key] = made
    _started.add(os.getpid())
    return made


def _message(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def storage_error(exc: BaseException, where: Location, doing: str) -> StorageError:
    """One line for a failure of the store: the URL, what was being done, what the store said, what to do."""
    from obstore import exceptions as ox

    text = _message(exc)
    head = f"{where.url}: cannot {doing}"
    if "169.254.169.254" in text or (
        isinstance(exc, ox.UnauthenticatedError) and "credential" in text.lower()
    ):
        return StorageError(
            f"{head}: no credentials. Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a "
            "store other than AWS S3)"
        )
    if "NoSuchBucket" in text:
        return StorageError(
            f"{head}: bucket {where.bucket!r} does not exist at {endpoint()}. Create it (aws s3 mb "
            f"s3://{where.bucket}) or fix the bucket in the URL"
        )
    if "PermanentRedirect" in text:
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return StorageError(
            f"{head}: the bucket {where.bucket!r} is in another region than the one asked ({region}). Set "
            "AWS_REGION to the bucket's region"
        )
    if any(
        s in text for s in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken")
    ):
        return StorageError(
            f"{head}: the store refused the credentials ({_code(text)}). Check AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_SESSION_TOKEN)"
        )
    if isinstance(exc, ox.PermissionDeniedError) or "AccessDenied" in text or "403 Forbidden" in text:
        return StorageError(
            f"{head}: access denied. Check that AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are right and may "
            f"{doing} here: evalkit needs s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket on the "
            "prefix"
        )
    if "error sending request" in text or "connect" in text.lower() or "dns" in text.lower():
        return StorageError(
            f"{head}: cannot reach the store at {endpoint()}. Check AWS_ENDPOINT_URL and that the store is up"
        )
    return StorageError(f"{head}: {_clip(text)}")


def _code(text: str) -> str:
    for code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken"):
        if code in text:
            return code
    return "refused"


def _clip(text: str, width: int = 300) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class Bucket:
    """The objects of one location's bucket; keys are full keys within the bucket."""

    def __init__(self, where: Location) -> None:
        self.where = where

    def _at(self, key: str) -> Location:
        return Location(self.where.bucket, key)

    def get(self, key: str) -> Got | None:
        """The object's bytes and ETag, or None when there is none."""
        import obstore

        def read() -> Got:
            result = obstore.get(_store(self.where.bucket), key)
            return Got(bytes(result.bytes()), result.meta.get("e_tag"))

        return self._read(key, read)

    def head(self, key: str) -> str | None:
        """The object's ETag ("" when the store gives none), or None when there is none."""
        import obstore

        return self._read(key, lambda: obstore.head(_store(self.where.bucket), key).get("e_tag") or "")

    def _read(self, key: str, read: Callable[[], T]) -> T | None:
        """What `read` gives, None for a missing object; a missing bucket or any other failure a StorageError."""
        try:
            return read()
        except FileNotFoundError as exc:
            if "NoSuchBucket" in _message(exc):
                raise storage_error(exc, self._at(key), "read") from None
            return None
        except Exception as exc:
            raise storage_error(exc, self._at(key), "read") from None

    def put(self, key: str, data: bytes) -> str:
        """Write the object, replacing any; returns its ETag ("" when the store gives none)."""
        return self._put(key, data, "overwrite")

    def put_if(
        self, key: str, data: bytes, *, create: bool = False, if_match: str | None = None
    ) -> str | None:
        """Write the object only if absent (`create`) or only if its ETag is still `if_match`; returns the new ETag
        ("" when the store gives none), or None when the condition did not hold (nothing written)."""
        try:
            return self._put(key, data, "create" if create else {"e_tag": if_match})
        except _Refused:
            return None

    def _put(self, key: str, data: bytes, mode: Any) -> str:
        import obstore
        from obstore import exceptions as ox

        try:
            written = obstore.put(_store(self.where.bucket), key, data, mode=mode)
        except (ox.AlreadyExistsError, ox.PreconditionError):
            raise _Refused(key) from None
        except FileNotFoundError as exc:
            if isinstance(mode, dict) and "NoSuchBucket" not in _message(exc):
                raise _Refused(key) from None  # deleted since: not the version the caller read
            raise storage_error(exc, self._at(key), "write") from None
        except Exception as exc:
            raise storage_error(exc, self._at(key), "write") from None
        return written.get("e_tag") or ""

    def delete(self, key: str) -> None:
        import obstore

        try:
            obstore.delete(_store(self.where.bucket), key)
        except FileNotFoundError:
            return
        except Exception as exc:
            raise storage_error(exc, self._at(key), "delete") from None

    def keys(self, prefix: str) -> list[str]:
        """Every object key under `prefix` (a folder: ``prefix/...``)."""
        found = self.keys_at_most(prefix, None)
        assert found is not None
        return found

    def keys_at_most(self, prefix: str, limit: int | None) -> list[str] | None:
        """Every object key under `prefix`, or None when there are more than `limit` (the listing stops there)."""
        import obstore

        found: list[str] = []
        try:
            for batch in obstore.list(
                _store(self.where.bucket), prefix=prefix.rstrip("/") + "/" if prefix else None
            ):
                found.extend(meta["path"] for meta in batch)
                if limit is not None and len(found) > limit:
                    return None
        except Exception as exc:
            raise storage_error(exc, self._at(prefix), "list") from None
        return sorted(found)

    def usage(self, prefix: str) -> tuple[int, int]:
        """How many objects are under `prefix`, and their bytes."""
        import obstore

        count = size = 0
        try:
            for batch in obstore.list(
                _store(self.where.bucket), prefix=prefix.rstrip("/") + "/" if prefix else None
            ):
                count += len(batch)
                size += sum(int(meta.get("size") or 0) for meta in batch)
        except Exception as exc:
            raise storage_error(exc, self._at(prefix), "list") from None
        return count, size

    def folders(self, prefix: str) -> list[str]:
        """The keys of the folders directly under `prefix`."""
        import obstore

        try:
            found = obstore.list_with_delimiter(_store(self.where.bucket), prefix or None)
        except Exception as exc:
            raise storage_error(exc, self._at(prefix), "list") from None
        return sorted(str(p).rstrip("/") for p in found["common_prefixes"])
