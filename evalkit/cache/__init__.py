"""The content-addressed on-disk response cache: keys, entries, the store and its maintenance."""

from evalkit.cache._cache import (
    CACHE_DIR_ENV,
    CACHE_FORMAT_VERSION,
    MAX_PRUNE_DAYS,
    MESSAGES_ENDPOINT,
    CacheEntry,
    CacheError,
    CacheMiss,
    CacheMode,
    CorruptCacheEntry,
    CorruptCacheEntryWarning,
    ResponseCache,
    cache_key,
    prune,
    sanitize_request,
    scan,
)

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_FORMAT_VERSION",
    "MAX_PRUNE_DAYS",
    "MESSAGES_ENDPOINT",
    "CacheEntry",
    "CacheError",
    "CacheMiss",
    "CacheMode",
    "CorruptCacheEntry",
    "CorruptCacheEntryWarning",
    "ResponseCache",
    "cache_key",
    "prune",
    "sanitize_request",
    "scan",
]
