"""Every reach of ``mem0_door`` past mem0's or Qdrant's public API holds on the pinned version.

One test (at least) per function of the door, run against the real mem0 and qdrant-client:
a private part that moved, a signature that changed, a table or attribute mem0 no longer
reads. If one fails after an upgrade, read ``executive/memory/store/mem0_door.py``: each
function there says what it relies on and why; adapt it, then the pin.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import REPO, clean_env

pytestmark = [pytest.mark.store, pytest.mark.anyio]


def parameters(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def test_the_pin_is_the_version_the_private_calls_were_written_for():
    assert version("mem0ai") == "2.2.1"


def test_every_private_part_is_there_with_the_parameters_we_pass(tmp_path):
    from executive.memory.store import mem0_door

    mem0_door.prepare(tmp_path)  # telemetry off and MEM0_DIR set before mem0 is imported
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
    assert parameters(Qdrant._create_filter)[:2] == ["self", "filters"]
    assert parameters(lemmatize_for_bm25) == ["text"]


def test_telemetry_is_read_where_mem0_keeps_it_and_a_mem0_with_it_on_is_refused(
    tmp_path, monkeypatch
):
    from executive.memory.store import mem0_door
    from executive.memory.store.base import StoreError

    mem0_door.prepare(tmp_path)
    mem0_door.import_mem0()
    telemetry = sys.modules["mem0.memory.telemetry"]  # imported with mem0, read at import
    assert telemetry.MEM0_TELEMETRY is False
    monkeypatch.setattr(telemetry, "MEM0_TELEMETRY", True)  # as if imported before prepare
    with pytest.raises(StoreError, match="telemetry on"):
        mem0_door.prepare(tmp_path)


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
    from executive.memory.store import mem0_door

    mem0_door.prepare(tmp_path)
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
        # mem0's own add (on the store's Memory), then ours, which batches the embedding.
        single = add(store._memory, "Pin uv in CI.", created_at="2026-12-01T00:00:00+00:00")
        (batched,) = await store.add_many(
            [NewMemory("Pin ruff in CI.", scope(), meta(2), "2026-12-01T00:00:00+00:00")]
        )
        one, two = (await store.get(single)), (await store.get(batched.memory_id))
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
from executive.memory.store import mem0_door
mem0_door.prepare(Path(sys.argv[1]))
mem0_door.import_mem0()
from mem0 import Memory
default = inspect.signature(Memory.__init__).parameters["config"].default
print(default.vector_store.provider, type(default.vector_store.config).__module__)
print("qdrant_client" in sys.modules, "mem0.configs.vector_stores.qdrant" in sys.modules)
from mem0.memory import telemetry
try:
    telemetry.Posthog("key")
except Exception as refused:
    print("posthog" in sys.modules, telemetry.MEM0_TELEMETRY, type(refused).__name__)
from mem0.vector_stores.configs import VectorStoreConfig
real = VectorStoreConfig(provider="qdrant", config={"url": "http://127.0.0.1:1"}).config
print(type(real).__module__, type(real).__name__, "qdrant_client" in sys.modules)
"""


def test_mem0_is_imported_without_qdrant_client_and_a_qdrant_config_is_still_real(tmp_path):
    default, imported, telemetry, real = fresh(LEAN, tmp_path)
    # The pinned mem0 still builds a Qdrant config as Memory's default argument (the reason
    # for the stand-in); if this changes, import_mem0 may be dropped.
    assert default == "qdrant executive.memory.store.mem0_door"
    assert imported == "False False"  # no qdrant_client, and the stand-in is gone
    # Telemetry off, so no PostHog either: mem0's name for it is the stand-in, which refuses.
    assert telemetry == "False False StoreError"
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

    # mem0_memory.build_memory gives every field (model_construct): a new field would be missing.
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


# --- building Memory, and the parts replaced on a live one ------------------------------------
@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real embedded ``Memory`` as ``mem0_memory.build_memory`` makes it (Qdrant Edge, ONNX)."""
    from executive.memory.store import mem0_door, mem0_memory
    from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS

    root = tmp_path_factory.mktemp("door")
    mem0_door.prepare(root / "mem0")
    built = mem0_memory.build_memory(root / "store", EMBEDDERS[DEFAULT_EMBEDDER], None)
    yield built
    built.close()
    built.vector_store.close()


def add(memory: Any, text: str, created_at: str | None = None) -> str:
    """``text`` added by mem0's own ``Memory.add(infer=False)``."""
    from tests.memory.conftest import meta, scope

    extra = {"created_at": created_at} if created_at else {}
    result = memory.add(text, **scope(), metadata={**meta(0), **extra}, infer=False)
    return str(result["results"][0]["id"])


