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


@dataclass(frozen=True)
class Home:
    root: Path

    # --- authored by people ---------------------------------------------------------------
    @property
    def env_file(self) -> Path:
        return self.root / ".env.executive"

    @property
    def constitution(self) -> Path:
        return self.root / "constitution.md"

    @property
    def capabilities(self) -> Path:
        return self.root / "capabilities.yml"

    # --- the workspace ----------------------------------------------------------------------
    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def ondeck(self) -> Path:
        return self.workspace / "ondeck"

    @property
    def in_progress(self) -> Path:
        return self.workspace / "in-progress"

    def priority_dir(self, priority: str) -> Path:
        return self.in_progress / priority

    @property
    def completed(self) -> Path:
        return self.workspace / "completed"

    @property
    def blocked(self) -> Path:
        return self.workspace / "blocked"

    @property
    def needs_you(self) -> Path:
        return self.workspace / "needs-you.md"

    # --- ledgers and learning (committed) -----------------------------------------------------
    @property
    def ledgers(self) -> Path:
        return self.root / "ledgers"

    @property
    def work_ledger(self) -> Path:
        return self.ledgers / "work-ledger.jsonl"

    @property
    def harvest_runs(self) -> Path:
        return self.ledgers / "harvest-runs"

    @property
    def worker_logs(self) -> Path:
        return self.ledgers / "worker-logs"

    @property
    def retrospectives(self) -> Path:
        return self.root / "learning" / "retrospectives"

    @property
    def snapshots(self) -> Path:
        return self.root / "memory" / "snapshots"

    # --- derived state (git-ignored) ----------------------------------------------------------
    @property
    def state(self) -> Path:
        return self.root / ".state"

    @property
    def store_dir(self) -> Path:
        return self.state / "store"

    @property
    def mem0_dir(self) -> Path:
        return self.state / "mem0"

    @property
    def pids(self) -> Path:
        return self.state / "pids"

    @property
    def socket(self) -> Path:
        """The daemon's control socket, always in ``.state/`` (hidden from every sandbox).

        A deep home's path is longer than a Unix socket address holds; the socket code then
        reaches it through a held folder fd (``/proc/self/fd/<n>/executive.sock``), never
        through a shared runtime folder that another process could have planted first.
        """
        return self.state / "executive.sock"

    @property
    def daemon_pid(self) -> Path:
        return self.state / "daemon.pid"

    @property
    def status_file(self) -> Path:
        return self.state / "status.json"

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
            if not folder.is_dir():
                return 0
            return sum(1 for entry in os.scandir(folder) if entry.is_dir())

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
    """``folder``, mode 0700: made if missing, refused unless a real folder of ours.

    A link planted in its place would have the daemon chmod (and write into) whatever it
    points at, so nothing is followed.
    """
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
