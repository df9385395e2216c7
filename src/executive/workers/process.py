"""Running one worker: its isolation and limits, its own process group (and cgroup), a time
limit, a pid file, its output streamed into a run log.

The time limit (or the daemon's shutdown) sends SIGTERM to the whole group, every
descendant, every process of the run's cgroup and, in ``user`` mode, every process of the
worker account (:mod:`executive.workers.account`), then SIGKILL after a grace, and waits
until none is left. A pid file per run records pid, group and start time, so a daemon killed
with SIGKILL finds and ends its orphaned workers when it starts again (the start time makes
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
from anyio.abc import ByteReceiveStream, Process

from executive import peers
from executive.logs import get_logger
from executive.workers import account, cgroups, output, tree
from executive.workers.output import LogOutput, Output
from executive.workers.sandbox import Isolation

log = get_logger(__name__)

TERM_GRACE_SECONDS = tree.GRACE_SECONDS
MARK = tree.MARK
TAIL_BYTES = 4000
DEFAULT_LOG_MAX_BYTES = 16 * 1024 * 1024
# Rounds of reading a cgroup's members and killing them: none of them can fork once killed.
KILL_ROUNDS = 20


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
    log_max_bytes: int = DEFAULT_LOG_MAX_BYTES,
) -> WorkerRun:
    """Run one worker; its output, redacted as it comes, goes into ``log_path``: at most
    ``log_max_bytes`` of it, then one marker line (:mod:`executive.workers.output`)."""
    await anyio.Path(pid_dir).mkdir(parents=True, exist_ok=True)
    sink = await anyio.to_thread.run_sync(LogOutput, log_path, log_max_bytes)
    started = time.monotonic()
    try:
        exit_code, timed_out = await supervise(
            argv,
            cwd=cwd,
            env=env,
            timeout_seconds=timeout_seconds,
            output=sink,
            isolation=isolation,
            readonly=readonly,
            pid_file=pid_dir / f"{contract_id}.json",
            label=contract_id,
        )
    finally:
        with anyio.CancelScope(shield=True):
            await sink.aclose()
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
    output: Output,
    isolation: Isolation | None = None,
    readonly: Sequence[Path] = (),
    pid_file: Path | None = None,
    label: str = "",
) -> tuple[int | None, bool]:
    """Start ``argv`` in its own process group (and isolation, limits, cgroup), stream its
    output (stdout and stderr) into ``output``, wait, end everything it left.

    Returns (exit code, timed out). When this returns, no process of the tree is alive: the
    time limit, a cancellation or a normal exit all end the group and every descendant.
    """
    iso = isolation or Isolation("none", "not isolated")
    worker_account = iso.ids if iso.mode == "user" else None
    async with contextlib.AsyncExitStack() as stack:
        if worker_account is not None:
            await stack.enter_async_context(account.held(worker_account[0], label))
        limits = iso.limits
        group = None
        if limits is not None and limits.cgroups is not None:
            group = cgroups.create(limits.cgroups, limits.processes, limits.owner)
            stack.callback(cgroups.remove, group)
        full = iso.wrap(argv, workdir=cwd, readonly=readonly, gated=group is not None)
        uid, gid = worker_account or (None, None)
        # Never from a worker thread: bwrap's --die-with-parent follows the starting thread.
        # Shielded: cancelled after the fork but before this returns, the process would run
        # on with no one to end it; the cancellation comes at the next await, in _watch.
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                full,
                cwd=cwd,
                env=dict(env),  # the environment travels here, not as --setenv in argv
                stdin=subprocess.PIPE if group is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,  # drained as it fills: the worker never waits on it
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own session and process group
                user=uid,
                group=gid,
                extra_groups=[] if uid is not None else None,
            )
        # Under the account's RLIMIT_NPROC, the next run may start only once none is left.
        settle = limits is not None and "RLIMIT_NPROC" in limits.rlimits(iso.mode)
        ending = Ending(
            process, env.get(MARK), group, worker_account, settle and iso.mode == "user"
        )
        return await _watch(
            process, ending, output, timeout_seconds, pid_file, label, argv[0], cwd, iso.mode
        )
    raise AssertionError("unreachable")  # the exit stack swallows nothing


@dataclass(frozen=True)
class Ending:
    """What ends one run: its root process, its mark, its cgroup, its account (user mode)."""

    process: Process
    mark: str | None = None
    group: Path | None = None
    account: tuple[int, int] | None = None
    settle: bool = False  # wait until the account has no process at all, zombies included

    async def __call__(self) -> None:
        await end_tree(
            self.process,
            self.mark,
            group=self.group,
            worker_account=self.account,
            settle=self.settle,
        )


async def _watch(
    process: Process,
    ending: Ending,
    sink: Output,
    timeout_seconds: float,
    pid_file: Path | None,
    label: str,
    argv0: str,
    cwd: Path,
    mode: str,
) -> tuple[int | None, bool]:
    """Drain the output while the run lasts; the time limit; the tree ended whatever happens."""
    peers.register(process.pid)  # the control socket refuses this tree from now on
    timed_out, failure = False, None
    drained = anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            assert process.stdout is not None
            group.start_soon(_drain, process.stdout, sink, drained)
            # From here on the tree is ours to end: the try starts at once.
            try:
                await _release(process, ending.group)
                if pid_file is not None:
                    await _write_pid_file(pid_file, process.pid, label, argv0)
                log.info(
                    "worker.started",
                    contract_id=label,
                    pid=process.pid,
                    argv0=argv0,
                    cwd=str(cwd),
                    isolation=mode,
                )
                with anyio.move_on_after(timeout_seconds) as scope:
                    await process.wait()
                if scope.cancelled_caught:
                    timed_out = True
                    log.warning(
                        "worker.timeout", contract_id=label, timeout_seconds=timeout_seconds
                    )
                await ending()  # and the leftovers it started in the background
            except Exception as exc:  # raised after the task group, never wrapped in a group
                failure = exc
                with anyio.CancelScope(shield=True):
                    await ending()
            except BaseException:
                with anyio.CancelScope(shield=True):
                    log.warning("worker.cancelled", contract_id=label)
                    await ending()
                raise
            # The tree is gone, so its output ends now, unless a survivor holds the pipe.
            with anyio.move_on_after(TERM_GRACE_SECONDS):
                await drained.wait()
            if not drained.is_set():
                log.error("worker.output_held_open", contract_id=label)
            group.cancel_scope.cancel()
    finally:
        peers.unregister(process.pid)
        with anyio.CancelScope(shield=True):
            if pid_file is not None:
                await anyio.Path(pid_file).unlink(missing_ok=True)
            await process.aclose()
    if failure is not None:
        raise failure
    return process.returncode, timed_out


async def _release(process: Process, group: Path | None) -> None:
    """Put the waiting launcher in the run's cgroup, then let it start the worker."""
    if group is None:
        return
    assert process.stdin is not None
    cgroups.place(group, process.pid)
    with contextlib.suppress(anyio.BrokenResourceError):  # it died: its exit code says why
        await process.stdin.send(b"1")
    await process.stdin.aclose()


