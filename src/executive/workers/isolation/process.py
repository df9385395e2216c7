"""Running one worker: its isolation and limits, its own process group, a time limit, a pid
file, its output streamed into a run log.

The limit (or the daemon's shutdown) ends the whole tree (:func:`end_tree`). A pid file per
run records pid, group, start time and cgroup, so a daemon killed with SIGKILL ends its
orphaned workers when it starts again (the start time: a recycled pid is never mistaken for
one). Where the run gets a cgroup, the worker starts behind a gate (:data:`GATE`), so not one
process of the tree ever runs outside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import Process

from executive import peers
from executive.logs import get_logger
from executive.workers import output
from executive.workers.isolation import account, cgroup, limits, tree
from executive.workers.isolation.sandbox import Isolation

log = get_logger(__name__)

TERM_GRACE_SECONDS = tree.GRACE_SECONDS
MARK = tree.MARK
TAIL_BYTES = 4000
NOT_ISOLATED = Isolation("none", "not isolated")
# What a run's caller reads once it is over (told its exit code and whether it timed out);
# the fields it returns join the run's worker.finished line.
AfterExit = Callable[[int | None, bool], Awaitable[Mapping[str, object]]]
# A shell that waits for one word on its stdin, sent once the daemon has moved it into the
# run's cgroup, then runs the worker's command.
GATE = ["/bin/sh", "-c", 'read -r go && [ "$go" = go ] && exec "$@" </dev/null; exit 125', "gate"]


@dataclass(frozen=True)
class WorkerRun:
    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    log_path: Path

    def tail(self, limit: int = TAIL_BYTES) -> str:
        try:
            return output.log_tail(self.log_path, limit)
        except OSError:
            return ""


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if it is gone."""
    fields = peers.stat(pid)
    return None if fields is None else int(fields[19])


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
    after_exit: AfterExit | None = None,
) -> WorkerRun:
    """Run one worker; its output streams into ``log_path``, redacted as it passes.

    Nothing unredacted is written anywhere, and the log holds at most the isolation's
    ``log_max_bytes`` plus one marker line (:mod:`executive.workers.output`).
    ``after_exit`` runs once the tree is gone and the log closed (what the run left is
    read there).
    """
    await anyio.Path(pid_dir).mkdir(parents=True, exist_ok=True)
    limit = (isolation or NOT_ISOLATED).limits.log_max_bytes
    sink = await anyio.to_thread.run_sync(output.LogFile, log_path, limit)
    started = time.monotonic()
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
        after_exit=after_exit,
    )
    return WorkerRun(exit_code, timed_out, time.monotonic() - started, log_path)


async def supervise(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    sink: output.Redacting,
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
    pid_file: Path | None = None,
    label: str = "",
    after_exit: AfterExit | None = None,
) -> tuple[int | None, bool]:
    """Start ``argv`` in its own process group (and isolation, and limits), wait, end
    everything it left; its output streams into ``sink``, which is closed at the end.

    Returns (exit code, timed out). When this returns, no process of the tree is alive: the
    time limit, a cancellation or a normal exit all end the group and every descendant,
    every member of the run's cgroup, and in ``user`` mode every process of the account.
    """
    job = _Job(argv[0], cwd, env, timeout_seconds, isolation or NOT_ISOLATED, pid_file, label)
    try:
        result = await job.supervised(argv, sink, readonly)
        if after_exit is not None:
            job.finished.update(await after_exit(*result))
    finally:
        # Every worker.started has its worker.finished: workers and verifiers, ended however
        # (a cancelled run's exit code is what the kill left).
        if job.finished:
            log.info("worker.finished", contract_id=label, **job.finished)
    return result


def _new_group(iso: Isolation) -> cgroup.RunGroup | None:
    n = iso.limits.max_processes
    found = cgroup.hierarchy().hierarchy if n else None
    return found.new_run(n) if found is not None and n else None


