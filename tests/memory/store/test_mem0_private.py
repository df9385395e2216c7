"""The private parts of mem0 we use are where the pinned version had them.

If this fails after a mem0 upgrade, read ``executive/memory/store/mem0_private.py``: each
function there says what it relies on and why; adapt it, then the pin.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest

pytestmark = [pytest.mark.store, pytest.mark.anyio]


def parameters(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def test_the_pin_is_the_version_the_private_calls_were_written_for():
    assert version("mem0ai") == "2.2.1"


def test_every_private_part_is_there_with_the_parameters_we_pass(tmp_path):
    from executive.memory.store import mem0env

    mem0env.prepare(tmp_path)  # telemetry off and MEM0_DIR set before mem0 is imported
    from mem0.memory.main import Memory, _build_filters_and_metadata
    from mem0.memory.storage import SQLiteManager
    from mem0.utils.lemmatization import lemmatize_for_bm25
    from mem0.vector_stores.qdrant import Qdrant

    assert {"user_id", "agent_id", "run_id", "input_metadata"} <= set(
        parameters(_build_filters_and_metadata)
    )
    assert parameters(Memory._create_memory)[:4] == [
        "self",
        "data",
        "existing_embeddings",
        "metadata",
    ]
    assert {
        "memory_id",
        "old_memory",
        "new_memory",
        "event",
        "created_at",
        "updated_at",
        "role",
    } <= set(parameters(SQLiteManager.add_history))
    assert "connection" in inspect.getsource(SQLiteManager.__init__)
    assert parameters(Qdrant._create_filter)[:2] == ["self", "filters"]
    assert lemmatize_for_bm25("running tests") == lemmatize_for_bm25("running tests")


async def test_a_batched_add_stores_what_add_stores(tmp_path):
    from executive.memory.store.base import Filter, NewMemory
    from tests.memory.conftest import meta, open_store, scope

    store = await open_store(tmp_path)
    try:
        single = await store.add(
            "Pin uv in CI.", scope(), meta(1), created_at="2026-12-01T00:00:00+00:00"
        )
        (batched,) = await store.add_many(
            [NewMemory("Pin ruff in CI.", scope(), meta(2), "2026-12-01T00:00:00+00:00")]
        )
        one, two = (await store.get(single.memory_id)), (await store.get(batched.memory_id))
        assert set(one.metadata) - {"key", "type", "confidence", "app_id"} == set(two.metadata) - {
            "key",
            "type",
            "confidence",
            "app_id",
        }
        assert (one.user_id, one.agent_id, one.run_id) == (two.user_id, two.agent_id, two.run_id)
        assert [h["event"] for h in await store.history(batched.memory_id)] == ["ADD"]
        assert await store.count(Filter(user_id="agent-test")) == 2
    finally:
        await store.close()
