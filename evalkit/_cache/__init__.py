"""The content-addressed on-disk response cache: keys, entries, the store and its maintenance.

Every request the toolkit sends (a model call, a judge call) can be answered from the cache, so a rerun costs
nothing and returns exactly what the first run saw. Entries are plain, pretty-printed JSON files, so a team can
commit the cache to git and replay judged evals in CI without an API key (``mode="replay"``).

Layout::

    <directory>/<key[:2]>/<key>.json

where ``key`` is the sha256 of the canonical JSON of
``{"format": CACHE_FORMAT_VERSION, "endpoint": ..., "request": ..., "repeat": ...}``
(see :func:`cache_key`). API keys and headers never reach the key or the file: secret-named fields are removed
from the request first (see :func:`sanitize_request`).

When the API endpoint is not the default one (``ANTHROPIC_BASE_URL`` or the client's base URL names another
server), its URL, without credentials, joins the hashed document as ``"base_url"``.

Each file holds ``{"format", "key", "endpoint", "repeat", "request", "response", "digest", "meta"}`` (and
``"base_url"`` when it is part of the key); ``digest`` is checked on every read (see docs/cache.md); ``meta`` records
``created_at``, ``model``, ``input_tokens``, ``output_tokens``, ``cost_usd`` and anything else the caller adds.

The directory is, in order of precedence: the ``directory`` argument, the ``EVALKIT_CACHE_DIR`` environment
variable, ``.evalkit/cache`` under the current directory.
"""

from evalkit._cache._entries import CacheEntry
from evalkit._cache._keys import CACHE_FORMAT_VERSION, MESSAGES_ENDPOINT, cache_key, sanitize_request
from evalkit._cache._layout import CACHE_DIR_ENV, DEFAULT_CACHE_DIR, default_cache_dir
from evalkit._cache._maintenance import (
    MAX_PRUNE_DAYS,
    CacheSummary,
    PruneReport,
    check_older_than_days,
    prune,
    scan,
)
from evalkit._cache._origin import BASE_URL_ENV, DEFAULT_BASE_URL, api_origin
from evalkit._cache._stats import CacheStats
from evalkit._cache._store import CacheMode, CacheModeName, ResponseCache
from evalkit._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__)