async def _write_pid_file(pid_file: Path, pid: int, label: str, argv0: str) -> None:
    info = {"pid": pid, "pgid": pid, "start": start_time(pid), "contract_id": label}
    await anyio.Path(pid_file).write_text(json.dumps({**info, "argv0": argv0}))


async def _drain(stream: ByteReceiveStream, sink: Output, drained: anyio.Event) -> None:
    try:
        await output.drain(stream, sink)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the pipe closed under us: there is nothing more to read
    finally:
        drained.set()


async def end_tree(
    process: Process,
    mark: str | None = None,
    *,
    group: Path | None = None,
    worker_account: tuple[int, int] | None = None,
    settle: bool = False,
) -> None:
    """SIGTERM the group, every descendant, the run's cgroup and (``user`` mode) every process
    of the worker account; a grace, then SIGKILL; wait until all are gone.

    How they are found is :mod:`executive.workers.tree`; inside bwrap the pid namespace takes
    the rest with it, and a cgroup holds every process of the run in any mode. Without a
    cgroup, outside a sandbox and the worker account, a process that cleared its environment
    and left the group and the tree survives: isolation ``none`` is not a sandbox.
    """
    pinned = tree.pin(process.pid) + (_pin_members(group, set()) if group else [])
    tree.signal_group(process.pid, signal.SIGTERM)
    for fd in pinned:
        tree.pidfd_signal(fd, signal.SIGTERM)
    if worker_account is not None:
        await _account_signal(worker_account, signal.SIGTERM)
    if process.returncode is None:
        with anyio.move_on_after(TERM_GRACE_SECONDS):
            await process.wait()
    pinned += tree.pin(process.pid) if process.returncode is None else []
    pinned += tree.pin_group(process.pid) + (tree.pin_marked(mark) if mark else [])
    tree.signal_group(process.pid, signal.SIGKILL)
    for fd in pinned:
        tree.pidfd_signal(fd, signal.SIGKILL)
    if group is not None:
        pinned += _kill_members(group)
    if worker_account is not None:
        await _account_signal(worker_account, signal.SIGKILL)
    await process.wait()
    try:
        await _wait_gone(pinned)
    finally:
        for fd in pinned:
            os.close(fd)
    if worker_account is not None:
        uid = worker_account[0]
        left = (
            await account.wait_empty(uid, TERM_GRACE_SECONDS)
            if settle
            else await anyio.to_thread.run_sync(account.processes, uid)
        )
        for pid in left:
            log.error("worker.survivor", pid=pid, uid=uid)


