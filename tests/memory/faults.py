"""Fault injection around a real store: it fails or hangs on demand, else delegates."""

from __future__ import annotations

from typing import Any

import anyio

from executive.memory.store.base import StoreError


class FaultyStore:
    """Wraps a real store. ``mode`` is None (healthy), "raise" or "hang" for the named calls."""

    def __init__(self, real: Any, calls: tuple[str, ...] = ("add",)) -> None:
        self._real = real
        self.calls = calls
        self.mode: str | None = None
        self.attempts: dict[str, int] = {}
        self.name = getattr(real, "name", "faulty")

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._real, name)
        if name not in self.calls:
            return target

        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.attempts[name] = self.attempts.get(name, 0) + 1
            if self.mode == "raise":
                raise StoreError(f"{name} failed: injected outage")
            if self.mode == "hang":
                await anyio.sleep_forever()
            return await target(*args, **kwargs)

        return wrapped