def test_our_providers_are_in_mem0s_factory_tables_and_built_by_them(tmp_path):
    from mem0.utils.factory import EmbedderFactory, LlmFactory, VectorStoreFactory

    from executive.memory.store import mem0_door
    from executive.memory.store.edge import EdgeVectors
    from executive.memory.store.embedder import DEFAULT_EMBEDDER
    from executive.memory.store.mem0_memory import EdgeStoreConfig
    from executive.memory.store.mem0_onnx import NoLlm, OnnxEmbedding

    mem0_door.register_providers()
    config = EdgeStoreConfig(path=str(tmp_path), embedding_model_dims=4)
    vectors = VectorStoreFactory.create(mem0_door.EDGE_VECTORS, config)
    try:
        assert isinstance(vectors, EdgeVectors) and vectors.dims == 4
        # The factory's function hands mem0 the shard already open on that folder.
        assert VectorStoreFactory.create(mem0_door.EDGE_VECTORS, config) is vectors
    finally:
        vectors.close()
    assert isinstance(LlmFactory.create(mem0_door.NO_LLM, {}), NoLlm)
    kwargs = {"key": DEFAULT_EMBEDDER, "models_dir": str(tmp_path)}
    embedder = EmbedderFactory.create(mem0_door.ONNX_EMBEDDER, {"model_kwargs": kwargs}, None)
    assert isinstance(embedder, OnnxEmbedding)


def test_mem0_refuses_our_vector_store_config_unless_it_is_not_validated(tmp_path):
    from mem0.vector_stores.configs import VectorStoreConfig
    from pydantic import ValidationError

    from executive.memory.store import mem0_door
    from executive.memory.store.mem0_memory import EdgeStoreConfig

    config = EdgeStoreConfig(path=str(tmp_path), embedding_model_dims=4)
    # Why the door skips validation: mem0's validator knows a fixed list of providers.
    with pytest.raises(ValidationError, match=mem0_door.EDGE_VECTORS):
        VectorStoreConfig(provider=mem0_door.EDGE_VECTORS, config=config.model_dump())
    built = mem0_door.edge_vector_store(config)
    assert (built.provider, built.config) == (mem0_door.EDGE_VECTORS, config)


def public_methods(cls: type) -> dict[str, list[str]]:
    return {
        name: parameters(getattr(cls, name))
        for name in dir(cls)
        if not name.startswith("_") and callable(getattr(cls, name))
    }


def test_the_parts_mem0_is_handed_have_the_methods_it_calls_with_its_parameters(tmp_path):
    """What ``register_providers`` and ``use_history`` hand mem0, held to the pinned bases
    (all but ``OnnxEmbedding`` duck-typed: subclassing would import mem0 with the module)."""
    from executive.memory.store import mem0_door

    mem0_door.prepare(tmp_path)
    mem0_door.import_mem0()
    from mem0.embeddings.base import EmbeddingBase
    from mem0.llms.base import LLMBase
    from mem0.memory.storage import SQLiteManager
    from mem0.vector_stores.base import VectorStoreBase

    from executive.memory.store.edge import EdgeVectors
    from executive.memory.store.mem0_onnx import NoLlm, OnnxEmbedding
    from executive.memory.store.pghistory import PgHistory

    ours = public_methods(EdgeVectors)
    for name in VectorStoreBase.__abstractmethods__:
        assert ours.get(name) == parameters(getattr(VectorStoreBase, name)), name
    assert public_methods(SQLiteManager).items() <= public_methods(PgHistory).items()
    assert EmbeddingBase.__abstractmethods__ == {"embed"}
    assert parameters(OnnxEmbedding.embed) == parameters(EmbeddingBase.embed)
    assert LLMBase.__abstractmethods__ == {"generate_response"}
    with pytest.raises(RuntimeError, match="no LLM"):  # takes what mem0 passes, and says so
        NoLlm().generate_response(messages=[{"role": "user", "content": "x"}], tools=None)


