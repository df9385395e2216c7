"""mem0's vector store on Qdrant Edge: Qdrant's Rust engine in-process, one folder, no server.

mem0 has no provider for it; this class is one (``VectorStoreBase``), registered by
``mem0_door.py``. Filters go through mem0's own Qdrant filter builder (every shape mem0 emits:
equality, in, ne, nin, ranges, AND/OR/NOT), and the resulting ``qdrant_client`` tree is copied
into ``qdrant_edge`` classes, which mirror it one to one. Searches are exact (no HNSW): at
100,000 memories a filtered exact search takes ~10 ms, and an exact search returns the same
points on every machine. The shard keeps no write-ahead log (``shard.py`` says why), so
every write is made durable by :meth:`EdgeVectors.flush`.

Importing this module imports neither mem0 nor qdrant-client (seconds of start-up): the
store's reads run on the shard with :func:`compile_where`; mem0's filter builder loads only
when mem0 calls with a filter dict. mem0's ``Memory`` gets the instance the store opened
(:func:`shared`: one folder, one lock, one handle), so every write passes through this class,
which lets it keep the records it made from payloads until a write touches them.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from itertools import chain, islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import qdrant_edge as edge

from executive.memory.store import mem0_door
from executive.memory.store.base import Filter, MemoryRecord
from executive.memory.store.records import record_from_payload
from executive.memory.store.shard import VECTOR, lock, open_shard, pages

_PAGE = 1000
# Records kept (oldest out): every memory of a 10,000-memory store, ~1 KB each.
_RECORDS = 20_000


def compile_where(where: Filter | None) -> Any:
    """Our neutral filter straight into Qdrant Edge (the same as mem0's builder makes of it)."""
    must = [_condition(*condition) for condition in (where.conditions() if where else ())]
    return edge.Filter(must=must) if must else None


def _condition(name: str, test: str, value: Any) -> Any:
    if test == "in":
        return edge.FieldCondition(key=name, match=edge.MatchAny(list(value)))
    if test == "gte":
        return edge.FieldCondition(key=name, range=edge.RangeFloat(gte=value))
    return edge.FieldCondition(key=name, match=edge.MatchValue(value))  # eq, has


def _match(match: Any) -> Any:
    from qdrant_client import models as qm

    if match is None:
        return None
    if isinstance(match, qm.MatchValue):
        return edge.MatchValue(match.value)
    if isinstance(match, qm.MatchAny):
        return edge.MatchAny(list(match.any))
    if isinstance(match, qm.MatchExcept):
        return edge.MatchExcept(list(match.except_))
    if isinstance(match, qm.MatchText):
        return edge.MatchText(match.text)
    raise ValueError(f"unsupported match for Qdrant Edge: {match!r}")


def _range(rng: Any) -> Any:
    from qdrant_client import models as qm

    if rng is None:
        return None
    bounds = {k: getattr(rng, k) for k in ("gte", "gt", "lte", "lt")}
    if isinstance(rng, qm.DatetimeRange):
        return edge.RangeDateTime(**{k: v.isoformat() if v else None for k, v in bounds.items()})
    return edge.RangeFloat(**bounds)


def to_edge(node: Any) -> Any:
    """A ``qdrant_client`` filter tree as the same tree of ``qdrant_edge`` classes."""
    from qdrant_client import models as qm

    if node is None:
        return None
    if isinstance(node, qm.Filter):

        def part(items: Any) -> list[Any] | None:
            if items is None:
                return None
            return [to_edge(item) for item in (items if isinstance(items, list) else [items])]

        return edge.Filter(
            must=part(node.must), should=part(node.should), must_not=part(node.must_not)
        )
    if isinstance(node, qm.FieldCondition):
        return edge.FieldCondition(key=node.key, match=_match(node.match), range=_range(node.range))
    raise ValueError(f"unsupported filter condition for Qdrant Edge: {node!r}")


def _nearest(vector: list[float], top_k: int, where: Any, *, payload: bool = True) -> Any:
    return edge.QueryRequest(
        limit=top_k,
        query=edge.Query.Nearest(list(map(float, vector)), using=VECTOR),
        filter=where,
        with_payload=payload,
        params=edge.SearchParams(exact=True),
    )


def _row(point: Any) -> SimpleNamespace:
    # mem0 reads .id, .score and .payload; edge returns UUID objects for UUID ids.
    return SimpleNamespace(
        id=str(point.id), score=getattr(point, "score", None), payload=dict(point.payload or {})
    )


def _key(point_id: Any) -> str:
    """A point id as the shard spells it back (a UUID in canonical form), the cache's key."""
    try:
        return str(uuid.UUID(str(point_id)))
    except ValueError:
        return str(point_id)


_SHARED: dict[str, EdgeVectors] = {}


def shared(**config: Any) -> EdgeVectors:
    """What mem0's factory calls: the instance the store opened on that folder, if any."""
    path = str(Path(config["path"]) / config.get("collection_name", "memories"))
    return _SHARED.get(path) or EdgeVectors(**config)


class EdgeVectors:
    """mem0's ``VectorStoreBase`` contract (duck-typed: subclassing it would import mem0)."""

    def __init__(
        self, collection_name: str, path: str, embedding_model_dims: int, **_: Any
    ) -> None:
        self.collection_name = collection_name
        self.path = Path(path) / collection_name
        self.dims = embedding_model_dims
        self._lock = lock(self.path)
        try:
            self.shard = open_shard(self.path, self.dims)
        except BaseException:
            os.close(self._lock)
            raise
        # Point id -> its payload as a record (no score). A pack reads a thousand hits, most
        # of them seen by the pack before: converting each payload again cost more than the
        # search. Each write below evicts the points it touched.
        self._records: dict[str, MemoryRecord] = {}
        _SHARED[str(self.path)] = self

    def filter(self, filters: dict[str, Any] | None) -> Any:
        """A mem0 filter dict, through mem0's own Qdrant builder (``mem0_door``: on first use)."""
        return to_edge(mem0_door.qdrant_filter(filters)) if filters else None

    # --- mem0's VectorStoreBase -----------------------------------------------------------
    def create_col(self, name: Any = None, vector_size: Any = None, distance: Any = None) -> None:
        return None  # the shard is created on open

    def insert(self, vectors: list[Any], payloads: Any = None, ids: Any = None) -> None:
        payloads = payloads or [{} for _ in vectors]
        points = [
            edge.Point(str(i), {VECTOR: list(map(float, v))}, p)
            for i, v, p in zip(ids, vectors, payloads, strict=True)
        ]
        self._forget(ids)
        self.shard.update(edge.UpdateOperation.upsert_points(points))

    def search(
        self, query: str, vectors: list[float], top_k: int = 5, filters: Any = None
    ) -> list[Any]:
        return [_row(p) for p in self.shard.query(_nearest(vectors, top_k, self.filter(filters)))]

    def keyword_search(self, query: str, top_k: int = 5, filters: Any = None) -> None:
        return None  # semantic only, on purpose (the reader runs its own BM25)

    def delete(self, vector_id: Any) -> None:
        self._forget([vector_id])
        self.shard.update(edge.UpdateOperation.delete_points([str(vector_id)]))

    def update(self, vector_id: Any, vector: Any = None, payload: Any = None) -> None:
        self._forget([vector_id])
        if vector is not None and payload is not None:
            point = edge.Point(str(vector_id), {VECTOR: list(map(float, vector))}, payload)
            self.shard.update(edge.UpdateOperation.upsert_points([point]))
            return
        if payload is not None:
            self.shard.update(edge.UpdateOperation.set_payload([str(vector_id)], payload))
        if vector is not None:
            vectors = [edge.PointVectors(str(vector_id), {VECTOR: list(map(float, vector))})]
            self.shard.update(edge.UpdateOperation.update_vectors(vectors))

    def get(self, vector_id: Any) -> Any:
        found = self.shard.retrieve([str(vector_id)], True, False)
        return _row(found[0]) if found else None

    def list_cols(self) -> list[str]:
        return [self.collection_name]

    def delete_col(self) -> None:
        self._records.clear()
        self.shard.close()
        shutil.rmtree(self.path, ignore_errors=True)

    def col_info(self) -> dict[str, Any]:
        return {"name": self.collection_name, "points": self.count(None)}

    def list(self, filters: Any = None, top_k: int | None = 100) -> tuple[list[Any], None]:
        return self.scroll(self.filter(filters), limit=top_k), None

    def reset(self) -> None:
        self.delete_col()
        self.shard = open_shard(self.path, self.dims)
        _SHARED[str(self.path)] = self

    # --- for the adapter: records, every point, counts, durability -------------------------
    def search_records(
        self, vector: list[float], top_k: int, where: Any
    ) -> list[tuple[MemoryRecord, float | None]]:
        """The nearest points as (record, cosine): the search returns ids, the cache records."""
        points = self.shard.query(_nearest(vector, top_k, where, payload=False))
        records = self.records([str(p.id) for p in points])
        return [(r, getattr(p, "score", None)) for r, p in zip(records, points, strict=True)]

    def scroll_records(self, where: Any) -> list[MemoryRecord]:
        """Every matching point as a record, in the shard's order."""
        found = pages(self.shard, where, size=_PAGE, payload=False)
        return self.records([str(p.id) for p in chain.from_iterable(found)])

    def records(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records of these points (which must exist), made from payloads only once."""
        missing = [i for i in dict.fromkeys(ids) if i not in self._records]
        if missing:
            for point in self.shard.retrieve(missing, True, False):
                point_id = str(point.id)  # one string for the key and the record
                self._records[point_id] = record_from_payload(point_id, point.payload or {})
        found = [self._records[i] for i in ids]
        while len(self._records) > _RECORDS:
            del self._records[next(iter(self._records))]
        return found

    def _forget(self, ids: Any) -> None:
        for point_id in ids:
            self._records.pop(_key(point_id), None)

    def scroll(self, where: Any, limit: int | None = None) -> list[Any]:
        found = pages(self.shard, where, size=min(_PAGE, limit or _PAGE))
        return [_row(p) for p in islice(chain.from_iterable(found), limit)]

    def count(self, where: Any) -> int:
        return int(self.shard.count(edge.CountRequest(exact=True, filter=where)))

    def flush(self) -> None:
        """Every write so far on disk: without a log, nothing else makes them durable, so each
        of the store's writes ends here (a killed process keeps every write it confirmed)."""
        self.shard.flush()

    def close(self) -> None:
        _SHARED.pop(str(self.path), None)
        self.shard.flush()
        self.shard.close()
        os.close(self._lock)
