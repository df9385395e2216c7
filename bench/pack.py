"""Benchmark: a whole memory pack (every hop of the reader, then the render) at N memories.

Fills an embedded store with N memories shaped like the harvester's (five types, 25
bundles, ``_global`` principles), then builds ``--samples`` packs for distinct steps with
Hook B's own code (``plan.for_step`` → ``pre_spawn.build``: the reader with the production
stop rules and the daemon's lexical-index cache, ``PACK_MIN_SCORE``, ``pack.render``) and
times each. The store is not written between packs (as between two harvests), so the
lexical index is built once, in the warm-up. ``questions_mean`` counts questions asked.
Prints one JSON object on stdout; progress on stderr.

    python bench/pack.py [--memories 1000] [--samples 100]

The same measurement on Postgres at 100,000 memories: ``bench/postgres_scale.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from executive.hooks.builtin import pre_spawn
from executive.logs import configure_logging
from executive.memory import plan
from executive.memory.lexical import IndexCache
from executive.memory.reader import Reader
from executive.memory.store.base import NewMemory, ReadView
from executive.memory.store.local import LocalStore

USER = "bench-agent"
TYPES = [
    ("semantic", 0.85),
    ("procedural", 0.75),
    ("reflective", 0.8),
    ("episodic", 1.0),
    ("principle", 1.0),
]
VERBS = ["build", "fetch", "deploy", "test", "migrate", "lint", "package", "document"]
THINGS = [
    "the landing page",
    "release notes",
    "the API client",
    "a database schema",
    "the CLI",
    "docs site",
]


def memory(i: int) -> NewMemory:
    kind, confidence = TYPES[i % len(TYPES)]
    slug = "_global" if kind == "principle" else f"bundle-{i % 25}"
    verb, thing = VERBS[i % len(VERBS)], THINGS[i % len(THINGS)]
    text = {
        "semantic": f"Bundle {slug}: the {thing} step needs flag --{verb}-{i % 13} or it fails with E{100 + i % 50}.",
        "procedural": f"To {verb} {thing} in {slug}: run make {verb}, then check out/{i % 9}.log for warnings.",
        "reflective": f"Runs of {slug} that {verb} {thing} fail on Mondays when the mirror rotates (runs r{i}, r{i + 1}).",
        "episodic": f"On 2026-11-{1 + i % 28:02d}, run 2026-11-{1 + i % 28:02d}-{slug}-{i} of {slug} passed after {1 + i % 3} attempts.",
        "principle": f"Never {verb} {thing} to production without a person's approval (rule {i}).",
    }[kind]
    return NewMemory(
        text,
        {
            "user_id": USER,
            "agent_id": "executive",
            "run_id": f"2026-11-{1 + i % 28:02d}-{slug}-{i}",
        },
        {
            "type": kind,
            "confidence": confidence,
            "env": "prod",
            "app_id": slug,
            "key": f"{i:032x}",
            "source": "bench",
        },
    )


async def measure(store: Any, samples: int) -> dict[str, Any]:
    """Time ``samples`` packs on a filled store (any backend): Hook B's own code."""
    indexes = IndexCache()  # the daemon keeps one per process (MemoryRuntime.lexicon)
    timings, questions, entries = [], [], []
    for n in range(samples + 3):  # the first three warm up and are not counted
        verb, thing = VERBS[n % len(VERBS)], THINGS[(n // len(VERBS)) % len(THINGS)]
        request = plan.for_step(
            title=f"{verb.title()} {thing} #{n}",
            slug=f"bundle-{n % 25}",
            app_id=f"bundle-{n % 25}",
            step_number=1 + n % 3,
            step_title=f"{verb} {thing} step {n}",
            vendor="claude",
            description=f"Sample {n}: {verb} {thing} for the team.",
        )
        started = time.perf_counter()
        reader = Reader(ReadView(store), user_id=USER, indexes=indexes)
        built, result = await pre_spawn.build(reader, request)
        elapsed = (time.perf_counter() - started) * 1000
        if n >= 3:
            timings.append(elapsed)
            questions.append(len(result.questions))
            entries.append(len(built.entries))
    timings.sort()
    return {
        "pack_ms": {
            "p50": round(statistics.median(timings), 1),
            "p95": round(timings[int(0.95 * (len(timings) - 1))], 1),
            "max": round(timings[-1], 1),
        },
        "questions_mean": round(statistics.mean(questions), 2),
        "entries_mean": round(statistics.mean(entries), 2),
    }


async def main(count: int, samples: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = await LocalStore.open(Path(tmp) / "store", Path(tmp) / "mem0")
        try:
            items = [memory(i) for i in range(count)]
            for start in range(0, count, 250):
                await store.add_many(items[start : start + 250])
                print(f"filled {min(start + 250, count)}/{count}", file=sys.stderr, flush=True)
            measured = await measure(store, samples)
        finally:
            await store.close()
    print(
        json.dumps(
            {
                "benchmark": "pack",
                "memories": count,
                "samples": samples,
                **measured,
                "load_after": round(os.getloadavg()[0], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=100)
    args = parser.parse_args()
    # stdout carries the one JSON report; log lines go to stderr.
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    anyio.run(main, args.memories, args.samples)
