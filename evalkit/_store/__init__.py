"""Runs and cache entries on an object store (``s3://bucket/prefix``), mirrored in local folders.

A run journals in a local folder while it runs and is published when it finishes or stops; a reader pulls a
copy. The response cache reads through a local layer. See docs/teams.md.
"""

from evalkit._lazy import attach
from evalkit._store._objects import Bucket, started_here, storage_error
from evalkit._store._runs import check_can_publish, exists, list_runs, publish_run, pull_run
from evalkit._store._url import STORE_DIR_ENV, Location, is_url, parse_url

__getattr__, __dir__, __all__ = attach(__name__, __file__)
