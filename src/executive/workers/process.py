"""Running one worker: its isolation, its own process group, a limit, a pid file, a run log.

The limit (or the daemon's shutdown) sends SIGTERM to the whole group and every descendant,
then SIGKILL after a grace, and waits until none is left. A pid file per run records pid, group and start time, so a daemon killed with
SIGKILL finds and ends its orphaned workers when it starts again (the start time makes
sure a recycled pid is never mistaken for one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import Process

from executive import peers
from executive.logs import get_logger
from executive.redact import scrub
from executive.workers import tree
from executive.workers.sandbox import Isolation

log = get_logger(__name__)

TERM_GRACE_SECONDS = tree.GRACE_SECONDS
MARK = tree.MARK
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
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
) -> WorkerRun:
    """Run one worker; its output, redacted, ends in ``log_path`` when it is over.

    The raw output goes to a file beside the pid files (``.state/``, never committed) and is
    scrubbed into the run log afterwards, so a secret the worker printed never reaches a
    file that git or a person reads.
    """
    await anyio.Path(log_path.parent).mkdir(parents=True, exist_ok=True)
    await anyio.Path(pid_dir).mkdir(parents=True, exist_ok=True)
    raw = pid_dir / f"{contract_id}.out"
    started = time.monotonic()
    try:
        with raw.open("wb") as sink:
            exit_code, timed_out = await supervise(
                argv,
                cwd=cwd,
                env=env,
                timeout_seconds=timeout_seconds,
                sink=sink,
                isolation=isolation,
                readonly=readonly,
                pid_file=pid_dir / f"{contract_id}.json",
                label=contract_id,
            )
    finally:
        _publish(raw, log_path)  # no await: runs even when cancelled
    duration = time.monotonic() - started
    log.info(
        "worker.finished",
        contract_id=contract_id,
        exit_code=exit_code,
        timed_out=timed_out,
        duration_ms=round(duration * 1000),
    )
    return WorkerRun(exit_code, timed_out, duration, log_path)


async def supervise(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    sink: IO[bytes],
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
    pid_file: Path | None = None,
    label: str = "",
) -> tuple[int | None, bool]:
    """Start ``argv`` in its own process group (and isolation), wait, end everything it left.

    Returns (exit code, timed out). When this returns, no process of the tree is alive: the
    time limit, a cancellation or a normal exit all end the group and every descendant.
    """
    iso = isolation or Isolation("none", "not isolated")
    full = iso.wrap(argv, workdir=cwd, readonly=readonly)
    uid, gid = iso.ids if iso.mode == "user" and iso.ids else (None, None)
    # Never from a worker thread: bwrap's --die-with-parent follows the starting thread.
    process = await anyio.open_process(
        full,
        cwd=cwd,
        env=dict(env),  # the environment travels here, not as --setenv in a readable argv
        stdin=subprocess.DEVNULL,
        stdout=sink,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own session and process group
        user=uid,
        group=gid,
        extra_groups=[] if uid is not None else None,
    )
    peers.register(process.pid)  # the control socket refuses this tree from now on
    timed_out = False
    mark = env.get(MARK)
    # From here on the tree is ours to end: a cancellation while the pid file is written (its
    # first await) left the worker running, so the try starts at once.
    try:
        if pid_file is not None:
            await anyio.Path(pid_file).write_text(
                json.dumps(
                    {
                        "pid": process.pid,
                        "pgid": process.pid,
                        "start": start_time(process.pid),
                        "contract_id": label,
                        "argv0": argv[0],
                    }
                )
            )
        log.info(
            "worker.started",
            contract_id=label,
            pid=process.pid,
            argv0=argv[0],
            cwd=str(cwd),
            isolation=iso.mode,
        )
        with anyio.move_on_after(timeout_seconds) as scope:
            await process.wait()
        if scope.cancelled_caught:
            timed_out = True
            log.warning("worker.timeout", contract_id=label, timeout_seconds=timeout_seconds)
            await end_tree(process, mark)
        else:
            await end_tree(process, mark)  # leftovers the worker started in the background
    except BaseException:
        with anyio.CancelScope(shield=True):
            log.warning("worker.cancelled", contract_id=label)
            await end_tree(process, mark)
        raise
    finally:
        peers.unregister(process.pid)
        if pid_file is not None:
            with anyio.CancelScope(shield=True):
                await anyio.Path(pid_file).unlink(missing_ok=True)
    return process.returncode, timed_out


def _publish(raw: Path, log_path: Path) -> None:
    try:
        text = raw.read_bytes().decode(errors="replace")
    except OSError as exc:
        log.warning("worker.output_unreadable", path=str(raw), error=str(exc))
        return
    with log_path.open("a") as handle:
        handle.write(scrub(text))
    raw.unlink(missing_ok=True)


async def end_tree(process: Process, mark: str | None = None) -> None:
    """SIGTERM the group and every descendant, a grace, then SIGKILL, and wait until all are gone.

    How they are found is :mod:`executive.workers.tree`; inside bwrap the pid namespace takes
    the rest with it. Outside it, a process that cleared its environment and left the group
    and the tree survives: isolation ``none`` is not a sandbox.
    """
    pinned = tree.pin(process.pid)
    tree.signal_group(process.pid, signal.SIGTERM)
    for fd in pinned:
        tree.pidfd_signal(fd, signal.SIGTERM)
    if process.returncode is None:
        with anyio.move_on_after(TERM_GRACE_SECONDS):
            await process.wait()
    pinned += tree.pin(process.pid) if process.returncode is None else []
    pinned += tree.pin_group(process.pid) + (tree.pin_marked(mark) if mark else [])
    tree.signal_group(process.pid, signal.SIGKILL)
    for fd in pinned:
        tree.pidfd_signal(fd, signal.SIGKILL)
    await process.wait()
    try:
        for fd in pinned:
            # A pidfd turns readable when its process has exited: nothing is left running.
            with anyio.move_on_after(TERM_GRACE_SECONDS) as scope:
                await anyio.wait_readable(fd)
            if scope.cancelled_caught:
                log.error("worker.survivor", pid=tree.pidfd_pid(fd))
    finally:
        for fd in pinned:
            os.close(fd)


def reap_orphans(pid_dir: Path) -> list[str]:
    """End the workers a previous daemon left running (whole trees); returns their contract ids.

    Runs once at start-up, before the loop: blocking here is fine.
    """
    ended = []
    for pid_file in sorted(pid_dir.glob("*.json")) if pid_dir.is_dir() else []:
        try:
            info = json.loads(pid_file.read_text())
            pid, pgid, started = int(info["pid"]), int(info["pgid"]), info.get("start")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("worker.pidfile_unreadable", path=str(pid_file), error=str(exc))
            pid_file.unlink(missing_ok=True)
            continue
        contract = str(info.get("contract_id"))
        root_alive = started is not None and start_time(pid) == started
        # A sandbox whose outer bwrap died before it armed --die-with-parent lives on,
        # reparented and in its own session: it is found by the run's mark in its environment.
        marked = tree.pin_marked(contract)
        if root_alive or marked:
            tree.end_orphan(pid if root_alive else None, pgid, marked)
            log.warning("worker.orphan_ended", contract_id=contract, pid=pid)
            ended.append(contract)
        pid_file.unlink(missing_ok=True)
    for raw in pid_dir.glob("*.out") if pid_dir.is_dir() else []:
        raw.unlink(missing_ok=True)  # unredacted output of a run that never finished
    return ended
