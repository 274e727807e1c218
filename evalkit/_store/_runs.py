"""A run on a store: published from its local folder (files first, under a fresh generation; the manifest last,
conditionally), pulled back into a local copy, and listed.

On the store a run is::

    <run>/manifest.json                 the run's manifest, plus "published": {generation, files: {name: sha256}}
    <run>/<generation>/results.parquet  ... and every other file of the run folder

A reader goes through the manifest, so it sees one generation whole or the one before, never half of a publish;
a publish killed part-way leaves only objects no manifest names. The manifest is written only if absent (a new
run) or only if it is still the version this copy came from (a resume): of two writers of one run id, the second
is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._failpoints import reached
from evalkit._fs import atomic_write_bytes
from evalkit._store._objects import Bucket
from evalkit._store._url import Location
from evalkit.errors import StorageError

MANIFEST = "manifest.json"
STATE = ".published.json"
"""In a local copy: the store URL, the manifest ETag and generation it matches (its last publish or pull)."""


@dataclass(frozen=True)
class Published:
    url: str
    etag: str | None
    generation: str


def _state(local: Path) -> Published | None:
    try:
        data = json.loads((local / STATE).read_text(encoding="utf-8"))
        return Published(str(data["url"]), data.get("etag"), str(data["generation"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_state(local: Path, state: Published) -> None:
    text = json.dumps({"url": state.url, "etag": state.etag, "generation": state.generation}, indent=2)
    atomic_write_bytes(local / STATE, text.encode("utf-8") + b"\n")


def _files(local: Path) -> list[Path]:
    """The run folder's files to publish: all but the manifest, the lock and hidden files (temps, state)."""
    found = []
    for path in sorted(local.rglob("*")):
        parts = path.relative_to(local).parts
        if path.is_file() and not any(p.startswith(".") for p in parts) and parts != (MANIFEST,):
            found.append(path)
    return found


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def publish_run(local: Path, where: Location) -> str:
    """Publish the run folder `local` to `where`; returns the URL. A `StorageError` if another writer published
    this run since this copy was made (nothing of this publish is left on the store then)."""
    bucket = Bucket(where)
    before = _state(local)
    if before is not None and before.url != where.url:
        before = None  # a copy pulled from elsewhere, published anew
    manifest = json.loads((local / MANIFEST).read_text(encoding="utf-8"))
    generation = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
    listed: dict[str, dict[str, Any]] = {}
    for path in _files(local):
        name = path.relative_to(local).as_posix()
        data = path.read_bytes()
        bucket.put(where.key(f"{generation}/{name}"), data)
        listed[name] = {"sha256": _sha(data), "size": len(data)}
        reached("publish:file")
    manifest["published"] = {"generation": generation, "files": listed}
    body = (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
    etag = bucket.put_if(
        where.key(MANIFEST), body, create=before is None, if_match=before.etag if before else None
    )
    if etag is None:
        for name in listed:
            with contextlib.suppress(StorageError):
                bucket.delete(where.key(f"{generation}/{name}"))
        raise StorageError(
            f"{where.url}: another writer published this run first, so this copy was not published (it is kept "
            f"in {local}). Run again with another --out, or pull theirs with --resume {where.url}"
        ) from None
    _save_state(local, Published(where.url, etag, generation))
    if before is not None and before.generation != generation:
        with contextlib.suppress(StorageError):  # an old generation left behind costs space, nothing else
            for key in bucket.keys(where.key(before.generation)):
                bucket.delete(key)
    return where.url


def exists(where: Location) -> bool:
    """Whether a run is published at `where`."""
    return Bucket(where).head(where.key(MANIFEST)) is not None


def pull_run(where: Location, local: Path | None = None) -> Path:
    """The local copy of the run at `where`, brought up to date with the store; returns its folder.

    A copy whose last publish or pull is still the store's version is kept as it is (it may be ahead: a run that
    finished here and was stopped while publishing). A run never published but begun here is its local copy."""
    local = local or where.local
    bucket = Bucket(where)
    for _ in range(3):  # a newer publish may remove the generation being read: read the manifest again
        got = bucket.get(where.key(MANIFEST))
        state = _state(local)
        if got is None:
            if (local / MANIFEST).is_file() and state is None:
                return local  # begun here, never published: the local copy is the run
            raise StorageError(
                f"{where.url}: no run here (no {MANIFEST}). List the runs with "
                f"ek.runs('{where.url.rsplit('/', 1)[0]}') or check the run id"
            )
        if (
            state is not None
            and state.url == where.url
            and state.etag == got.etag
            and (local / MANIFEST).is_file()
        ):
            return local
        try:
            document = json.loads(got.data)
            published = document["published"]
            generation, files = str(published["generation"]), dict(published["files"])
        except (ValueError, KeyError, TypeError):
            raise StorageError(
                f"{where.url}/{MANIFEST}: not a manifest evalkit published (no 'published' generation); "
                "publish runs with evalkit run --runs-dir s3://..."
            ) from None
        try:
            _download(bucket, where, local, generation, files)
        except _Gone:
            continue
        atomic_write_bytes(local / MANIFEST, got.data)  # last: the copy is whole before it says so
        _save_state(local, Published(where.url, got.etag, generation))
        return local
    raise StorageError(f"{where.url}: the run changed three times while being read; try again")


class _Gone(Exception):
    pass


def _download(bucket: Bucket, where: Location, local: Path, generation: str, files: dict[str, Any]) -> None:
    local.mkdir(parents=True, exist_ok=True)
    for name, info in files.items():
        if ".." in name.split("/") or name.startswith("/"):
            raise StorageError(f"{where.url}/{MANIFEST}: names a file outside the run ({name!r}); not read")
        got = bucket.get(where.key(f"{generation}/{name}"))
        if got is None:
            raise _Gone(name)
        if _sha(got.data) != info.get("sha256"):
            raise StorageError(
                f"{where.url}/{generation}/{name}: its content does not match the digest the manifest gives; "
                "the object was changed after it was published. Publish the run again from a good copy"
            )
        atomic_write_bytes(local / name, got.data)
    keep = set(files) | {MANIFEST}
    for path in _files(local):
        if path.relative_to(local).as_posix() not in keep:
            path.unlink()  # a file the store's version no longer has (an older report)


def list_runs(where: Location) -> list[Location]:
    """The runs published directly under `where` and one level down (as `ek.runs` looks in a folder)."""
    bucket = Bucket(where)
    base = where.prefix.rstrip("/")
    found = []
    for key in bucket.keys(base):
        rest = key[len(base) + 1 :] if base else key
        parts = rest.split("/")
        if parts[-1] == MANIFEST and len(parts) in (2, 3):
            found.append(Location(where.bucket, key[: -len(MANIFEST) - 1]))
    return found


def check_can_publish(where: Location) -> None:
    """Before a run is paid for: the store answers, the bucket exists, these credentials may write there, and no
    run is published at `where` yet."""
    bucket = Bucket(where)
    if bucket.head(where.key(MANIFEST)) is not None:
        raise StorageError(
            f"{where.url}: a run is already published there; choose another --out, or finish it with "
            f"--resume {where.url}"
        )
    probe = where.key(f".write-probe-{secrets.token_hex(6)}")
    bucket.put(probe, b"probe\n")
    bucket.delete(probe)
