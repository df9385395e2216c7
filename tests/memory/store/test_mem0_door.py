"""The private parts of mem0 we use are where the pinned version had them.

If this fails after a mem0 upgrade, read ``executive/memory/store/mem0_door.py``: each
function there says what it relies on and why; adapt it, then the pin.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib.metadata import version

import pytest

from tests.conftest import REPO, clean_env

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
    assert parameters(lemmatize_for_bm25) == ["text"]


class Recorder:
    """What mem0's create hands its vector store and history: both ``self.vector_store`` and
    ``self.db`` of a ``Memory``."""

    def __init__(self) -> None:
        self.vector_store = self.db = self
        self.payloads: list[dict] = []
        self.history: list[tuple] = []

    def insert(self, vectors: list, ids: list, payloads: list[dict]) -> None:
        self.payloads += payloads

    def add_history(self, *args: object, **kwargs: object) -> None:
        self.history.append((args[1:4], kwargs.get("created_at"), kwargs.get("updated_at")))


def test_a_memory_created_under_its_id_is_stored_as_mem0_stores_a_new_one(tmp_path):
    from executive.memory.store import mem0env

    mem0env.prepare(tmp_path)
    from mem0.memory.main import Memory

    from executive.memory.store.base import NewMemory
    from executive.memory.store.mem0_door import create_with_id

    text, at, metadata = "Pin uv in CI.", "2026-12-01T00:00:00+00:00", {"type": "semantic"}
    ours, theirs = Recorder(), Recorder()
    item = NewMemory(text, {}, metadata, created_at=at, memory_id="0" * 32)
    create_with_id(ours, item, [0.5], {**metadata, "created_at": at})
    Memory._create_memory(theirs, text, {text: [0.5]}, {**metadata, "created_at": at})
    assert ours.payloads == theirs.payloads  # data, hash, both dates, text_lemmatized
    assert ours.history == theirs.history


async def test_a_batched_add_stores_what_add_stores(tmp_path):
    from executive.memory.store.base import Filter, NewMemory
    from tests.memory.conftest import meta, open_store, scope

    store = await open_store(tmp_path)
    try:
        single = await store.add(
            NewMemory("Pin uv in CI.", scope(), meta(1), created_at="2026-12-01T00:00:00+00:00")
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


def fresh(script: str, folder: object) -> list[str]:
    """The lines ``script`` prints in a fresh interpreter (this one may hold mem0 already)."""
    ran = subprocess.run(
        [sys.executable, "-c", script, str(folder)],
        env=clean_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


LEAN = """
import inspect, sys
from pathlib import Path
from executive.memory.store import mem0env, mem0_door
mem0env.prepare(Path(sys.argv[1]))
mem0_door.import_mem0()
from mem0 import Memory
default = inspect.signature(Memory.__init__).parameters["config"].default
print(default.vector_store.provider, type(default.vector_store.config).__module__)
print("qdrant_client" in sys.modules, "mem0.configs.vector_stores.qdrant" in sys.modules)
from mem0.vector_stores.configs import VectorStoreConfig
real = VectorStoreConfig(provider="qdrant", config={"url": "http://127.0.0.1:1"}).config
print(type(real).__module__, type(real).__name__, "qdrant_client" in sys.modules)
"""


def test_mem0_is_imported_without_qdrant_client_and_a_qdrant_config_is_still_real(tmp_path):
    default, imported, real = fresh(LEAN, tmp_path)
    # The pinned mem0 still builds a Qdrant config as Memory's default argument (the reason
    # for the stand-in); if this changes, import_mem0 may be dropped.
    assert default == "qdrant executive.memory.store.mem0_door"
    assert imported == "False False"  # no qdrant_client, and the stand-in is gone
    assert real == "mem0.configs.vector_stores.qdrant QdrantConfig True"


WRITE = """
import sys
from pathlib import Path
import anyio
from executive.memory.store.base import NewMemory
from executive.memory.store.local import LocalStore
from tests.memory.conftest import meta, scope

async def main():
    store = await LocalStore.open(Path(sys.argv[1]) / "store", Path(sys.argv[1]) / "mem0")
    item = NewMemory("The mirror resets its first connection.", scope(), meta(0))
    receipt = await store.add(item)
    await store.close()
    print(receipt.confirmed, "mem0" in sys.modules, "qdrant_client" in sys.modules)

anyio.run(main)
"""


def test_a_write_to_the_embedded_store_builds_mem0_without_qdrant_client(tmp_path):
    from mem0.configs.base import MemoryConfig

    # engine.build_memory gives every field (model_construct): a new field would be missing.
    assert set(MemoryConfig.model_fields) == {
        "vector_store",
        "llm",
        "embedder",
        "history_db_path",
        "reranker",
        "version",
        "custom_instructions",
    }
    # The last line: the store logs to stdout before it.
    assert fresh(WRITE, tmp_path)[-1].split() == ["True", "True", "False"]  # through mem0, lean
