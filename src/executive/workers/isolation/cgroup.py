"""A pids cgroup per worker run, where the host lets the daemon make one.

``pids.max`` bounds a run's whole tree, whatever uid its processes have: the one process
limit that holds for a root daemon's sandbox (``RLIMIT_NPROC`` never binds uid 0, and a
sandbox's uid 0 is the daemon's). ``cgroup.procs`` also lists every process of the run, a
detached one with a cleared environment included, so the run's end finds them all.

Where the daemon may make one:

- cgroup v1: the ``pids`` hierarchy, a child of the daemon's own cgroup (root, or a
  hierarchy delegated to the daemon's user);
- cgroup v2: a child of the daemon's own cgroup once ``pids`` is enabled for its children.
  A cgroup with processes cannot enable controllers for its children, so the daemon first
  moves itself into a leaf of its own (``executive-daemon``), as a systemd service with
  ``Delegate=yes`` is meant to; only when it is the sole process there.

Elsewhere (a read-only cgroupfs, no delegation) :func:`hierarchy` says why not, and doctor
reports it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from executive.logs import get_logger

log = get_logger(__name__)

PREFIX = "executive-run-"
DAEMON_LEAF = "executive-daemon"


@dataclass(frozen=True)
class Hierarchy:
    """Where run cgroups are made: ``parent`` accepts children with ``pids.max``."""

    version: int
    parent: Path

    def new_run(self, max_processes: int) -> RunGroup:
        path = self.parent / f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        path.mkdir()
        group = RunGroup(path)
        try:
            (path / "pids.max").write_text(f"{max_processes}\n")
        except OSError:
            group.remove()
            raise
        return group


@dataclass(frozen=True)
class RunGroup:
    path: Path

    @classmethod
    def recorded(cls, value: object) -> RunGroup | None:
        """The run cgroup a pid file names, if it is one of ours (a prefix, an absolute path)."""
        if not isinstance(value, str) or not value:
            return None
        path = Path(value)
        if not path.is_absolute() or not path.name.startswith(PREFIX) or ".." in path.parts:
            return None
        return cls(path)

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self) -> None:
        """rmdir, once no process is left in it (logged when one is)."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.error("worker.cgroup_left", path=str(self.path), error=str(exc))


@dataclass(frozen=True)
class Found:
    hierarchy: Hierarchy | None
    reason: str  # how the limit holds, or why no cgroup can be made


def _own_paths(proc_self: Path) -> dict[str, str]:
    """The daemon's cgroup per controller ("" for the v2 hierarchy), from /proc/self/cgroup."""
    own = {}
    for line in (proc_self / "cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _mounts(proc_self: Path) -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, fs type, super options) of each cgroup mount."""
    found = []
    for line in (proc_self / "mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            mount_point = fields[4].replace("\\040", " ")
            found.append((fields[3], mount_point, tail[0], set(tail[2].split(","))))
    return found


def _inside(mount_root: str, mount_point: str, own: str) -> Path | None:
    rel = os.path.relpath(own, mount_root)
    return None if rel.startswith("..") else Path(mount_point, rel).resolve()


def find(
    proc_self: Path = Path("/proc/self"), pid: int | None = None, *, set_up: bool = True
) -> Found:
    """Where this daemon (``pid``, whose /proc folder is ``proc_self``) can make run cgroups
    with a pids limit, or why it cannot. Without ``set_up`` nothing is changed (doctor)."""
    try:
        own, mounts = _own_paths(proc_self), _mounts(proc_self)
    except (OSError, ValueError) as exc:
        return Found(None, f"cannot read the daemon's cgroup: {exc}")
    reasons = []
    for root, point, kind, options in mounts:
        if kind == "cgroup" and "pids" in options and "pids" in own:
            found = _v1(_inside(root, point, own["pids"]))
        elif kind == "cgroup2" and "" in own:
            found = _v2(_inside(root, point, own[""]), os.getpid() if pid is None else pid, set_up)
        else:
            continue
        if found.hierarchy is not None:
            return found
        reasons.append(found.reason)
    return Found(None, "; ".join(reasons) or "no cgroup hierarchy with the pids controller")


def _v1(folder: Path | None) -> Found:
    if folder is None or not folder.is_dir():
        return Found(None, "cgroup v1 pids: the daemon's cgroup is not mounted here")
    if not os.access(folder, os.W_OK):
        return Found(None, f"cgroup v1 pids: {folder} is not writable by the daemon")
    return Found(Hierarchy(1, folder), f"cgroup v1 pids under {folder}")


def _v2(folder: Path | None, me: int, set_up: bool) -> Found:
    if folder is None or not folder.is_dir():
        return Found(None, "cgroup v2: the daemon's cgroup is not mounted here")
    try:
        available = (folder / "cgroup.controllers").read_text().split()
        enabled = (folder / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return Found(None, f"cgroup v2: {exc}")
    if "pids" not in available:
        return Found(None, f"cgroup v2: pids is not delegated to {folder}")
    if not os.access(folder, os.W_OK):
        return Found(None, f"cgroup v2: {folder} is not writable by the daemon")
    if "pids" not in enabled:
        why_not = _enable_pids(folder, me, set_up)
        if why_not:
            return Found(None, f"cgroup v2: {why_not}")
    return Found(Hierarchy(2, folder), f"cgroup v2 pids under {folder}")


def _enable_pids(folder: Path, me: int, set_up: bool) -> str | None:
    """Move the daemon (``me``) into a leaf of its cgroup and enable pids for the children."""
    try:
        others = [int(p) for p in (folder / "cgroup.procs").read_text().split() if int(p) != me]
    except (OSError, ValueError) as exc:
        return str(exc)
    if others:
        return (
            f"{folder} holds other processes than the daemon (run it as a service with "
            "Delegate=yes, or in a cgroup of its own)"
        )
    if not set_up:
        return None
    leaf = folder / DAEMON_LEAF
    try:
        with contextlib.suppress(FileExistsError):
            leaf.mkdir()
        (leaf / "cgroup.procs").write_text(f"{me}\n")
        (folder / "cgroup.subtree_control").write_text("+pids\n")
    except OSError as exc:
        return f"cannot enable pids for the children of {folder}: {exc}"
    log.info("worker.cgroup_delegated", parent=str(folder), daemon_leaf=str(leaf))
    return None


@functools.cache
def hierarchy() -> Found:
    """:func:`find`, once per daemon (the v2 set-up moves the daemon, so it happens once)."""
    return find()
