"""Where a store URL points: ``s3://bucket/prefix``, and the local folder that mirrors it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import StorageError

STORE_DIR_ENV = "EVALKIT_STORE_DIR"
"""Where local copies of stored runs and cache entries are kept (default ``.evalkit/store``)."""

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/")
_SUPPORTED = (
    "s3://bucket/prefix (S3, MinIO, R2, or GCS through its S3 API, with AWS_ENDPOINT_URL), or a local folder"
)


def is_url(value: object) -> bool:
    """Whether `value` names a store (``s3://...``, or any ``scheme://``) rather than a local path.

    ``s3:/bucket/...`` counts too: that is what ``pathlib.Path("s3://bucket/...")`` makes of a URL."""
    if not isinstance(value, str | os.PathLike):
        return False
    text = os.fspath(value)
    match = _SCHEME.match(text)
    return match is not None and len(match.group(1)) > 1  # C:/ is a drive, not a scheme


@dataclass(frozen=True)
class Location:
    """A place in a bucket: ``s3://<bucket>/<prefix>``."""

    bucket: str
    prefix: str = ""

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/") if self.prefix else f"s3://{self.bucket}"

    def __str__(self) -> str:
        return self.url

    def key(self, name: str) -> str:
        """The object key of `name` under this location."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def child(self, name: str) -> Location:
        return Location(self.bucket, self.key(name.strip("/")))

    @property
    def name(self) -> str:
        return self.prefix.rsplit("/", 1)[-1]

    @property
    def local(self) -> Path:
        """The local folder that mirrors this location (under ``$EVALKIT_STORE_DIR`` or ``.evalkit/store``)."""
        root = Path(os.environ.get(STORE_DIR_ENV) or ".evalkit/store").expanduser().absolute()
        return root.joinpath(self.bucket, *self.prefix.split("/")) if self.prefix else root / self.bucket


def parse_url(value: str | os.PathLike[str]) -> Location:
    """The location a store URL names; a scheme other than s3, or no bucket, is a `StorageError` saying what
    is accepted."""
    text = os.fspath(value)
    match = _SCHEME.match(text)
    if match is None:
        raise StorageError(f"{text}: not a store URL; use {_SUPPORTED}")
    scheme = match.group(1).lower()
    if scheme != "s3":
        raise StorageError(f"{text}: {scheme}:// is not supported; use {_SUPPORTED}")
    rest = text[match.end() :].lstrip("/")  # s3://b/p, and s3:/b/p as a Path makes of it
    bucket, _, prefix = rest.partition("/")
    prefix = re.sub(r"/+", "/", prefix).strip("/")
    if not bucket:
        raise StorageError(f"{text}: no bucket named; write s3://<bucket>/<prefix>, e.g. s3://evals/runs")
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise StorageError(
            f"{text}: {bucket!r} is not a bucket name; a bucket is 3-63 lower-case letters, digits, dots and "
            "hyphens, starting and ending with a letter or digit"
        )
    if any(part in (".", "..") for part in prefix.split("/")):
        raise StorageError(
            f"{text}: '.' and '..' cannot be part of a store URL; write the prefix out in full"
        )
    return Location(bucket, prefix)
