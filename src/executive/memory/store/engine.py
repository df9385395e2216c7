"""Building mem0's ``Memory`` for the embedded store: our embedder, our vector store, no torch.

mem0 has no registry API for embedders or vector stores, so ours are added to its factories'
tables and named through ``model_construct`` (a dict config would be rejected by mem0's
hard-coded provider list; ``light-engine.md`` §1, route B). The vector store is set *after*
``MemoryConfig(...)``: its validator re-runs on instances and rejects unknown providers.

A store holds vectors of one embedder. ``embedder.json`` beside the vectors records its name
and dimension; :func:`embedder_problem` says why a store cannot be used with the configured
embedder, and what to do (``executive mem rebuild``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from executive.logs import get_logger
from executive.memory.store import mem0_private
from executive.memory.store.embedder import LEGACY_NAME, EmbedderSpec

log = get_logger(__name__)

COLLECTION = "memories"
RECORD = "embedder.json"
_EMBEDDER = "executive_onnx"
_VECTORS = "executive_edge"
_LLM = "executive_none"


class EdgeStoreConfig(BaseModel):
    """What mem0 reads from a vector-store config (``collection_name``) and what ours needs."""

    collection_name: str = COLLECTION
    path: str
    embedding_model_dims: int


def _register() -> None:
    from mem0.utils.factory import EmbedderFactory, LlmFactory, VectorStoreFactory

    LlmFactory.register_provider(_LLM, "executive.memory.store.mem0_onnx.NoLlm")
    EmbedderFactory.provider_to_class[_EMBEDDER] = "executive.memory.store.mem0_onnx.OnnxEmbedding"
    # A function, not a class: mem0 gets the shard the store already opened.
    VectorStoreFactory.provider_to_class[_VECTORS] = "executive.memory.store.edge.shared"


def build_memory(
    data_dir: Path,
    spec: EmbedderSpec,
    models_dir: Path | None,
    qdrant_url: str | None = None,
    qdrant_api_key: str | None = None,
    pg_pool: Any = None,
) -> Any:
    """mem0's ``Memory`` on our embedder and, by argument, Qdrant Edge, a Qdrant server or
    Postgres (mem0's pgvector provider on the store's own pool)."""
    mem0_private.import_mem0()
    from mem0 import Memory
    from mem0.configs.base import MemoryConfig
    from mem0.embeddings.configs import EmbedderConfig
    from mem0.llms.configs import LlmConfig
    from mem0.vector_stores.configs import VectorStoreConfig

    _register()
    # Every field of MemoryConfig is given and none is validated again (model_construct): a
    # default left to it would be a Qdrant config, and building one imports qdrant_client
    # (0.8 s) for nothing; validating ours would refuse the provider registered above.
    if pg_pool is not None:
        vector_store = VectorStoreConfig(
            provider="pgvector",
            config={
                "collection_name": COLLECTION,
                "embedding_model_dims": spec.dims,
                "connection_pool": pg_pool,
                "hnsw": True,
            },
        )
    elif qdrant_url:
        server: dict[str, Any] = {
            "collection_name": COLLECTION,
            "embedding_model_dims": spec.dims,
            "url": qdrant_url,
        }
        if qdrant_api_key:
            server["api_key"] = qdrant_api_key
        vector_store = VectorStoreConfig(provider="qdrant", config=server)
    else:
        vector_store = VectorStoreConfig.model_construct(
            provider=_VECTORS,
            config=EdgeStoreConfig(path=str(data_dir / "edge"), embedding_model_dims=spec.dims),
        )
    config = MemoryConfig.model_construct(
        vector_store=vector_store,
        # Never called (infer=False), but Memory() builds one: ours imports nothing.
        llm=LlmConfig.model_construct(provider=_LLM, config={}),
        embedder=EmbedderConfig.model_construct(
            provider=_EMBEDDER,
            config={
                "model": spec.name,
                "embedding_dims": spec.dims,
                "model_kwargs": {"key": spec.key, "models_dir": str(models_dir or "")},
            },
        ),
        # Postgres keeps history in the database (pghistory.py replaces this one).
        history_db_path=":memory:" if pg_pool is not None else str(data_dir / "history.db"),
        version="v1.1",
        reranker=None,
        custom_instructions=None,
    )
    memory = Memory(config)
    mem0_private.write_ahead(memory)
    return memory


def recorded(data_dir: Path) -> dict[str, Any] | None:
    """The embedder a store was built with, or None for a new store."""
    try:
        return dict(json.loads((data_dir / RECORD).read_text()))
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        return {"name": f"unreadable ({exc})", "dims": 0}
    if (data_dir / "qdrant").exists():
        # Before embedders were recorded: Qdrant local with torch's MiniLM.
        return {"name": LEGACY_NAME, "dims": 384, "vectors": "qdrant-local"}
    return None


def record(data_dir: Path, spec: EmbedderSpec, vectors: str) -> None:
    """Record the embedder of an empty or matching store (atomically)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    # A Qdrant-local folder from before is dead weight once the store was rebuilt.
    shutil.rmtree(data_dir / "qdrant", ignore_errors=True)
    body = json.dumps({"name": spec.name, "dims": spec.dims, "vectors": vectors})
    temporary = data_dir / f".{RECORD}.tmp"
    temporary.write_text(body + "\n")
    temporary.replace(data_dir / RECORD)


def embedder_problem(data_dir: Path, spec: EmbedderSpec, vectors: str) -> str | None:
    """Why this store cannot be used as configured (with what to do), or None."""
    found = recorded(data_dir)
    if found is None:
        return None
    if (
        found.get("name") == spec.name
        and found.get("dims") == spec.dims
        and found.get("vectors", "qdrant-edge") == vectors
    ):
        return None
    return (
        f"the memory store at {data_dir} was built with the embedder {found.get('name')} "
        f"({found.get('dims')} dimensions, {found.get('vectors', 'qdrant-edge')} vectors); "
        f"this installation is configured for {spec.name} ({spec.dims} dimensions, {vectors}): "
        "run `executive mem rebuild` to re-embed every memory from the harvest ledgers"
    )
