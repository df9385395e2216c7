"""Retention: what the daily prune deletes, decided from names and dates, then deleted.

A daemon left running for weeks fills the disk with worker logs, daily snapshots and the
output folders of finished bundles. Each has its own age limit (0 keeps everything). What
is *committed* stays in git history; the prune only frees the working tree and the output
root. Active bundles' output folders and the newest snapshot are never candidates.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from executive.home import PRIORITIES, Home
from executive.logs import get_logger

log = get_logger(__name__)

_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class Limits:
    worker_logs_days: int
    snapshots_days: int
    outputs_days: int


@dataclass
class Plan:
    worker_logs: list[Path] = field(default_factory=list)
    snapshots: list[Path] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)

    def paths(self) -> list[Path]:
        return [path for paths in vars(self).values() for path in paths]

    def counts(self) -> dict[str, int]:
        return {kind: len(paths) for kind, paths in vars(self).items()}


def plan(home: Home, outputs: Path, limits: Limits, now: datetime) -> Plan:
    """Everything older than its limit, as of ``now``; nothing is touched."""
    today = now.date()
    result = Plan()
    if limits.worker_logs_days:
        cutoff = today - timedelta(days=limits.worker_logs_days)
        result.worker_logs = [p for day, p in _dated(home.worker_logs) if day < cutoff]
    if limits.snapshots_days:
        cutoff = today - timedelta(days=limits.snapshots_days)
        # The newest snapshot is the one a restore would use: never pruned, however old.
        result.snapshots = [p for day, p in _dated(home.snapshots)[:-1] if day < cutoff]
    if limits.outputs_days:
        cutoff_ts = (now - timedelta(days=limits.outputs_days)).timestamp()
        lanes = [home.ondeck, *(home.priority_dir(p) for p in PRIORITIES)]
        active = {child.name for lane in lanes for child in _children(lane)}
        result.outputs = [
            entry
            for entry in _children(outputs)
            if entry.name not in active
            and entry.is_dir()
            and not entry.is_symlink()
            and entry.lstat().st_mtime < cutoff_ts
        ]
    return result


def prune(home: Home, outputs: Path, limits: Limits, now: datetime) -> dict[str, int]:
    """Delete what :func:`plan` chose; a path that cannot go is logged and left."""
    chosen = plan(home, outputs, limits, now)
    failed = 0
    for path in chosen.paths():
        try:
            if path.is_dir() and not path.is_symlink():
                # rmtree does not follow symlinks planted inside (avoids_symlink_attacks).
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            failed += 1
            log.warning("prune.failed", path=str(path), error=str(exc))
    counts = {**chosen.counts(), "failed": failed}
    log.info("prune.finished", **counts)
    return counts


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(Path(entry.path) for entry in os.scandir(folder))
    except FileNotFoundError:
        return []


def _dated(folder: Path) -> list[tuple[date, Path]]:
    """The entries whose names start with a real date, oldest first, each with its date."""
    found = []
    for path in _children(folder):
        with contextlib.suppress(ValueError):  # 2026-13-45 has the shape of a date only
            if match := _DAY.match(path.name):
                found.append((date.fromisoformat(match.group(1)), path))
    return sorted(found)
