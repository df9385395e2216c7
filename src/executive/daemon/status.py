"""What ``executive status`` reports, gathered without touching the memory store."""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from executive.daemon.schedule import daily
from executive.home import PRIORITIES, Home
from executive.memory import snapshot as snapshots
from executive.memory.ledger import HarvestLedger
from executive.settings import HOOK_FLAGS, Settings


def hook_states(settings: Settings) -> dict[str, dict[str, Any]]:
    """Each hook: on or off, and why (the same reasons the runner gives)."""
    states = {}
    for hook, flag in HOOK_FLAGS.items():
        if not settings.hooks_master_on:
            reason = "V3_MEMORY_ENABLED off"
        elif not settings.hook_flag(hook):
            reason = f"{flag} off"
        else:
            reason = "on"
        states[hook] = {"on": reason == "on", "flag": flag, "reason": reason}
    return states


def queue_counts(home: Home) -> dict[str, Any]:
    def count(folder: Path) -> int:
        if not folder.is_dir():
            return 0
        return sum(1 for entry in os.scandir(folder) if entry.is_dir())

    return {
        "ondeck": count(home.ondeck),
        "in_progress": {p: count(home.priority_dir(p)) for p in PRIORITIES},
        "completed": count(home.completed),
        "blocked": count(home.blocked),
    }


def daemon_pid(home: Home) -> int | None:
    """The pid of the daemon holding this home's lock, or None when none runs."""
    if not home.daemon_pid.exists():
        return None
    fd = os.open(home.daemon_pid, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def next_snapshot(settings: Settings, now: datetime | None = None) -> str:
    hour, minute = settings.snapshot_hour_minute
    trigger = daily(hour, minute, settings.tz)
    current = now or datetime.now(settings.tz)
    fire = trigger.get_next_fire_time(None, current)
    return fire.isoformat() if fire else ""


def recent_iterations(home: Home) -> list[dict[str, Any]]:
    try:
        data = json.loads(home.status_file.read_text())
    except (OSError, json.JSONDecodeError):
        return []
    return list(data.get("recent_iterations", []))


def gather(settings: Settings, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    home = Home(settings.home)
    pid = daemon_pid(home)
    last = snapshots.latest(home.snapshots)
    return {
        "home": str(home.root),
        "daemon": {"running": pid is not None, "pid": pid},
        "memory": {
            "enabled": settings.hooks_master_on,
            "store": settings.store_backend,
            "engine": settings.skill_engine,
            "env": settings.env,
        },
        "hooks": hook_states(settings),
        "queue": queue_counts(home),
        "next_snapshot": next_snapshot(settings),
        "last_snapshot": last.isoformat() if last else None,
        # Writes the store never confirmed; replayed at start-up and on a schedule.
        "pending_writes": len(HarvestLedger(home.harvest_runs).state().pending()),
        "recent_iterations": recent_iterations(home),
        **(extra or {}),
    }
