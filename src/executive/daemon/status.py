"""What ``executive status`` reports, gathered without touching the memory store."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from executive.home import Home
from executive.hookspecs import SPECS
from executive.memory import health as store_health
from executive.memory.durability import latest_snapshot
from executive.memory.store import Filter, StoreReader
from executive.memory.taxonomy import MemoryType
from executive.memory.write import HarvestLedger
from executive.settings import Settings, value_sources
from executive.spend import chart
from executive.workspace import spending
from executive.workspace.progress import duration, running


def hook_states(
    settings: Settings, sources: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each hook: on or off, and why (the same reasons the runner gives).

    With ``sources`` (from :func:`value_sources`) each also says where its flag's value and
    the master switch's came from: the environment, the file, or the default.
    """
    states = {}
    for spec in SPECS.values():
        hook, flag = spec.name.value, spec.flag
        reason = settings.hook_off(flag) or "on"
        states[hook] = {"on": reason == "on", "flag": flag, "reason": reason}
        if sources is not None:
            states[hook] |= {
                "value": settings.flag(flag),
                "source": sources.get(flag, "default"),
                "master_source": sources.get("V3_MEMORY_ENABLED", "default"),
            }
    return states


def fingerprint(path: Path) -> str | None:
    """What the file held, to tell later whether it changed; None when there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


async def memory_counts(store: StoreReader, user_id: str | None) -> dict[str, Any]:
    by_type = {
        kind.value: await store.count(Filter(user_id=user_id, types=(kind.value,)))
        for kind in MemoryType
    }
    return {"total": sum(by_type.values()), "by_type": by_type}


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
        return None  # locked by us: no daemon holds it (closing the file unlocks it)
    finally:
        os.close(fd)


def next_snapshot(settings: Settings) -> str:
    from executive.daemon.schedule import daily  # APScheduler: only for the files' view

    trigger = daily(*settings.snapshot_hour_minute, settings.tz)
    fire = trigger.get_next_fire_time(None, datetime.now(settings.tz))
    return fire.isoformat() if fire else ""


def _status_file(home: Home) -> dict[str, Any]:
    """What the daemon wrote after its last iteration (the daemon's own file, 0600)."""
    try:
        data = json.loads(home.status_file.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_health(home: Home) -> dict[str, Any] | None:
    """The health the running daemon recorded after its last iteration; None when unknown."""
    health = _status_file(home).get("health")
    return health if isinstance(health, dict) and isinstance(health.get("ok"), bool) else None


def degraded(report: dict[str, Any]) -> bool:
    """Whether the daemon runs, healthy, without a part of itself, or with no daemon the
    store's folder is lost (exit 3 of ``status``: the loop would work, its packs poorer)."""
    health = report.get("health")
    if isinstance(health, dict) and health.get("degraded"):
        return True
    found = (report.get("store") or {}).get("health")
    return isinstance(found, dict) and found.get("state") == "short"


def unhealthy(report: dict[str, Any]) -> bool:
    """Whether ``executive status`` must exit non-zero: the daemon runs and is unhealthy."""
    health = report.get("health")
    return isinstance(health, dict) and health.get("ok") is False


def with_store(health: Any, store: Any) -> Any:
    """The daemon's health with the store's (:mod:`executive.memory.health`) folded in: a store
    that does not answer makes it unhealthy (``status`` exits 1, ``--probe`` too), one that
    lacks memories degraded (exit 3), each with its cause and fix, as ``/healthz`` says."""
    if not isinstance(health, dict) or not isinstance(store, dict) or store.get("ok"):
        return health
    said = f"store: {store['detail']}; fix: {store['fix']}"
    if store.get("state") == "short":
        degraded = {**(health.get("degraded") or {}), "store": said}
        detail = (
            health["detail"] if not health.get("ok") else f"{health['detail']}; degraded: {said}"
        )
        return {**health, "degraded": degraded, "detail": detail}
    detail = said if health.get("detail") in (None, "ok") else f"{health['detail']}; {said}"
    return {**health, "ok": False, "detail": detail}


def gather(settings: Settings) -> dict[str, Any]:
    """The view from the files: what ``.env.executive`` says now, queue, ledgers."""
    home = Home(settings.home)
    pid = daemon_pid(home)
    last = latest_snapshot(home.snapshots)
    ledger = HarvestLedger(home.harvest_runs)
    lost = store_health.folder_lost(settings, home.store_dir, ledger)
    return {
        "source": "files",
        "home": str(home.root),
        "daemon": {"running": pid is not None, "pid": pid},
        # Only a running daemon's: a stopped one's last words are history, not its health.
        "health": recorded_health(home) if pid is not None else None,
        "memory": {
            "enabled": settings.hooks_master_on,
            "store": settings.store_backend,
            "engine": settings.skill_engine,
            "env": settings.env,
        },
        "hooks": hook_states(settings, value_sources(home.env_file)),
        "queue": home.queue_counts(),
        # A step under way, only while a daemon runs it (with none, it was interrupted).
        "running": [r.as_dict() for r in running(home, datetime.now(UTC))] if pid else [],
        "next_snapshot": next_snapshot(settings),
        "last_snapshot": last.isoformat() if last else None,
        # Writes the store never confirmed; replayed at start-up and on a schedule.
        "pending_writes": store_health.pending_writes(ledger),
        "recent_iterations": list(_status_file(home).get("recent_iterations", [])),
        # What paid runs cost, from the work ledger: today, the week, the costliest, the caps.
        "spend": spending.budget_of(settings).summary(),
        **(
            {"store": {"backend": settings.store_backend, "health": lost.as_dict()}} if lost else {}
        ),
    }


def render(report: dict[str, Any], note: str = "") -> list[str]:
    """``executive status`` for a person: the daemon's view when it answered, else the files'."""
    lines = [f"home     {report['home']}", *_daemon_lines(report)]
    if note:
        lines.append(f"         ({note})")
    if health := report.get("health"):
        state = "UNHEALTHY" if not health["ok"] else "DEGRADED" if health.get("degraded") else "ok"
        lines.append(f"health   {state}{_detail(health['detail'], state)}")
    mem = report["memory"]
    lines.append(
        f"memory   {'on' if mem['enabled'] else 'off'}  store={mem['store']} "
        f"engine={mem['engine']} env={mem['env']}"
    )
    lines.extend(_store_lines(report.get("store") or {}))
    for hook, info in report["hooks"].items():
        where = ""
        if "source" in info:
            value = "true" if info["value"] else "false"
            where = f"  [{info['flag']}={value} from {info['source']}]"
        state = "on" if info["on"] else f"off  {info['reason']}"  # "on" needs no reason
        lines.append(f"  hook {hook:<20} {state}{where}")
    queue = report["queue"]
    in_progress = " ".join(f"{p}={n}" for p, n in queue["in_progress"].items())
    lines += [
        f"queue    ondeck={queue['ondeck']} in-progress[{in_progress}] "
        f"completed={queue['completed']} blocked={queue['blocked']}",
        *(_running(run) for run in report.get("running") or []),
        f"pending writes  {report['pending_writes']}  (unconfirmed; replayed on a schedule)",
        f"snapshot last {report['last_snapshot'] or 'never'}, next at {report['next_snapshot']}",
        *spend_lines(report.get("spend")),
    ]
    for job, when in (report.get("next_jobs") or {}).items():
        lines.append(f"  job {job:<24} next {when}")
    for it in report["recent_iterations"][-5:]:
        error = f": {it['error']}" if it.get("error") else ""
        lines.append(
            f"  iteration {it['iteration']}: {it['pace']} in {it['duration_ms']} ms "
            f"at {it['finished_at']}{error}"
        )
    return lines


def _daemon_lines(report: dict[str, Any]) -> list[str]:
    """Whether a daemon runs, and when it answered itself, since when and on what settings."""
    daemon = report["daemon"]
    if report.get("source") != "daemon":
        state = f"running, pid {daemon['pid']}" if daemon["running"] else "not running"
        return [f"daemon   {state}"]
    lines = [
        f"daemon   running, pid {daemon['pid']}, version {daemon['version']}, "
        f"up {duration(daemon['uptime_seconds'])} (since {daemon['started_at']})"
    ]
    if daemon.get("restart_needed"):
        lines.append(
            "         .env.executive changed after the daemon started: restart needed "
            "(the values below are the running ones)"
        )
    return lines


def spend_lines(spend: dict[str, Any] | None) -> list[str]:
    """``executive status``'s spend: today against the cap, the week, the costliest."""
    if not spend:
        return []
    today, caps = spend["today"], spend["caps"]
    cap = f" of ${caps['day_usd']:g} a day" if caps.get("day_usd") else " (no daily cap)"
    unreported = f", {today['not_reported']} not reported" if today["not_reported"] else ""
    lines = [
        f"spend    today ${today['cost_usd']:.4f}{cap}: {today['runs']} paid runs{unreported}, "
        f"{today['input_tokens']} in / {today['output_tokens']} out tokens ({spend['timezone']})"
    ]
    if paused := spend.get("paused"):
        lines.append(f"         {paused['reason']}: resumes {paused['until']}")
    days = spend["days"]
    week = sum(d["cost_usd"] for d in days)
    lines.append(
        f"         last {len(days)} days {chart([d['cost_usd'] for d in days])} ${week:.4f} "
        f"({days[0]['date']} to {days[-1]['date']})"
    )
    for what, key in (("bundles", "bundle"), ("hooks", "hook")):
        if spend[what]:
            costly = ", ".join(f"{e[key]} ${e['cost_usd']:.4f}" for e in spend[what][:3])
            lines.append(f"         costliest {what}: {costly}")
    return lines


def _running(run: dict[str, Any]) -> str:
    """The step under way: which, its attempt, how long it has run, a cancel waiting for it."""
    pending = "; CANCEL PENDING (applied when this step ends)" if run["cancel_pending"] else ""
    return (
        f"running  {run['slug']} ({run['priority']}) step {run['step']}/{run['steps']} "
        f"{run['title']!r}, attempt {run['attempt']}, for {duration(run['seconds'])} "
        f"(since {run['started_at']}){pending}"
    )


def _detail(detail: str, state: str) -> str:
    """The health's detail after its state, without saying it twice ("health ok: ok")."""
    rest = detail.removeprefix("ok").lstrip(";: ") if detail.startswith("ok") else detail
    rest = rest.removeprefix(f"{state.lower()}: ")
    return "" if not rest else f" {rest}" if rest.startswith("(") else f": {rest}"


def _store_lines(store: dict[str, Any]) -> list[str]:
    """The store's count, and what is wrong with it (its health) with the fix."""
    lines = []
    if "total" in store:
        kinds = " ".join(f"{k}={n}" for k, n in store["by_type"].items())
        lines.append(f"store    {store['backend']}: {store['total']} memories ({kinds})")
    if (found := store.get("health")) and not found["ok"]:
        state = {"short": "MISSING MEMORIES", "down": "DOES NOT ANSWER"}.get(
            found["state"], "ERROR"
        )
        lines += [f"store    {state}: {found['detail']}", f"         fix: {found['fix']}"]
    return lines
