"""What every dashboard route reads: the settings, the observer, the memory runtime, the
daemon's own status, and a short cache of figures that list the whole store."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from executive.home import Home
from executive.memory.runtime import MemoryRuntime
from executive.observe import Observer
from executive.settings import Settings

T = TypeVar("T")


# Figures that list the whole store are computed at most this often, however many tabs
# refresh and however often Prometheus scrapes: the store's one thread also serves the hooks.
STORE_FIGURES_SECONDS = 15.0


@dataclass
class Context:
    """What the routes read. ``status`` is the daemon's own report (``executive status``)."""

    settings: Settings
    observer: Observer
    runtime: MemoryRuntime
    status: Callable[[], dict[str, Any]]
    _cache: dict[str, tuple[float, Any]] = field(default_factory=dict)

    async def cached(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < STORE_FIGURES_SECONDS:
            return cast(T, hit[1])
        value = await compute()
        self._cache[key] = (now, value)
        return value

    @property
    def home(self) -> Home:
        return Home(self.settings.home)
