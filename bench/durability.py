"""Benchmark: snapshot and rebuild time at 1,000 and 10,000 memories on the embedded store.

For each size: a harvest ledger of N confirmed writes is generated the way the harvester
writes it (stamped, validated payloads, a PENDING and a SUCCEEDED line each), then
``rebuild`` replays it into a fresh store (wipe, batched add), then ``snapshot`` writes the
whole store with every history. Prints one JSON object on stdout; progress on stderr.

    python bench/durability.py [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

os.environ["MEM0_TELEMETRY"] = "False"

import anyio

from executive.logs import configure_logging
from executive.memory.durability import snapshot as snapshots
from executive.memory.durability.rebuild import rebuild
from executive.memory.store.local import LocalStore
from executive.memory.write.classify import validate
from executive.memory.write.envelope import Defaults, stamp
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from executive.memory.write.principles import NO_RULES

DEFAULTS = Defaults(user_id="bench-agent")
KINDS = [("semantic", 0.85), ("procedural", 0.75), ("reflective", 0.8), ("episodic", 1.0)]


def payload(i: int) -> dict:
    kind, confidence = KINDS[i % len(KINDS)]
    slug = f"bundle-{i % 23}"
    return stamp(
        {
            "text": f"Run {i} of {slug}: step {i % 5} needed flag --opt-{i % 97} and took {i % 300} s on worker w{i % 4}.",
            "app_id": slug,
            "run_id": f"2026-11-{1 + i % 28:02d}-{slug}-r{i}",
            "metadata": {
                "type": kind,
                "category": "technical",
                "importance": "medium",
                "confidence": confidence,
                "trigger": "manual-harvest",
                "actor": "executive",
                "source": f"ledgers/bench/{i}.md",
                **({"outcome": "success"} if kind == "episodic" else {}),
            },
        },
        DEFAULTS,
    )


def write_ledger(ledger: HarvestLedger, count: int) -> None:
    for i in range(count):
        model = validate(payload(i))
        base = {"op": "add", "attempt": f"a{i}", "key": model.key, "actor": "bench"}
        ledger.record({**base, "status": "PENDING", "payload": model.as_dict()})
        # The id a store gives (a UUID): the rebuild keeps it.
        memory_id = str(uuid.UUID(int=i + 1))
        ledger.record({**base, "status": "SUCCEEDED", "memory_id": memory_id, "ms": 10})


async def measure(size: int, root: Path) -> dict:
    ledger = HarvestLedger(root / "ledgers" / "harvest-runs")
    t = time.perf_counter()
    write_ledger(ledger, size)
    ledger_s = time.perf_counter() - t
    store = await LocalStore.open(root / "store", root / "mem0")
    try:
        harvester = Harvester(store, ledger, DEFAULTS)
        print(f"[{size}] rebuilding", file=sys.stderr, flush=True)
        t = time.perf_counter()
        rebuilt = await rebuild(store, harvester, ledger, NO_RULES)
        rebuild_s = time.perf_counter() - t
        print(f"[{size}] snapshot", file=sys.stderr, flush=True)
        t = time.perf_counter()
        snap = await snapshots.take(store, root / "snapshots", user_id=DEFAULTS.user_id)
        snapshot_s = time.perf_counter() - t
        t = time.perf_counter()
        again = await rebuild(store, harvester, ledger, NO_RULES)
        rebuild_again_s = time.perf_counter() - t
    finally:
        await store.close()
    assert rebuilt["memories"] == again["memories"] == snap["total"] == size
    return {
        "memories": size,
        "ledger_write_seconds": round(ledger_s, 2),
        "rebuild_seconds": round(rebuild_s, 2),
        "rebuild_per_memory_ms": round(rebuild_s / size * 1000, 2),
        "rebuild_again_seconds": round(rebuild_again_s, 2),
        "snapshot_seconds": round(snapshot_s, 2),
        "snapshot_mb": round(snap["bytes"] / 1e6, 2),
        "history_failures": snap["history_failures"],
    }


async def main(sizes: list[int]) -> None:
    results = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            results[str(size)] = await measure(size, Path(tmp))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "benchmark": "durability",
                "cpus": os.cpu_count(),
                "sizes": results,
                "peak_rss_mb": round(peak, 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    # stdout carries the one JSON report; log lines go to stderr.
    configure_logging(fmt="json", level="warning", stream=sys.stderr)
    anyio.run(main, [int(s) for s in args.sizes.split(",")])
