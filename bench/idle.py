"""Benchmark: the idle daemon's resident memory and CPU time per idle tick, memory off.

Runs the real daemon (`executive run`) on a fresh home with nothing queued, lets it warm
up, then samples /proc for a measurement window. Prints one JSON object on stdout.

    python bench/idle.py [--ticks 40] [--idle-seconds 0.25]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / CLK_TCK


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def iteration_count(home: Path) -> int:
    try:
        data = json.loads((home / ".state" / "status.json").read_text())
    except (OSError, json.JSONDecodeError):
        return 0
    recent = data.get("recent_iterations") or [{"iteration": 0}]
    return int(recent[-1]["iteration"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ticks", type=int, default=40, help="idle ticks to measure")
    parser.add_argument("--idle-seconds", type=float, default=0.25, help="IDLE_SLEEP_SECONDS")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        subprocess.run(
            [sys.executable, "-m", "executive", "init", str(home)], check=True, capture_output=True
        )
        # Nothing queued: the idle branch is what we measure.
        for bundle in (home / "workspace" / "ondeck").iterdir():
            if bundle.is_dir():
                subprocess.run(["rm", "-r", str(bundle)], check=True)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("V3_", "MEM0_", "EXECUTIVE_"))
        }
        env |= {
            "EXECUTIVE_HOME": str(home),
            "IDLE_SLEEP_SECONDS": str(args.idle_seconds),
            "V3_MEMORY_ENABLED": "false",
            "EXECUTIVE_LOG_FORMAT": "json",
            "EXECUTIVE_LOG_LEVEL": "warning",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "executive", "run"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while iteration_count(home) < 3:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("daemon did not start")
                time.sleep(0.05)
            start_ticks, start_cpu, start_wall = (
                iteration_count(home),
                cpu_seconds(proc.pid),
                time.monotonic(),
            )
            rss_samples = []
            while iteration_count(home) < start_ticks + args.ticks:
                rss_samples.append(rss_kib(proc.pid))
                time.sleep(args.idle_seconds / 2)
            ticks = iteration_count(home) - start_ticks
            cpu = cpu_seconds(proc.pid) - start_cpu
            wall = time.monotonic() - start_wall
            rss = rss_kib(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)

    print(
        json.dumps(
            {
                "benchmark": "idle-daemon",
                "memory": "off",
                "ticks": ticks,
                "idle_sleep_seconds": args.idle_seconds,
                "cpu_ms_per_tick": round(cpu / ticks * 1000, 3),
                "cpu_ms_total": round(cpu * 1000, 1),
                "wall_seconds": round(wall, 2),
                "rss_mib": round(rss / 1024, 1),
                "rss_mib_max": round(max(rss_samples) / 1024, 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
