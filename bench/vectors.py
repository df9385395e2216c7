"""Benchmark: embedded vector stores behind mem0, filtered search at 10,000 and 100,000 points.

    python bench/vectors.py [--sizes 10000,100000] [--queries 50] [--stores edge,qdrant-local]

Each candidate is driven through the class mem0 calls (``search(query, vectors, top_k,
filters)`` with mem0's own filter dicts, so its filter translation is included):

* ``qdrant-local``: mem0's ``qdrant`` provider in local path mode (what the store used before);
* ``edge``: Qdrant Edge behind our provider (``executive.memory.store.edge``), exact search;
* ``numpy``: an exact scan with boolean masks (the floor any store is measured against).

Points are 384-d unit vectors (1,000 clusters plus noise) with the payload the harvester
writes: ``user_id`` (5 values), ``agent_id``, ``app_id`` (25), ``type`` (5), ``env`` (2),
``confidence`` U[0, 1]. Filters: ``reader`` = user + agent + one app + env + confidence ≥ 0.7
(what the reader sends, ~0.7 % of points); ``f10`` = user + confidence ≥ 0.5 (~10 %). top_k
10; recall@10 against the numpy scan. Times in ms (p50, p95) after 3 warm-ups; insert in
batches of 1,000; ``reopen_s`` is opening the folder again. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

os.environ["MEM0_TELEMETRY"] = "False"
# mem0 reads it when imported; the folder is removed when the interpreter exits.
_MEM0_DIR = tempfile.TemporaryDirectory(prefix="mem0-bench-")
os.environ.setdefault("MEM0_DIR", _MEM0_DIR.name)

DIMS = 384
TYPES = ["principle", "procedural", "reflective", "semantic", "episodic"]
FILTERS = {
    "reader": {
        "user_id": "u1",
        "agent_id": "executive",
        "AND": [{"app_id": "app-3"}, {"env": "prod"}, {"confidence": {"gte": 0.7}}],
    },
    "f10": {"user_id": "u1", "AND": [{"confidence": {"gte": 0.5}}]},
}


def data(n: int, seed: int = 7) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(1000, DIMS)).astype(np.float32)
    vectors = centres[rng.integers(0, 1000, n)] + rng.normal(size=(n, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    payloads = [
        {
            "data": f"memory {i}",
            "user_id": f"u{rng.integers(0, 5)}",
            "agent_id": "executive",
            "app_id": f"app-{rng.integers(0, 25)}",
            "type": TYPES[int(rng.integers(0, 5))],
            "env": "prod" if rng.random() < 0.8 else "test",
            "confidence": round(float(rng.random()), 3),
        }
        for i in range(n)
    ]
    return vectors, payloads, [str(uuid.UUID(int=i + 1)) for i in range(n)]


def mask(payloads: list[dict[str, Any]], name: str) -> np.ndarray:
    if name == "reader":
        keep = [
            p["user_id"] == "u1"
            and p["app_id"] == "app-3"
            and p["env"] == "prod"
            and p["confidence"] >= 0.7
            for p in payloads
        ]
    else:
        keep = [p["user_id"] == "u1" and p["confidence"] >= 0.5 for p in payloads]
    return np.array(keep)


def open_store(kind: str, path: Path) -> Any:
    if kind == "edge":
        from executive.memory.store.edge import EdgeVectors

        return EdgeVectors("memories", str(path), DIMS)
    from mem0.vector_stores.qdrant import Qdrant

    return Qdrant(
        collection_name="memories", embedding_model_dims=DIMS, path=str(path), on_disk=True
    )


def close(store: Any) -> None:
    (store.close if hasattr(store, "scroll") else store.client.close)()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


def run(kind: str, n: int, queries: int) -> dict[str, Any]:
    vectors, payloads, ids = data(n)
    rng = np.random.default_rng(11)
    probes = vectors[rng.integers(0, n, queries + 3)] + 0.3 * rng.normal(size=(queries + 3, DIMS))
    probes = (probes / np.linalg.norm(probes, axis=1, keepdims=True)).astype(np.float32)
    out: dict[str, Any] = {}
    root = Path(tempfile.mkdtemp(prefix=f"vectors-{kind}-"))
    try:
        if kind != "numpy":
            store = open_store(kind, root)
            started = time.perf_counter()
            for s in range(0, n, 1000):
                store.insert(
                    vectors[s : s + 1000].tolist(), payloads[s : s + 1000], ids[s : s + 1000]
                )
            out["insert_s"] = round(time.perf_counter() - started, 1)
            close(store)
            started = time.perf_counter()
            store = open_store(kind, root)
            out["reopen_s"] = round(time.perf_counter() - started, 2)
        for name, filters in FILTERS.items():
            keep = mask(payloads, name)
            times, recalls = [], []
            for q, probe in enumerate(probes):
                truth_scores = np.where(keep, vectors @ probe, -np.inf)
                started = time.perf_counter()
                if kind == "numpy":
                    scores = np.where(keep, vectors @ probe, -np.inf)
                    top = np.argsort(-scores)[:10]
                    found = {ids[i] for i in top if np.isfinite(scores[i])}
                else:
                    hits = store.search("", probe.tolist(), 10, filters)
                    found = {str(h.id) for h in hits}
                elapsed = (time.perf_counter() - started) * 1000
                if q < 3:
                    continue
                times.append(elapsed)
                truth = {
                    ids[i] for i in np.argsort(-truth_scores)[:10] if np.isfinite(truth_scores[i])
                }
                recalls.append(len(found & truth) / max(1, len(truth)))
            out[name] = {
                "p50_ms": pct(times, 50),
                "p95_ms": pct(times, 95),
                "recall_at_10": round(float(np.mean(recalls)), 3),
                "share": round(float(keep.mean()), 4),
            }
        if kind != "numpy":
            close(store)
            out["disk_mb"] = round(
                # Blocks, not sizes: the WAL and mmap files are preallocated and sparse.
                sum(f.stat().st_blocks * 512 for f in root.rglob("*") if f.is_file()) / 2**20,
                1,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--stores", default="numpy,edge,qdrant-local")
    args = parser.parse_args()
    report: dict[str, Any] = {"load_before": os.getloadavg()[0], "results": {}}
    for n in [int(s) for s in args.sizes.split(",")]:
        for kind in args.stores.split(","):
            print(f"{kind} at {n}", file=sys.stderr, flush=True)
            report["results"].setdefault(kind, {})[str(n)] = run(kind, n, args.queries)
    report["load_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
