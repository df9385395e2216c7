"""The read view's helpers: a first read embeds its questions while its index is built."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from executive.memory.store.base import StoreError, while_preparing

pytestmark = pytest.mark.anyio

STEPS = 100  # scheduler turns a side gives the other to start: no clock involved


async def _started(event: anyio.Event) -> bool:
    """Whether the other side has started, within ``STEPS`` turns of the event loop. Run one
    after the other, it never does: the test fails instead of waiting for ever."""
    for _ in range(STEPS):
        if event.is_set():
            return True
        await anyio.lowlevel.checkpoint()
    return event.is_set()


class View:
    """Records what the reader's helpers ask of it, and whether ``prepare`` and the index
    each saw the other running."""

    def __init__(self, fail: bool = False) -> None:
        self.prepared: list[list[str]] = []
        self.index_started = anyio.Event()
        self.prepare_started = anyio.Event()
        self.overlapped: list[bool] = []
        self.fail = fail

    async def prepare(self, queries: list[str]) -> None:
        self.prepare_started.set()
        self.overlapped.append(await _started(self.index_started))
        if self.fail:
            raise StoreError("prepare: the model is gone")
        self.prepared.append(queries)

    async def index(self) -> str:
        self.index_started.set()
        self.overlapped.append(await _started(self.prepare_started))
        return "index"


async def test_the_index_is_built_while_the_questions_are_embedded():
    view = View()
    assert await while_preparing(view, ["a?", "b?"], view.index) == "index"  # type: ignore[arg-type]
    assert view.prepared == [["a?", "b?"]]
    assert view.overlapped == [True, True]


async def test_a_failure_of_either_is_raised_as_itself_the_index_first():
    view = View(fail=True)
    with pytest.raises(StoreError, match="the model is gone"):
        await while_preparing(view, ["a?"], view.index)  # type: ignore[arg-type]
    assert view.overlapped == [True, True]

    view = View()

    async def broken() -> str:
        view.index_started.set()
        raise StoreError("list: the server is gone")

    with pytest.raises(StoreError, match="the server is gone"):
        await while_preparing(view, ["a?"], broken)  # type: ignore[arg-type]


async def test_a_view_without_prepare_just_builds_the_index():
    async def index() -> int:
        return 7

    assert await while_preparing(object(), ["a?"], index) == 7  # type: ignore[arg-type]
