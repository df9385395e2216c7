"""Running one worker: its own process group, a wall-clock limit, a pid file, a run log.

The limit (or the daemon's shutdown) sends SIGTERM to the whole group, then SIGKILL after a
grace. A pid file per run records pid, group and start time, so a daemon killed with
SIGKILL finds and ends its orphaned workers when it starts again (the start time makes
sure a recycled pid is never mistaken for one).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

from executive.logs import get_logger

log = get_logger(__name__)

TERM_GRACE_SECONDS = 5.0
TAIL_BYTES = 4000


@dataclass(frozen=True)
class WorkerRun:
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    log_path: Path

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def tail(self, limit: int = TAIL_BYTES) -> str:
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(max(0, self.log_path.stat().st_size - limit))
                return handle.read().decode(errors="replace")
        except OSError:
            return ""


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[19])


async def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    log_path: Path,
    pid_dir: Path,
    contract_id: str,
) -> WorkerRun:
    await anyio.Path(log_path.parent).mkdir(parents=True, exist_ok=True)
    await anyio.Path(pid_dir).mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    timed_out = False
    with log_path.open("ab") as sink:
        process = await anyio.open_process(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own session and process group
        )
    pid_file = pid_dir / f"{contract_id}.json"
    pid_file.write_text(
        json.dumps(
            {
                "pid": process.pid,
                "pgid": process.pid,
                "start": start_time(process.pid),
                "contract_id": contract_id,
                "argv0": argv[0],
            }
        )
    )
    log.info(
        "worker.started", contract_id=contract_id, pid=process.pid, argv0=argv[0], cwd=str(cwd)
    )
    try:
        with anyio.move_on_after(timeout_seconds) as scope:
            await process.wait()
        if scope.cancelled_caught:
            timed_out = True
            log.warning("worker.timeout", contract_id=contract_id, timeout_seconds=timeout_seconds)
            await _end_group(process)
        else:
            _signal_group(process.pid, signal.SIGTERM)  # leftovers the worker started
    except BaseException:
        with anyio.CancelScope(shield=True):
            log.warning("worker.cancelled", contract_id=contract_id)
            await _end_group(process)
        raise
    finally:
        pid_file.unlink(missing_ok=True)
    duration = time.monotonic() - started
    log.info(
        "worker.finished",
        contract_id=contract_id,
        exit_code=process.returncode,
        timed_out=timed_out,
        duration_ms=round(duration * 1000),
    )
    return WorkerRun(process.returncode, timed_out, duration, log_path)


async def _end_group(process: Process) -> None:
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(TERM_GRACE_SECONDS):
        await process.wait()
        return
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pgid, signum)


def reap_orphans(pid_dir: Path) -> list[str]:
    """End the workers a previous daemon left running; returns their contract ids."""
    ended = []
    for pid_file in sorted(pid_dir.glob("*.json")) if pid_dir.is_dir() else []:
        try:
            info = json.loads(pid_file.read_text())
            pid, pgid, started = int(info["pid"]), int(info["pgid"]), info.get("start")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("worker.pidfile_unreadable", path=str(pid_file), error=str(exc))
            pid_file.unlink(missing_ok=True)
            continue
        if started is not None and start_time(pid) == started:
            _signal_group(pgid, signal.SIGTERM)
            deadline = time.monotonic() + TERM_GRACE_SECONDS
            while start_time(pid) == started and time.monotonic() < deadline:
                time.sleep(0.05)
            if start_time(pid) == started:
                _signal_group(pgid, signal.SIGKILL)
            log.warning("worker.orphan_ended", contract_id=info.get("contract_id"), pid=pid)
            ended.append(str(info.get("contract_id")))
        pid_file.unlink(missing_ok=True)
    return ended
