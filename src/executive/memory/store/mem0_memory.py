"""Building mem0's ``Memory`` for the embedded store: our embedder, our vector store, no torch.

This module chooses the vector store (Qdrant Edge, a Qdrant server, or Postgres through mem0's
pgvector provider) and the embedder; how they are handed to mem0 past its public API (its
factory tables, configs it does not validate) is in ``mem0_door.py``.

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

from executive.files import atomic_write
from executive.memory.store import mem0_door
from executive.memory.store.embedder import LEGACY_NAME, EmbedderSpec

COLLECTION = "memories"
RECORD = "embedder.json"


class EdgeStoreConfig(BaseModel):
    """What mem0 reads from a vector-store config (``collection_name``) and what ours needs."""

    collection_name: str = COLLECTION
    path: str
    embedding_model_dims: int


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
    mem0_door.import_mem0()
    from mem0.vector_stores.configs import VectorStoreConfig

    common = {"collection_name": COLLECTION, "embedding_model_dims": spec.dims}
    if pg_pool is not None:
        pg = {**common, "connection_pool": pg_pool, "hnsw": True}
        vector_store = VectorStoreConfig(provider="pgvector", config=pg)
    elif qdrant_url:
        key = {"api_key": qdrant_api_key} if qdrant_api_key else {}
        server = {**common, "url": qdrant_url, **key}
        vector_store = VectorStoreConfig(provider="qdrant", config=server)
    else:
        vector_store = mem0_door.edge_vector_store(
            EdgeStoreConfig(path=str(data_dir / "edge"), embedding_model_dims=spec.dims)
        )
    embedder = {
        "model": spec.name,
        "embedding_dims": spec.dims,
        "model_kwargs": {"key": spec.key, "models_dir": str(models_dir or "")},
    }
    # Postgres keeps history in the database (pghistory.py replaces this one).
    history = ":memory:" if pg_pool is not None else str(data_dir / "history.db")
    return mem0_door.new_memory(vector_store, embedder, history)


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
    # A Qdrant-local folder from before is dead weight once the store was rebuilt.
    shutil.rmtree(data_dir / "qdrant", ignore_errors=True)
    body = json.dumps({"name": spec.name, "dims": spec.dims, "vectors": vectors})
    atomic_write(data_dir / RECORD, body + "\n")


def embedder_problem(data_dir: Path, spec: EmbedderSpec, vectors: str) -> str | None:
    """Why this store cannot be used as configured (with what to do), or None."""
    found = recorded(data_dir)
    if found is None:
        return None
    was = found.get("vectors", "qdrant-edge")
    if (found.get("name"), found.get("dims"), was) == (spec.name, spec.dims, vectors):
        return None
    return (
        f"the memory store at {data_dir} was built with the embedder {found.get('name')} "
        f"({found.get('dims')} dimensions, {was} vectors); "
        f"this installation is configured for {spec.name} ({spec.dims} dimensions, {vectors}): "
        "run `executive mem rebuild` to re-embed every memory from the harvest ledgers"
    )
