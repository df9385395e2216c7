"""A cgroup for each worker run: a process limit no fork escapes, and every process of the run.

Where the host lets the daemon make cgroups, each run (a worker, a verifier) gets one of its
own with ``pids.max`` set, made before the worker starts. The worker's first process (the
launcher) waits until the daemon has put it there, so everything it starts is counted, and
at the run's end the cgroup lists every process the run left, ``setsid``, double forks and
a cleared environment included. The cgroup file system is read-only inside a sandbox and
owned by root outside it: a worker cannot move itself out (except in ``none`` mode under a
root daemon, where it is root).

Two layouts hold (one is looked for, in this order):

* cgroup v1's ``pids`` hierarchy, where the daemon may write its own cgroup's folder (as
  root, commonly): runs go in ``<own>/executive/``;
* cgroup v2, where the daemon's own cgroup has the ``pids`` controller and is the daemon's to
  write (delegated: systemd ``Delegate=pids``). A cgroup with processes cannot hand a
  controller to its children, so before the first run the daemon moves itself into
  ``<own>/daemon`` (only when it is alone in its cgroup) and enables ``pids`` there; runs go
  in ``<own>/``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from executive.logs import get_logger

log = get_logger(__name__)

V1_FOLDER = "executive"
V2_DAEMON = "daemon"
_stale: set[Path] = set()  # run cgroups not yet removable (a process was still exiting)


@dataclass(frozen=True)
class Hierarchy:
    version: int
    own: Path  # the daemon's cgroup, where it was found
    base: Path  # where each run's cgroup is made

    def describe(self) -> str:
        return f"cgroup v{self.version} at {self.base}"


def memberships(text: str) -> dict[str, str]:
    """``/proc/<pid>/cgroup`` as {"pids": path} for v1 controllers and {"": path} for v2."""
    found = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        number, controllers, path = parts
        if number == "0" and not controllers:
            found[""] = path
        for name in controllers.split(","):
            if name:
                found[name] = path
    return found


def mounts(text: str) -> dict[str, tuple[str, str]]:
    """``/proc/<pid>/mountinfo`` as {"pids" or "": (mount point, root inside the hierarchy)}."""
    found = {}
    for line in text.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        kind, options = rest[0], rest[2].split(",")
        if kind == "cgroup2":
            found.setdefault("", (fields[4], fields[3]))
        elif kind == "cgroup" and "pids" in options:
            found.setdefault("pids", (fields[4], fields[3]))
    return found


def _folder(mount: tuple[str, str], path: str) -> Path | None:
    point, root = mount
    if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
        return None
    inside = path[len(root) :] if root != "/" else path
    return Path(point) / inside.lstrip("/")


@functools.cache
def locate() -> tuple[Hierarchy | None, str]:
    """Where this daemon's runs can get cgroups, or None and why not. Changes nothing; found
    once per process (preparing v2 moves the daemon, which must not move the answer)."""
    try:
        groups = memberships(Path("/proc/self/cgroup").read_text())
        mounted = mounts(Path("/proc/self/mountinfo").read_text())
    except OSError as exc:
        return None, f"cannot read this process's cgroups: {exc}"
    reasons = []
    if "pids" in groups and "pids" in mounted:
        own = _folder(mounted["pids"], groups["pids"])
        if own is not None and os.access(own, os.W_OK | os.X_OK):
            return Hierarchy(1, own, own / V1_FOLDER), ""
        reasons.append(f"cgroup v1 pids: {own or groups['pids']} is not writable by the daemon")
    if "" in groups and "" in mounted:
        own = _folder(mounted[""], groups[""])
        reasons.append(_v2_unusable(own) if own is not None else "cgroup v2: not mounted here")
        if not reasons[-1]:
            return Hierarchy(2, own, own), ""  # type: ignore[arg-type]
    return None, "; ".join(reasons) or "no cgroup v1 pids hierarchy or cgroup v2 is mounted"


def _v2_unusable(own: Path) -> str:
    """Why the v2 cgroup ``own`` cannot hold the runs' cgroups ("" when it can)."""
    try:
        controllers = (own / "cgroup.controllers").read_text().split()
        enabled = (own / "cgroup.subtree_control").read_text().split()
        members = (own / "cgroup.procs").read_text().split()
    except OSError as exc:
        return f"cgroup v2: {own} cannot be read: {exc}"
    if "pids" not in controllers:
        return f"cgroup v2: the pids controller is not delegated to {own}"
    if not os.access(own, os.W_OK | os.X_OK):
        return f"cgroup v2: {own} is not writable by the daemon (not delegated to it)"
    if "pids" not in enabled and members not in ([], [str(os.getpid())]):
        return (
            f"cgroup v2: {own} holds other processes than the daemon (give it a cgroup of its own)"
        )
    return ""


def _prepare(hierarchy: Hierarchy) -> None:
    """Make ``base`` ready for run cgroups (v2: move the daemon into a leaf of its own)."""
    if hierarchy.version == 1:
        hierarchy.base.mkdir(exist_ok=True)
        return
    enabled = (hierarchy.own / "cgroup.subtree_control").read_text().split()
    if "pids" in enabled:
        return
    leaf = hierarchy.own / V2_DAEMON
    leaf.mkdir(exist_ok=True)
    (leaf / "cgroup.procs").write_text(str(os.getpid()))
    (hierarchy.own / "cgroup.subtree_control").write_text("+pids")
    log.info("cgroups.prepared", own=str(hierarchy.own), daemon=str(leaf))


def owner_key(pid_dir: Path) -> str:
    """A short name for one home (its pid folder): runs of other homes are never its own."""
    return hashlib.sha256(str(pid_dir.absolute()).encode()).hexdigest()[:10]


def create(hierarchy: Hierarchy, max_pids: int, owner: str) -> Path:
    """A new, empty cgroup for one run, at most ``max_pids`` processes and threads in it;
    ``owner`` (:func:`owner_key`) names its home."""
    _prepare(hierarchy)
    for old in list(_stale):
        remove(old)
    group = hierarchy.base / f"run-{owner}-{os.getpid()}-{secrets.token_hex(4)}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(max_pids))
    except OSError:
        group.rmdir()
        raise
    return group


def place(group: Path, pid: int) -> None:
    (group / "cgroup.procs").write_text(str(pid))


def members(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def remove(group: Path) -> None:
    """Remove a run's cgroup; one a process is still leaving is retried with the next run."""
    try:
        group.rmdir()
    except FileNotFoundError:
        pass
    except OSError as exc:
        _stale.add(group)
        log.info("cgroups.not_removed_yet", group=str(group), error=str(exc))
        return
    _stale.discard(group)


def leftovers(hierarchy: Hierarchy, owner: str) -> list[Path]:
    """Run cgroups of ``owner``'s home whose daemon is gone (killed before it removed them)."""
    found = []
    folders = hierarchy.base.glob(f"run-{owner}-*-*") if hierarchy.base.is_dir() else []
    for group in folders:
        daemon = group.name.split("-")[2]
        ours = daemon == str(os.getpid())
        if ours or not (daemon.isdigit() and Path(f"/proc/{daemon}").exists()):
            found.append(group)
    return found
