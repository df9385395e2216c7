"""The agent's home: a git repository whose layout every part of the daemon agrees on.

Only paths live here (no I/O beyond ``ensure``), so any layer may depend on it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRIORITIES = ("P0", "P1", "P2", "P3", "P4")


class _Under:
    """A path of the layout: ``name`` under another path of it (``root``, ``workspace`` ...)."""

    def __init__(self, parent: str, name: str) -> None:
        self.parent, self.name = parent, name

    def __get__(self, home: Home, owner: type[Home] | None = None) -> Path:
        return Path(getattr(home, self.parent)) / self.name


@dataclass(frozen=True)
class Home:
    root: Path

    # --- authored by people ---------------------------------------------------------------
    env_file = _Under("root", ".env.executive")
    constitution = _Under("root", "constitution.md")
    capabilities = _Under("root", "capabilities.yml")

    # --- the workspace ----------------------------------------------------------------------
    workspace = _Under("root", "workspace")
    ondeck = _Under("workspace", "ondeck")
    in_progress = _Under("workspace", "in-progress")
    completed = _Under("workspace", "completed")
    blocked = _Under("workspace", "blocked")
    needs_you = _Under("workspace", "needs-you.md")

    def priority_dir(self, priority: str) -> Path:
        return self.in_progress / priority

    # --- ledgers and learning (committed) -----------------------------------------------------
    ledgers = _Under("root", "ledgers")
    work_ledger = _Under("ledgers", "work-ledger.jsonl")
    harvest_runs = _Under("ledgers", "harvest-runs")
    worker_logs = _Under("ledgers", "worker-logs")
    retrospectives = _Under("root", "learning/retrospectives")
    snapshots = _Under("root", "memory/snapshots")

    # --- derived state (git-ignored) ----------------------------------------------------------
    state = _Under("root", ".state")
    store_dir = _Under("state", "store")
    mem0_dir = _Under("state", "mem0")
    pids = _Under("state", "pids")
    daemon_pid = _Under("state", "daemon.pid")
    status_file = _Under("state", "status.json")

    @property
    def socket(self) -> Path:
        """The daemon's control socket, always in ``.state/`` (hidden from every sandbox); on a
        path too long for a socket address :mod:`executive.unixpath` reaches it."""
        return self.state / "executive.sock"

    def not_a_home(self) -> str | None:
        """Why this folder is no agent home (``executive init`` makes one), or None."""
        if not self.root.exists():
            return "it does not exist"
        if not self.root.is_dir():
            return "it is not a folder"
        if not (self.workspace.is_dir() or self.env_file.is_file()):
            return "it has no workspace/ and no .env.executive"
        return None

    def queue_counts(self) -> dict[str, Any]:
        """How many bundles wait, run, completed and blocked (folders, counted by scandir)."""

        def count(folder: Path) -> int:
            return sum(1 for e in os.scandir(folder) if e.is_dir()) if folder.is_dir() else 0

        return {
            "ondeck": count(self.ondeck),
            "in_progress": {p: count(self.priority_dir(p)) for p in PRIORITIES},
            "completed": count(self.completed),
            "blocked": count(self.blocked),
        }

    def layout(self) -> list[Path]:
        """The folders a home must have."""
        return [
            self.ondeck,
            *(self.priority_dir(p) for p in PRIORITIES),
            self.completed,
            self.blocked,
            self.harvest_runs,
            self.worker_logs,
            self.retrospectives,
            self.snapshots,
            self.state,
            self.pids,
        ]

    def ensure(self) -> None:
        self.ensure_state()
        for folder in self.layout():
            folder.mkdir(parents=True, exist_ok=True)

    def ensure_state(self) -> None:
        """``.state/``, which holds the socket, the pids and the store (see :func:`private_folder`)."""
        self.root.mkdir(parents=True, exist_ok=True)
        private_folder(self.state)


def private_folder(folder: Path) -> None:
    """``folder``, mode 0700: made if missing, refused unless a real folder of ours (nothing
    is followed: a planted link would have the daemon chmod and write into what it points at)."""
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafeHome(f"{folder} is not a plain folder (a symbolic link?); refusing it")
    if info.st_uid != os.getuid():
        raise UnsafeHome(f"{folder} belongs to uid {info.st_uid}, not to this user")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


class UnsafeHome(RuntimeError):
    """A folder of the home that the daemon must not use as it is; the message says why."""
