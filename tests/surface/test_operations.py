"""The `executive mem` surface: ids as people see them (on the in-memory store: the ids are
the surface's business; every store gives uuids, the contract test holds them to it)."""

from __future__ import annotations

import pytest

from executive.memory.runtime import MemoryRuntime
from executive.settings import load_settings
from executive.surface.operations import MemorySurface, SurfaceError
from executive.testing import InMemoryStore
from tests.memory.payloads import partial

pytestmark = pytest.mark.anyio


@pytest.fixture
async def surface(tmp_path):
    settings = load_settings(tmp_path, memory_enabled=True, user_id="agent-test")
    return MemorySurface(MemoryRuntime(settings, store=await InMemoryStore.open()))


async def test_the_eight_characters_a_pack_shows_are_enough_to_find_a_memory(surface):
    added = await surface.add([partial("semantic")])
    memory_id = added["results"][0]["memory_id"]
    short = memory_id[:8]
    assert (await surface.get(short))["id"] == memory_id
    assert (await surface.history(short))["id"] == memory_id
    assert (await surface.get(memory_id))["id"] == memory_id
    assert (await surface.delete(short))["id"] == memory_id
    with pytest.raises(SurfaceError, match=f"no memory with id {short}"):
        await surface.get(short)


async def test_a_prefix_too_short_to_mean_anything_is_refused(surface):
    await surface.add([partial("semantic")])
    with pytest.raises(SurfaceError, match="at least 6 characters"):
        await surface.get("ab")