async def _shielded(blocking: Callable[..., object], *args: object) -> None:
    """``blocking`` in a worker thread, to its end even when the run is being cancelled."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(blocking, *args)


@dataclass
class _Job:
    """One supervised run: its isolation, its cgroup once made, and how it ended."""

    argv0: str
    cwd: Path
    env: Mapping[str, str]
    timeout_seconds: float
    iso: Isolation
    pid_file: Path | None
    label: str
    group: cgroup.RunGroup | None = None
    # How it ended, for its worker.finished line: filled in once the process started.
    finished: dict[str, object] = field(default_factory=dict)

    async def supervised(
        self, argv: Sequence[str], sink: output.Redacting, readonly: Sequence[Path]
    ) -> tuple[int | None, bool]:
        iso = self.iso
        ids = iso.ids if iso.mode == "user" else None
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(_shielded, sink.close)  # last: once nothing can write
            if ids is not None:
                # Held to the sweep: no other run of the account is live while it happens.
                await stack.enter_async_context(account.held(ids[0], self.label))
            self.group = _new_group(iso)
            if self.group is not None:
                stack.callback(self.group.remove)
            if ids is not None:
                # Before the cgroup goes, after the tree.
                stack.push_async_callback(_shielded, account.sweep, *ids)
            prefixed = [*limits.prefix(iso.limits, iso.mode), *argv]
            return await self.streamed(
                iso.wrap(prefixed, workdir=self.cwd, readonly=readonly), sink
            )

    async def streamed(self, full: list[str], sink: output.Redacting) -> tuple[int | None, bool]:
        """Spawn with stdout and stderr on a pipe a pump drains into ``sink``; watch it."""
        read_end, write_end = os.pipe()
        pump = output.Pump(read_end, sink)
        try:
            async with anyio.create_task_group() as tasks:
                try:
                    process = await self.spawn(full, write_end)
                finally:
                    os.close(write_end)  # the tree holds it now: end of file once it is gone
                tasks.start_soon(pump.run)
                try:
                    result = await self.watch(process)
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await pump.finish()
        return result

    async def spawn(self, full: list[str], out: int) -> Process:
        iso, gated = self.iso, self.group is not None
        uid, gid = iso.ids if iso.mode == "user" and iso.ids else (None, None)
        # Never from a worker thread: bwrap's --die-with-parent follows the starting thread.
        with peers.spawning():  # the control socket judges no one until the pid is known
            process = await anyio.open_process(
                [*GATE, *full] if gated else full,
                cwd=self.cwd,
                env=dict(self.env),  # the environment travels here, not in a readable argv
                stdin=subprocess.PIPE if gated else subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # its own session and process group
                user=uid,
                group=gid,
                extra_groups=[] if uid is not None else None,
            )
            peers.register(process.pid)  # the control socket refuses this tree from now on
        if self.group is not None:
            await _release(process, self.group)
        return process

    async def watch(self, process: Process) -> tuple[int | None, bool]:
        timed_out = False
        started = time.monotonic()
        # From here on the tree is ours to end: a cancellation while the pid file is written
        # (its first await) left the worker running, so the try starts at once.
        try:
            await self._record(process)
            with anyio.move_on_after(self.timeout_seconds) as scope:
                await process.wait()
            if scope.cancelled_caught:
                timed_out = True
                log.warning(
                    "worker.timeout", contract_id=self.label, timeout_seconds=self.timeout_seconds
                )
            # Also the leftovers a worker that exited started in the background.
            await end_tree(process, self.env.get(MARK), self.group)
        except BaseException:
            with anyio.CancelScope(shield=True):
                log.warning("worker.cancelled", contract_id=self.label)
                await end_tree(process, self.env.get(MARK), self.group)
            raise
        finally:
            peers.unregister(process.pid)
            self.finished = {
                "exit_code": process.returncode,
                "timed_out": timed_out,
                "duration_ms": round((time.monotonic() - started) * 1000),
            }
            if self.pid_file is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.Path(self.pid_file).unlink(missing_ok=True)
        return process.returncode, timed_out

    async def _record(self, process: Process) -> None:
        if self.pid_file is not None:
            record = {
                "pid": process.pid,
                "pgid": process.pid,
                "start": start_time(process.pid),
                "contract_id": self.label,
                "argv0": self.argv0,
                "cgroup": str(self.group.path) if self.group is not None else None,
            }
            await anyio.Path(self.pid_file).write_text(json.dumps(record))
        log.info(
            "worker.started",
            contract_id=self.label,
            pid=process.pid,
            argv0=self.argv0,
            cwd=str(self.cwd),
            isolation=self.iso.mode,
        )


async def _release(process: Process, group: cgroup.RunGroup) -> None:
    """Into its cgroup before it runs anything: the gate waits for the word on its stdin."""
    assert process.stdin is not None
    try:
        group.add(process.pid)
        await process.stdin.send(b"go\n")
    except BaseException:
        with anyio.CancelScope(shield=True):
            process.kill()
            await process.wait()
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await process.stdin.aclose()


async def end_tree(
    process: Process, mark: str | None = None, group: cgroup.RunGroup | None = None
) -> None:
    """SIGTERM the group and every descendant, a grace, then SIGKILL, and wait until all are gone.

    How they are found is :mod:`executive.workers.isolation.tree`; inside bwrap the pid namespace takes
    the rest with it, and a run cgroup lists every member. Without either (``none`` mode
    where the host gives no cgroup), a process that cleared its environment and left the
    group and the tree survives: isolation ``none`` is not a sandbox.
    """
    members = group.pids if group is not None else list
    pinned = tree.pin(process.pid) + tree.pin_pids(members(), skip=process.pid)
    tree.signal_group(process.pid, signal.SIGTERM)
    for fd in pinned:
        tree.pidfd_signal(fd, signal.SIGTERM)
    if process.returncode is None:
        with anyio.move_on_after(TERM_GRACE_SECONDS):
            await process.wait()
    pinned += tree.pin(process.pid) if process.returncode is None else []
    pinned += tree.pin_group(process.pid) + (tree.pin_marked(mark) if mark else [])
    pinned += tree.pin_pids(members(), skip=process.pid)
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


def reap_orphans(pid_dir: Path, isolation: Isolation | None = None) -> list[str]:
    """End the workers a previous daemon left running (whole trees, their cgroups' members,
    and in ``user`` mode every process of the account); returns their contract ids.

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
        group = cgroup.RunGroup.recorded(info.get("cgroup"))
        marked = tree.pin_marked(contract) + tree.pin_pids(group.pids() if group else [])
        if root_alive or marked:
            tree.end_orphan(pid if root_alive else None, pgid, marked)
            log.warning("worker.orphan_ended", contract_id=contract, pid=pid)
            ended.append(contract)
        if group is not None:
            group.remove()
        pid_file.unlink(missing_ok=True)
    for raw in pid_dir.glob("*.out") if pid_dir.is_dir() else []:
        raw.unlink(missing_ok=True)  # an earlier version's unredacted output of a lost run
    if isolation is not None and isolation.mode == "user" and isolation.ids is not None:
        account.sweep_if_idle(*isolation.ids)
    return ended
