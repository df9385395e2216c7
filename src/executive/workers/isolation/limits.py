"""What one worker's tree may use: processes, file size, its /tmp, its log.

Each limit is set by the daemon in every isolation mode that can enforce it, and
:func:`report` says which hold here (``executive doctor`` prints it):

- processes: ``pids.max`` of a run cgroup (:mod:`executive.workers.isolation.cgroup`) where the host
  lets the daemon make one; and ``RLIMIT_NPROC`` where it binds the tree alone: in ``user``
  mode (the worker account runs one run at a time: :mod:`executive.workers.isolation.account`) and in a
  sandbox started by a non-root daemon (the count is kept per user namespace, so it is the
  sandbox's own). It never binds uid 0, so a root daemon's sandbox needs the cgroup; in
  ``none`` mode it would count the daemon's own processes, so it is not set there.
- file size: ``RLIMIT_FSIZE`` in every mode (a write past it fails, SIGXFSZ ends the
  writer); a sandbox's private /tmp and /dev/shm are each a tmpfs of that size in total (and
  the tmpfs mounts that hide folders, and /dev, cannot be written). The output folder's
  total is not bounded: a worker may write many files below the limit.
- the run log: :mod:`executive.workers.output` caps it.

The rlimits are set by ``prlimit`` (util-linux) in front of the worker's own command, inside
the sandbox: nothing is changed in the daemon, and no code runs between fork and exec.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from executive.workers.isolation.cgroup import Found

PROBE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Limits:
    max_processes: int | None = None
    file_max_bytes: int | None = None
    log_max_bytes: int | None = None


@dataclass(frozen=True)
class Holding:
    limit: str
    holds: bool
    how: str


@functools.cache
def prlimit() -> str | None:
    return shutil.which("prlimit")


def nproc_binds(mode: str, euid: int) -> bool:
    """Whether ``RLIMIT_NPROC`` bounds this mode's tree alone (see the module's notes)."""
    return mode == "user" or (mode == "sandbox" and euid != 0)


def prefix(limits: Limits, mode: str) -> list[str]:
    """The ``prlimit ... --`` that goes in front of the worker's command (or nothing)."""
    options = []
    if limits.file_max_bytes:
        options.append(f"--fsize={limits.file_max_bytes}")
    if limits.max_processes and nproc_binds(mode, os.geteuid()):
        options.append(f"--nproc={limits.max_processes}")
    found = prlimit()
    if not options or found is None:
        return []
    return [found, *options, "--"]


@functools.cache
def tmpfs_size_supported(bwrap: str) -> bool:
    """Whether this bwrap knows ``--size`` (0.5 and later); older ones refuse the option."""
    try:
        done = subprocess.run(
            [bwrap, "--help"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout + done.stderr


def report(limits: Limits, mode: str, cgroups: Found, bwrap: str | None = None) -> list[Holding]:
    """Which limits hold for a worker in ``mode`` here, and how (or why not)."""
    found = prlimit()
    return [
        _processes(limits, mode, cgroups, found),
        _file_size(limits, found),
        *([_tmp(limits, bwrap)] if mode == "sandbox" else []),
        Holding(
            "run log",
            limits.log_max_bytes is not None,
            f"at most {limits.log_max_bytes} bytes, then one marker line"
            if limits.log_max_bytes
            else "not capped",
        ),
        Holding(
            "output folder total",
            False,
            "not bounded: a worker may write many files below the file size limit",
        ),
    ]


def _processes(limits: Limits, mode: str, cgroups: Found, found: str | None) -> Holding:
    n = limits.max_processes
    if not n:
        return Holding("processes", False, "no limit set")
    how = []
    if cgroups.hierarchy is not None:
        how.append(f"pids.max={n} ({cgroups.reason})")
    if nproc_binds(mode, os.geteuid()) and found is not None:
        how.append(f"RLIMIT_NPROC={n}")
    if how:
        return Holding("processes", True, "; ".join(how))
    nproc = (
        "prlimit (util-linux) is not installed"
        if found is None
        else "RLIMIT_NPROC does not bind uid 0 (a root daemon's sandbox)"
        if mode == "sandbox"
        else "RLIMIT_NPROC would count the daemon's own processes (none mode)"
    )
    return Holding("processes", False, f"does not hold: {cgroups.reason}; {nproc}")


def _file_size(limits: Limits, found: str | None) -> Holding:
    n = limits.file_max_bytes
    if not n:
        return Holding("file size", False, "no limit set")
    if found is None:
        return Holding("file size", False, "does not hold: prlimit (util-linux) is not installed")
    return Holding("file size", True, f"RLIMIT_FSIZE={n} bytes per file")


def _tmp(limits: Limits, bwrap: str | None) -> Holding:
    n = limits.file_max_bytes
    if n and bwrap is not None and tmpfs_size_supported(bwrap):
        return Holding("sandbox /tmp", True, f"/tmp and /dev/shm each a tmpfs of {n} bytes")
    return Holding("sandbox /tmp", False, "a tmpfs of the kernel's default size (half the RAM)")
