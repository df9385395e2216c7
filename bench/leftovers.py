"""Benchmark: a worker that leaves a very large folder, and the daemon that must stay responsive.

    python bench/leftovers.py [--files 150000] [--max-files 100000] [--isolation sandbox]

A fresh home (memory off, the dashboard on an ephemeral loopback port) queues one command
bundle whose worker creates ``--files`` empty files in its output folder and passes. While
the daemon looks at that folder before and after the run (in a worker thread, at most
``--max-files`` entries: ``EXECUTIVE_WORKER_FOLDER_MAX_FILES``), this process asks
``/healthz`` over and over; ``healthz_ms`` is the slowest and the p50 of those answers from
the worker's start to the goal's completion (target: the slowest under 2 s). From the
daemon's JSON log: ``folder_seconds`` and ``record_seconds`` (the ``worker.finished`` line),
and whether the folder was compared. Prints one JSON object on stdout.
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
import threading
import time
from pathlib import Path
from typing import Any

import httpx

EXECUTIVE = [sys.executable, "-m", "executive"]


def bundle(home: Path, files: int) -> None:
    folder = home / "workspace" / "ondeck" / "many"
    folder.mkdir(parents=True)
    (folder / "make.py").write_text(
        f"import os\nos.makedirs('many')\nfor n in range({files}):\n    open(f'many/{{n}}', 'w').close()\n"
        "open('done.txt', 'w').write('done')\n"
    )
    (folder / "PROMPT.md").write_text(
        "---\ntitle: Many files\ntimeout_seconds: 3600\n"
        'command: [python3, "{bundle_dir}/make.py"]\n'
        "verifiers:\n  - builtin: output_exists\n    path: done.txt\n---\nLeave many files.\n"
    )


class Prober:
    """Asks ``/healthz`` in a loop on a thread of its own until stopped; keeps each time."""

    def __init__(self, url: str) -> None:
        self.url, self.times, self.errors = url, [], 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    client.get(self.url)
                except httpx.HTTPError:
                    self.errors += 1
                self.times.append((time.perf_counter() - started) * 1000)


def main(files: int, max_files: int, isolation: str) -> dict[str, Any]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("V3_", "EXECUTIVE_")) or k == "EXECUTIVE_MODELS_DIR"
    }
    env["EXECUTIVE_LOG_FORMAT"] = "json"
    report: dict[str, Any] = {"files": files, "max_files": max_files, "isolation": isolation}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        subprocess.run([*EXECUTIVE, "init", str(home)], env=env, check=True, capture_output=True)
        with (home / ".env.executive").open("a") as file:
            file.write(
                "WORKER_VENDOR=command\nEXECUTIVE_DASHBOARD=true\n"
                "EXECUTIVE_DASHBOARD_BIND=127.0.0.1:0\nIDLE_SLEEP_SECONDS=0.2\n"
                f"EXECUTIVE_WORKER_FOLDER_MAX_FILES={max_files}\n"
                f"EXECUTIVE_WORKER_ISOLATION={isolation}\n"
            )
        bundle(home, files)
        daemon = subprocess.Popen(
            [*EXECUTIVE, "--home", str(home), "run"], env=env, stdout=subprocess.PIPE, text=True
        )
        prober = None
        try:
            assert daemon.stdout is not None
            for line in daemon.stdout:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                event = record.get("event")
                if event == "dashboard.listening":
                    prober = Prober(record["urls"][0] + "healthz")
                elif event == "worker.started" and prober and not prober.thread.ident:
                    prober.thread.start()  # at the worker's start (verifiers start later)
                elif event == "worker.finished" and "folder_files" in record:
                    report.update(
                        {
                            k: record.get(k)
                            for k in ("folder_files", "folder_compared", "folder_seconds")
                        }
                    )
                    report["record_seconds"] = record.get("record_seconds")
                    report["worker_ms"] = record.get("duration_ms")
                elif event in ("goal.completed", "step.failed", "bundle.quarantined"):
                    report["outcome"] = event
                    break
        finally:
            if prober is not None:
                prober.stop.set()
                if prober.thread.is_alive():
                    prober.thread.join(60)
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
    times = prober.times if prober is not None else []
    report["healthz_ms"] = {
        "count": len(times),
        "p50": round(statistics.median(times), 1) if times else None,
        "max": round(max(times), 1) if times else None,
        "errors": prober.errors if prober is not None else 0,
    }
    report["load"] = round(os.getloadavg()[0], 2)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=150_000)
    parser.add_argument("--max-files", type=int, default=100_000)
    parser.add_argument("--isolation", default="sandbox", choices=("sandbox", "user", "none"))
    args = parser.parse_args()
    print(json.dumps(main(args.files, args.max_files, args.isolation), indent=2))
