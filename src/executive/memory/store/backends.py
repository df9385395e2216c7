"""The stores the daemon can keep its memory in: one table, a name to how it opens.

``EXECUTIVE_STORE`` names a row. Each row imports its backend when it opens it, so memory
off, or another backend, never loads mem0, the embedding model or psycopg. A new backend is
a row here, its name among the settings' choices (``settings.py``) and its module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from executive.home import Home
from executive.memory.store.base import Store
from executive.settings import Settings


async def _local(settings: Settings) -> Store:
    """mem0's open-source Memory on a Qdrant Edge shard (or a Qdrant server), embedded."""
    from executive.memory.store.embedder import use_threads
    from executive.memory.store.local import LocalStore

    home = Home(settings.home)
    use_threads(settings.embed_threads)  # before any encoder loads: a session keeps its count
    key = settings.qdrant_api_key
    return await LocalStore.open(
        home.store_dir,
        home.mem0_dir,
        qdrant_url=settings.qdrant_url,
        qdrant_api_key=key.get_secret_value() if key else None,
        embedder=settings.embedder,
        models_dir=settings.models_dir,
    )


async def _postgres(settings: Settings) -> Store:
    """Postgres with pgvector, which several executives can share."""
    from executive.memory.store.embedder import use_threads
    from executive.memory.store.postgres import PostgresStore

    assert settings.store_url is not None  # settings refuse postgres without a URL
    use_threads(settings.embed_threads)
    return await PostgresStore.open(
        settings.store_url.get_secret_value(),
        Home(settings.home).mem0_dir,
        embedder=settings.embedder,
        models_dir=settings.models_dir,
        timeout_seconds=settings.store_timeout_seconds,
        pool_size=settings.store_pool_size,
    )


async def _platform(settings: Settings) -> Store:
    """The mem0 Platform, over its HTTP API."""
    from executive.memory.store.platform import PlatformStore

    assert settings.mem0_api_key is not None  # settings refuse platform without a key
    return await PlatformStore.open(
        settings.mem0_api_key.get_secret_value(),
        host=settings.mem0_host,
        poll_seconds=settings.platform_poll_seconds,
        poll_timeout_seconds=settings.platform_poll_timeout_seconds,
        mem0_dir=Home(settings.home).mem0_dir,
    )


async def _inmemory(settings: Settings) -> Store:
    """A journaled fake with a word-hashing embedder, for tests and code built on executive."""
    from executive.memory.store.inmemory import InMemoryStore

    return await InMemoryStore.open(Home(settings.home).store_dir)


BACKENDS: dict[str, Callable[[Settings], Awaitable[Store]]] = {
    "local": _local,
    "postgres": _postgres,
    "platform": _platform,
    "inmemory": _inmemory,
}
