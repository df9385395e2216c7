"""The read view's helpers: a first read embeds its questions while its index is built."""

from __future__ import annotations

import anyio
import pytest

from executive.memory.store.base import StoreError, while_preparing

pytestmark = pytest.mark.anyio


class View:
    """Records what the reader's helpers ask of it. ``prepare`` and the index each wait for
    the other to have started, so they finish only if they run at once."""

    def __init__(self, fail: bool = False) -> None:
        self.prepared: list[list[str]] = []
        self.index_started = anyio.Event()
        self.prepare_started = anyio.Event()
        self.fail = fail

    async def prepare(self, queries: list[str]) -> None:
        self.prepare_started.set()
        await self.index_started.wait()
        if self.fail:
            raise StoreError("prepare: the model is gone")
        self.prepared.append(queries)

    async def index(self) -> str:
        self.index_started.set()
        await self.prepare_started.wait()
        return "index"


async def test_the_index_is_built_while_the_questions_are_embedded():
    view = View()
    # One after the other, each would wait for the other for ever: the limit turns that
    # deadlock into a failure (a correct run takes no time at all).
    with anyio.fail_after(60):
        assert await while_preparing(view, ["a?", "b?"], view.index) == "index"  # type: ignore[arg-type]
    assert view.prepared == [["a?", "b?"]]


async def test_a_failure_of_either_is_raised_as_itself_the_index_first():
    view = View(fail=True)
    with pytest.raises(StoreError, match="the model is gone"), anyio.fail_after(60):
        await while_preparing(view, ["a?"], view.index)  # type: ignore[arg-type]

    view = View()

    async def broken() -> str:
        view.index_started.set()
        raise StoreError("list: the server is gone")

    with pytest.raises(StoreError, match="the server is gone"), anyio.fail_after(60):
        await while_preparing(view, ["a?"], broken)  # type: ignore[arg-type]


async def test_a_view_without_prepare_just_builds_the_index():
    async def index() -> int:
        return 7

    assert await while_preparing(object(), ["a?"], index) == 7  # type: ignore[arg-type]
