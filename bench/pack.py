"""Benchmark: a whole memory pack (every hop of the reader, then the render) at N memories.

Fills an embedded store with N memories shaped like the harvester's (five types, 25
bundles, ``_global`` principles), then builds ``--samples`` packs for distinct steps with
Hook B's own code (``plan.for_step`` → ``pre_spawn.build``: the reader with the production
stop rules and the daemon's lexical-index cache, ``PACK_MIN_SCORE``, ``pack.render``) and
times each. The store's word index is built first, as the daemon builds it when it starts
(``MemoryRuntime.warm``); ``first_pack_ms`` times each bundle's first pack, ``later_pack_ms``
the others. By default the store is not written between packs (as between two harvests). With ``--write-every K`` one memory
is added (as the harvester adds it) after every K timed packs, so the packs also pay for
keeping the word index up to date; ``after_write_ms`` then times the first pack after each
write on its own. Writes are not timed. ``questions_mean`` counts questions asked.
Prints one JSON object on stdout; progress on stderr.

Ids, creation times and the reader's clock are fixed, so every run (and every version of
the code) builds the same packs from the same store: ``--dump FILE`` writes each pack's
memories (by key, in order, with their scores) as JSON lines, to compare two versions.

    python bench/pack.py [--memories 1000] [--samples 100] [--write-every K] [--dump FILE]

The same measurement on Postgres at 100,000 memories: ``bench/postgres_scale.py`` (it calls
:func:`measure` on its own store).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from daemon import status_mb  # bench/daemon.py: VmRSS and friends from /proc
from executive.daemon import heap
from executive.hooks.builtin import pre_spawn
from executive.logs import configure_logging
from executive.memory.read import plan
from executive.memory.read.reader import Reader
from executive.memory.store.base import Filter, NewMemory, ReadView, words
from executive.memory.store.local import LocalStore

USER = "bench-agent"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
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
        created_at=f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00",
        memory_id=str(uuid.UUID(int=i + 1)),
    )


def percentiles(timings: list[float]) -> dict[str, float]:
    ordered = sorted(timings)
    return {
        "p50": round(statistics.median(ordered), 1),
        # Nearest rank: the 95th of 100 (as before), and the largest of a few.
        "p95": round(ordered[math.ceil(0.95 * len(ordered)) - 1], 1),
        "max": round(ordered[-1], 1),
    }


async def measure(
    store: Any,
    samples: int,
    *,
    count: int = 0,
    write_every: int = 0,
    dumped: list[str] | None = None,
) -> dict[str, Any]:
    """Time ``samples`` packs on a filled store (any backend) with Hook B's own code; with
    ``write_every``, add memory ``count + k`` after every K timed packs."""
    timings, questions, entries, after_write = [], [], [], []
    firsts: list[float] = []
    laters: list[float] = []
    bundles: set[int] = set()
    written = 0
    await words(ReadView(store), [Filter(user_id=USER)], 0.7, NOW)  # the daemon's start
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
        reader = Reader(ReadView(store), user_id=USER, now=NOW)
        built, result = await pre_spawn.build(reader, request)
        elapsed = (time.perf_counter() - started) * 1000
        if dumped is not None:
            dumped.append(
                json.dumps(
                    {
                        "pack": n,
                        "entries": [m.key for m in built.entries],
                        "memories": [[m.key, round(m.score or 0.0, 6)] for m in result.memories],
                        "questions": result.questions,
                    }
                )
            )
        first = n % 25 not in bundles
        bundles.add(n % 25)
        if n < 3:
            continue
        (firsts if first else laters).append(elapsed)
        timings.append(elapsed)
        questions.append(len(result.questions))
        entries.append(len(built.entries))
        if written and (n - 3) % write_every == 0:
            after_write.append(elapsed)
        if write_every and (n - 2) % write_every == 0 and n < samples + 2:
            # A harvest between two packs: one memory through mem0's create (its
            # vectors and history), under a fixed id so that runs stay comparable.
            await store.add_many([memory(count + written)])
            written += 1
    return {
        "writes": written,
        "pack_ms": percentiles(timings),
        **({"first_pack_ms": percentiles(firsts)} if firsts else {}),
        **({"later_pack_ms": percentiles(laters)} if laters else {}),
        **({"after_write_ms": percentiles(after_write)} if after_write else {}),
        "questions_mean": round(statistics.mean(questions), 2),
        "entries_mean": round(statistics.mean(entries), 2),
        "rss_mb": status_mb(os.getpid(), "VmRSS"),  # the store, the embedder, the index
    }


async def main(count: int, samples: int, write_every: int = 0, dump: Path | None = None) -> None:
    dumped: list[str] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        store = await LocalStore.open(Path(tmp) / "store", Path(tmp) / "mem0")
        try:
            items = [memory(i) for i in range(count)]
            for start in range(0, count, 250):
                await store.add_many(items[start : start + 250])
                print(f"filled {min(start + 250, count)}/{count}", file=sys.stderr, flush=True)
            heap.settle()  # as the daemon does once it is ready
            result = await measure(
                store, samples, count=count, write_every=write_every, dumped=dumped
            )
        finally:
            await store.close()
    if dump is not None:
        await anyio.Path(dump).write_text("\n".join(dumped) + "\n")
    report = {
        "benchmark": "pack",
        "memories": count,
        "samples": samples,
        "write_every": write_every,
        **result,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument(
        "--write-every", type=int, default=0, metavar="K", help="add a memory every K packs"
    )
    parser.add_argument(
        "--dump", type=Path, metavar="FILE", help="each pack's memories, as JSON lines"
    )
    args = parser.parse_args()
    # stdout carries the one JSON report; log lines go to stderr.
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    anyio.run(main, args.memories, args.samples, args.write_every, args.dump)