async def _account_signal(ids: tuple[int, int], signum: signal.Signals) -> None:
    try:
        await account.signal_all(*ids, signum)
    except OSError as exc:
        log.error("worker.account_unsignalled", uid=ids[0], signal=signum.name, error=str(exc))


def _pin_members(group: Path, seen: set[int]) -> list[int]:
    """pidfds for the processes of ``group`` not in ``seen`` (which this adds them to)."""
    fresh = [pid for pid in cgroups.members(group) if pid not in seen]
    seen.update(fresh)
    return tree.pin_pids(fresh)


def _kill_members(group: Path) -> list[int]:
    """SIGKILL every process of ``group`` until no new one appears; their pidfds."""
    seen: set[int] = set()
    pinned: list[int] = []
    for _ in range(KILL_ROUNDS):
        fresh = _pin_members(group, seen)
        if not fresh:
            break
        for fd in fresh:
            tree.pidfd_signal(fd, signal.SIGKILL)
        pinned += fresh
    return pinned


async def _wait_gone(pinned: list[int]) -> None:
    for fd in pinned:
        # A pidfd turns readable when its process has exited: nothing is left running.
        with anyio.move_on_after(TERM_GRACE_SECONDS) as scope:
            await anyio.wait_readable(fd)
        if scope.cancelled_caught:
            log.error("worker.survivor", pid=tree.pidfd_pid(fd))


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
        raw.unlink(missing_ok=True)  # unredacted output of an earlier version's run
    _end_leftover_cgroups(cgroups.owner_key(pid_dir))
    return ended


def _end_leftover_cgroups(owner: str) -> None:
    """Whatever is still in the cgroup of a run whose daemon is gone: nothing escapes that."""
    hierarchy, _ = cgroups.locate()
    for group in cgroups.leftovers(hierarchy, owner) if hierarchy is not None else []:
        pids = cgroups.members(group)
        if pids:
            tree.end_orphan(None, 0, tree.pin_pids(pids))
            log.warning("worker.orphan_ended", cgroup=str(group), processes=len(pids))
        cgroups.remove(group)
