"""How much a worker's tree may start and write, and which of those limits hold here.

* **Processes**: a cgroup's ``pids.max`` where the host lets the daemon make cgroups
  (:mod:`executive.workers.cgroups`); it counts the run's own processes and threads, in
  every mode. Failing that, ``RLIMIT_NPROC``, which the kernel counts per user (per user
  namespace): it binds a sandbox of a daemon that is not root (the sandbox's own user
  namespace, so the sandbox's own processes), and the worker account in ``user`` mode (all
  of that account's processes: one run holds the account at a time). It binds nothing
  where the worker is root (a root daemon's sandbox maps to root; the kernel exempts it),
  and in ``none`` mode it would count every process of the daemon's user, so it is not set.
* **What it writes**: ``RLIMIT_FSIZE`` in every mode (no file grows past it; a write past
  it fails with EFBIG), and a sandbox's private ``/tmp`` (memory) is a tmpfs of that size.
  The total a worker writes across many files is not bounded (no disk quota).

The launcher (:mod:`executive.workers.launcher`) sets the rlimits inside the sandbox (or
as the worker account), before the worker starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from executive.workers import cgroups
from executive.workers.cgroups import Hierarchy


@dataclass(frozen=True)
class Limits:
    processes: int  # processes and threads of one run
    file_bytes: int  # the largest file a worker may write
    cgroups: Hierarchy | None = None  # where each run's cgroup goes; None: no cgroups
    no_cgroups: str = ""  # why not
    owner: str = "nohome"  # the home whose runs these are (cgroups.owner_key)

    @classmethod
    def found(
        cls, processes: int, file_bytes: int, *, use_cgroups: bool = True, owner: str = "nohome"
    ) -> Limits:
        if not use_cgroups:
            return cls(processes, file_bytes, None, "EXECUTIVE_WORKER_CGROUPS=false", owner)
        hierarchy, why = cgroups.locate()
        return cls(processes, file_bytes, hierarchy, why, owner)

    def nproc_binds(self, mode: str) -> bool:
        """Whether RLIMIT_NPROC limits a worker in ``mode`` (see the module's text)."""
        return mode == "user" or (mode == "sandbox" and os.geteuid() != 0)

    def rlimits(self, mode: str) -> dict[str, int]:
        """The launcher's rlimits for a worker in ``mode``: names of :mod:`resource`.
        RLIMIT_NPROC only without a cgroup (which counts this run alone)."""
        chosen = {"RLIMIT_FSIZE": self.file_bytes}
        if self.cgroups is None and self.nproc_binds(mode):
            chosen["RLIMIT_NPROC"] = self.processes
        return chosen

    def process_limit(self, mode: str) -> tuple[bool, str]:
        """(holds, how or why not) for the process limit of a worker in ``mode``."""
        if self.cgroups is not None:
            return (
                True,
                f"pids.max={self.processes} in a cgroup per run ({self.cgroups.describe()})",
            )
        if self.nproc_binds(mode):
            whose = "the worker account's" if mode == "user" else "the sandbox's user namespace's"
            return True, f"RLIMIT_NPROC={self.processes} ({whose} processes and threads)"
        why = (
            "a root daemon's sandbox runs as root, which RLIMIT_NPROC does not bind"
            if mode == "sandbox"
            else "RLIMIT_NPROC would count every process of the daemon's user"
        )
        return False, f"no process limit: {why}, and no cgroup ({self.no_cgroups})"

    def write_limit(self, mode: str) -> str:
        tmp = f"; its /tmp a tmpfs of {self.file_bytes:,} bytes" if mode == "sandbox" else ""
        return (
            f"RLIMIT_FSIZE={self.file_bytes:,} (no file grows past it){tmp}; "
            "the total over many files is not limited (no disk quota)"
        )
