"""Benchmark: the daemon with memory on. Start-up to READY, resident memory after a pack,
and ``executive mem list`` with the daemon stopped.

    python bench/daemon.py [--lists 5] [--embedder minilm-fp32] [--memories 10000]

Makes a demo home (``executive init --demo``: memory on, hooks B-E on, three command bundles),
runs the real daemon, and reads its JSON log: ``ready_s`` is the time from spawning the
process to its ``daemon.ready`` line; ``rss_mb`` is its VmRSS (and ``hwm_mb`` its peak) read
from /proc right after the first ``hook.finished`` of Hook B (a pack was built, so mem0, the
store and the embedder are loaded). Then SIGTERM, and ``--lists`` runs of
``executive mem list`` (a fresh process each, the store opened in-process): ``list_s`` p50
and max. With ``--memories N`` the home's store holds N memories more before the daemon
starts (``bench/pack.py``'s shapes, for the home's user, written through the store as the
harvester writes), so ``rss_mb`` is the daemon's at that size. Everything runs ``sys.executable -m executive`` with this environment, so
``PYTHONPATH`` picks the sources to measure. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXECUTIVE = [sys.executable, "-m", "executive"]


def status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def fill(home: Path, count: int, env: dict[str, str]) -> None:
    """N memories of ``bench/pack.py``'s shapes for the home's user, in a process of their own
    (the store admits one process at a time, and this one's heap is not the daemon's)."""
    script = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import anyio
from pathlib import Path
import pack
from executive.memory.runtime import open_store
from executive.settings import Settings

async def main():
    settings = Settings.load(Path({str(home)!r}))
    pack.USER = settings.user_id
    store = await open_store(settings)
    items = [pack.memory(i) for i in range({count})]
    for start in range(0, len(items), 250):
        await store.add_many(items[start : start + 250])
    await store.close()

anyio.run(main)
"""
    # Its log lines go to stderr: stdout carries the one JSON report.
    subprocess.run([sys.executable, "-c", script], env=env, check=True, stdout=sys.stderr)


def main(lists: int, embedder: str | None, memories: int = 0) -> None:
    # A clean configuration, but the models stay where set-up put them (EXECUTIVE_MODELS_DIR).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("V3_", "EXECUTIVE_")) or k == "EXECUTIVE_MODELS_DIR"
    }
    env["EXECUTIVE_LOG_FORMAT"] = "json"
    report: dict[str, object] = {"load_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [*EXECUTIVE, "init", "--demo", str(home)], env=env, check=True, capture_output=True
        )
        if embedder:
            with (home / ".env.executive").open("a") as file:
                file.write(f"EXECUTIVE_EMBEDDER={embedder}\n")
            report["embedder"] = embedder
        if memories:
            fill(home, memories, env)
            report["memories"] = memories
        started = time.perf_counter()
        daemon = subprocess.Popen(
            [*EXECUTIVE, "--home", str(home), "run"], env=env, stdout=subprocess.PIPE, text=True
        )
        try:
            assert daemon.stdout is not None
            for line in daemon.stdout:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("event") == "daemon.ready" and "ready_s" not in report:
                    report["ready_s"] = round(time.perf_counter() - started, 2)
                if (
                    record.get("event") == "hook.finished"
                    and record.get("hook") == "pre-spawn-pack"
                ):
                    report["pack_built_s"] = round(time.perf_counter() - started, 2)
                    report["rss_mb"] = status_mb(daemon.pid, "VmRSS")
                    report["hwm_mb"] = status_mb(daemon.pid, "VmHWM")
                    # Private memory, and the store's mapped files (page cache the kernel
                    # may take back), which VmRSS counts as well.
                    report["rss_anon_mb"] = status_mb(daemon.pid, "RssAnon")
                    report["rss_file_mb"] = status_mb(daemon.pid, "RssFile")
                    report["pack_outcome"] = record.get("outcome")
                    break
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
        times = []
        for _ in range(lists):
            t0 = time.perf_counter()
            done = subprocess.run(
                [*EXECUTIVE, "--home", str(home), "mem", "list"],
                env=env,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - t0)
            if done.returncode != 0:
                report["list_error"] = done.stderr[-500:]
        report["list_s"] = {"p50": round(statistics.median(times), 2), "max": round(max(times), 2)}
    report["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lists", type=int, default=5)
    parser.add_argument("--embedder", help="EXECUTIVE_EMBEDDER for the demo home")
    parser.add_argument("--memories", type=int, default=0, help="memories to add first")
    args = parser.parse_args()
    main(args.lists, args.embedder, args.memories)