def test_the_built_memory_runs_on_our_embedder_vectors_and_llm(memory):
    from executive.memory.store import mem0_door
    from executive.memory.store.edge import EdgeVectors
    from executive.memory.store.mem0_onnx import NoLlm, OnnxEmbedding

    assert isinstance(mem0_door.embedder_of(memory), OnnxEmbedding)
    assert isinstance(mem0_door.vectors_of(memory), EdgeVectors)
    assert isinstance(memory.llm, NoLlm)
    vectors = mem0_door.vectors_of(memory)
    memory_id = add(memory, "Vectors go where the door says mem0 keeps them.")
    assert (
        vectors.get(memory_id).payload["data"] == "Vectors go where the door says mem0 keeps them."
    )


def test_the_history_database_is_in_write_ahead_mode(memory):
    connection = memory.db.connection  # what write_ahead sets its pragmas on
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


class Counting:
    """An embedder that counts what mem0 asks it, then asks the real one."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.asked: list[tuple[str, str | None]] = []

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        self.asked.append((text, memory_action))
        return self.inner.embed(text, memory_action)


def test_memory_embeds_its_writes_with_the_embedder_it_was_given(memory):
    from executive.memory.store import mem0_door

    own = mem0_door.embedder_of(memory)
    counting = Counting(own)
    mem0_door.use_embedder(memory, counting)
    try:
        memory_id = add(memory, "The mirror drops its first connection.")
        memory.update(memory_id, text="The mirror drops its first two connections.")
    finally:
        mem0_door.use_embedder(memory, own)
    assert counting.asked == [
        ("The mirror drops its first connection.", "add"),
        ("The mirror drops its first two connections.", "update"),
    ]


class History:
    """A history in the shape mem0 calls ``Memory.db`` (what ``PgHistory`` implements)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, str | None, str]] = []

    def add_history(
        self,
        memory_id: str,
        old_memory: str | None,
        new_memory: str | None,
        event: str,
        **_: Any,
    ) -> None:
        self.events.append((memory_id, old_memory, new_memory, event))

    def get_history(self, memory_id: str) -> list[dict[str, Any]]:
        return [{"memory_id": m, "event": e} for m, _, _, e in self.events if m == memory_id]


def test_memory_keeps_history_in_the_history_it_was_given(memory):
    from executive.memory.store import mem0_door

    own, history = memory.db, History()
    mem0_door.use_history(memory, history)
    try:
        memory_id = add(memory, "Pin the linter's version.")
        memory.update(memory_id, text="Pin the linter's and the formatter's versions.")
        memory.delete(memory_id)
        told = memory.history(memory_id)
    finally:
        mem0_door.use_history(memory, own)
    assert [(m, e) for m, _, _, e in history.events] == [
        (memory_id, "ADD"),
        (memory_id, "UPDATE"),
        (memory_id, "DELETE"),
    ]
    assert history.events[1][1:3] == (
        "Pin the linter's version.",
        "Pin the linter's and the formatter's versions.",
    )
    assert [e["event"] for e in told] == ["ADD", "UPDATE", "DELETE"]
    assert own.get_history(memory_id) == []  # mem0's SQLite never saw it


class Untouchable:
    """A connection pool that fails the test when mem0 uses it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"mem0 used the pool ({name})")


def test_a_trusted_pgvector_collection_is_not_looked_for():
    from mem0.vector_stores.pgvector import PGVector

    from executive.memory.store import mem0_door

    def pgvector() -> Any:
        return PGVector(
            dbname=None,
            collection_name="memories",
            embedding_model_dims=4,
            user=None,
            password=None,
            host=None,
            port=None,
            diskann=False,
            hnsw=True,
            connection_pool=Untouchable(),
        )

    looked = pgvector()
    with pytest.raises(AssertionError, match="mem0 used the pool"):
        looked._ensure_collection()  # untrusted, it asks the database for its table
    trusted = SimpleNamespace(vector_store=pgvector())  # a Memory's part, as the door reads it
    mem0_door.trust_collection(trusted)
    trusted.vector_store._ensure_collection()  # trusted: no database call


# --- Qdrant -----------------------------------------------------------------------------------
FILTERS = [
    {"user_id": "agent-test"},
    {"user_id": "agent-test", "AND": [{"app_id": "app-a"}, {"type": {"in": ["semantic", "x"]}}]},
    {"user_id": "agent-test", "AND": [{"confidence": {"gte": 0.7}}, {"env": {"ne": "dev"}}]},
    {"OR": [{"app_id": "app-a"}, {"app_id": "app-b"}], "NOT": [{"type": "episodic"}]},
    {"created_at": {"gte": "2026-12-01T00:00:00+00:00", "lt": "2026-12-02T00:00:00+00:00"}},
    {"type": {"nin": ["episodic", "reflective"]}},
]


@pytest.fixture(scope="module")
def qdrant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """mem0's own Qdrant store, on a local (path) client: what a server's store holds."""
    from executive.memory.store import mem0_door

    folder = tmp_path_factory.mktemp("qdrant")
    mem0_door.prepare(folder / "mem0")
    mem0_door.import_mem0()
    from mem0.vector_stores.qdrant import Qdrant

    store = Qdrant(collection_name="memories", embedding_model_dims=4, path=str(folder / "q"))
    yield store
    mem0_door.qdrant_close(store)
    with pytest.raises(RuntimeError):  # closed: the client refuses
        mem0_door.qdrant_count(store, {})


@pytest.mark.parametrize("filters", FILTERS)
def test_the_filter_built_without_a_store_is_the_one_a_store_builds(qdrant, filters):
    from executive.memory.store import mem0_door

    assert mem0_door.qdrant_filter(filters) == qdrant._create_filter(filters)
    assert mem0_door.qdrant_filter({}) is None


def test_a_qdrant_stores_points_and_count_come_through_its_client_with_the_filter(qdrant):
    from executive.memory.store import mem0_door

    payloads = [{"user_id": "agent-test", "app_id": app} for app in ("app-a", "app-b", "app-a")]
    ids = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]
    qdrant.insert(vectors=[[0.1, 0.2, 0.3, 0.4]] * 3, payloads=payloads, ids=ids)
    mine = {"user_id": "agent-test", "AND": [{"app_id": "app-a"}]}
    points = mem0_door.qdrant_points(qdrant, mine)
    assert sorted((str(p.id), p.payload["app_id"]) for p in points) == [
        (ids[0], "app-a"),
        (ids[2], "app-a"),
    ]
    assert len(mem0_door.qdrant_points(qdrant, {})) == 3
    assert (mem0_door.qdrant_count(qdrant, mine), mem0_door.qdrant_count(qdrant, {})) == (2, 3)


def test_a_batched_create_stores_the_payload_add_stores(memory):
    from executive.memory.store import mem0_door
    from executive.memory.store.base import NewMemory
    from tests.memory.conftest import meta, scope

    at = "2026-12-01T00:00:00+00:00"
    single = add(memory, "Pin uv in CI.", created_at=at)
    text = "Pin ruff in CI."
    vector = mem0_door.embedder_of(memory).embed(text, "add")
    batched = mem0_door.create(memory, NewMemory(text, scope(), meta(0), created_at=at), vector)
    vectors = mem0_door.vectors_of(memory)
    one, two = vectors.get(single).payload, vectors.get(batched).payload
    own = {"data", "hash", "text_lemmatized"}  # what differs with the text
    assert {k: v for k, v in one.items() if k not in own} == {
        k: v for k, v in two.items() if k not in own
    }
    assert (two["data"], two["created_at"], two["updated_at"]) == (text, at, at)
    assert [h["event"] for h in memory.history(batched)] == ["ADD"]


def test_a_shard_with_its_write_ahead_log_is_told_from_one_without(tmp_path):
    import qdrant_edge as edge

    from executive.memory.store import mem0_door

    assert version("qdrant-edge-py") == "0.9.0"
    vectors = {"dense": edge.EdgeVectorParams(size=4, distance=edge.Distance.Cosine)}
    for wal in (True, False):
        path = tmp_path / f"wal-{wal}"
        edge.EdgeShard.create(str(path), edge.EdgeConfig(vectors=vectors, wal_enabled=wal)).close()
        assert mem0_door.edge_has_wal(path) is wal
