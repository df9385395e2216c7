"""``executive doctor``: every check, what failed, and the fix for each."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable

import anyio

from executive import git
from executive.daemon import doctor_store
from executive.daemon.doctor_check import Check
from executive.daemon.provenance import check_workers
from executive.envfile import unknown_environment_keys, unknown_keys
from executive.home import Home
from executive.hooks.llm import preflight
from executive.settings import Settings
from executive.surface.control import RemoteSurface, daemon_listening
from executive.surface.operations import SurfaceError
from executive.workers import egress, environment, isolation


def check_home(settings: Settings) -> list[Check]:
    home = Home(settings.home)
    if not home.root.is_dir():
        return [
            Check(
                "home",
                False,
                f"{home.root} does not exist",
                f"executive init {home.root}",
            )
        ]
    missing = [str(p.relative_to(home.root)) for p in home.layout() if not p.is_dir()]
    checks = [
        Check(
            "home layout",
            not missing,
            "all folders present" if not missing else f"missing: {', '.join(missing)}",
            "" if not missing else f"executive init {home.root}",
        ),
        Check(
            "home is a git repository",
            git.is_repo(home.root),
            "git is the source of truth for memory",
            f"git -C {home.root} init" if git.available() else "install git",
        ),
        Check(
            "constitution",
            home.constitution.is_file(),
            "constitution.md present" if home.constitution.is_file() else "no constitution.md",
            "" if home.constitution.is_file() else f"executive init {home.root}",
        ),
    ]
    if home.env_file.exists():
        mode = stat.S_IMODE(home.env_file.stat().st_mode)
        private = mode & 0o077 == 0
        checks.append(
            Check(
                ".env.executive is private",
                private,
                f"mode {mode:04o}",
                "" if private else f"chmod 600 {home.env_file}",
            )
        )
    return checks


def check_memory_config(settings: Settings) -> list[Check]:
    if not settings.hooks_master_on:
        return [Check("memory", True, "memory hooks off (V3_MEMORY_ENABLED is not true)")]
    return [
        Check(
            "V3_MEM0_USER_ID",
            settings.user_id is not None,
            "set" if settings.user_id else "memory is on but no user id is set",
            "" if settings.user_id else "set V3_MEM0_USER_ID in .env.executive",
        )
    ]


def check_llm_engine(settings: Settings) -> list[Check]:
    """Whether the claude skill engine can run here (SDK, CLI, credentials), and why not.

    Informational (a warning) while EXECUTIVE_SKILL_ENGINE=builtin; a failure when the
    hooks are set to run on claude, since every run would then fall back or fail.
    """
    ready = preflight.readiness(settings)
    chosen = settings.skill_engine == "claude"
    detail = ready.describe()
    if not ready.ok:
        if chosen and settings.skill_engine_fallback:
            detail += " (each hook run falls back to the built-in engine)"
        elif not chosen:
            detail += " (informational: EXECUTIVE_SKILL_ENGINE=builtin)"
    return [
        Check(
            "claude skill engine",
            ready.ok,
            detail,
            ready.fix,
            warning=not ready.ok and not chosen,
        )
    ]


def check_env_keys(settings: Settings) -> list[Check]:
    """Misspelt keys in ``.env.executive`` and in the process environment: a warning naming
    the closest real variable, and where to rename it."""
    env_file = Home(settings.home).env_file
    sources = [
        (str(env_file), unknown_keys(env_file), ""),
        (
            "the process environment",
            unknown_environment_keys(),
            " where the daemon's environment is set (PM2's env, systemd's Environment=, the shell)",
        ),
    ]
    return [
        Check(
            f"unknown key {key}",
            False,
            f"{source} sets {key}, which no setting reads"
            + (f"; did you mean {close}?" if close else ""),
            (f"rename it to {close}" if close else "remove it") + where,
            warning=True,
        )
        for source, found, where in sources
        for key, close in found
    ]


def check_isolation(settings: Settings) -> list[Check]:
    """Which isolation workers get here, and why; ``none`` is a warning, an impossible choice a failure."""
    try:
        iso = isolation.from_settings(settings)
    except isolation.IsolationUnavailable as exc:
        return [
            Check(
                "worker isolation",
                False,
                str(exc),
                "apt-get install bubblewrap, or set EXECUTIVE_WORKER_ISOLATION=auto",
            )
        ]
    if iso.mode == "none":
        return [
            Check(
                "worker isolation",
                False,
                f"none: workers run as the daemon's user beside its files ({iso.reason})",
                "apt-get install bubblewrap (needs user namespaces), or run the daemon as root "
                "with EXECUTIVE_WORKER_USER set to an unprivileged account",
                warning=True,
            )
        ]
    detail = f"{iso.mode}: {iso.reason}; {_network(settings, iso)}"
    checks = [Check("worker isolation", True, detail)]
    home = Home(settings.home)
    if iso.mode == "user" and iso.ids is not None and home.root.is_dir():
        exposed = isolation.reachable(home.root, *iso.ids)
        checks.append(
            Check(
                "the worker account cannot read the home",
                not exposed,
                f"{iso.account} can reach into {home.root} (its ledgers, its memory texts)"
                if exposed
                else f"{home.root} is closed to {iso.account}",
                f"chmod 700 {home.root}" if exposed else "",
            )
        )
    return checks


def _network(settings: Settings, iso: isolation.Isolation) -> str:
    """Where a worker's connections can go, in this mode."""
    if iso.mode == "user":
        # No network namespace without bubblewrap: see README, Security, user mode.
        return (
            "network: the host's (no namespace in user mode); the dashboard refuses every "
            "account of this host but its own, root and EXECUTIVE_DASHBOARD_ALLOW_UIDS, other "
            "services on this host must check who connects"
        )
    unix = (
        "Unix sockets refused (seccomp: socket(AF_UNIX) and datagram pairs)"
        if isolation.CONFINED
        else f"Unix sockets not filtered (no seccomp filter for {os.uname().machine})"
    )
    if not iso.network:
        return f"network off: no way out of the sandbox (EXECUTIVE_WORKER_NETWORK=false); {unix}"
    env = environment.build(os.environ, passthrough=settings.worker_env_names)
    return f"network {egress.plan_for(settings, env).describe()}; {unix}"


def check_limits(settings: Settings) -> list[Check]:
    """Which of a worker's limits hold here, and how; one that does not is a warning."""
    try:
        iso = isolation.from_settings(settings)
    except isolation.IsolationUnavailable:
        return []  # check_isolation already fails, with the reason
    found = isolation.find_cgroups(set_up=False)
    return [
        Check(
            f"worker limit: {held.limit}",
            held.holds,
            held.how,
            "" if held.holds else _LIMIT_FIXES.get(held.limit, ""),
            warning=not held.holds,
        )
        for held in isolation.limits_report(iso.limits, iso.mode, found, iso.bwrap)
    ]


_LIMIT_FIXES = {
    "processes": "run the daemon where it may make a pids cgroup (root, or a systemd service "
    "with Delegate=yes), or in user mode",
    "file size": "install util-linux (prlimit)",
    "sandbox /tmp": "install bubblewrap 0.5 or later",
    "output folder total": "put the output root (EXECUTIVE_OUTPUT_ROOT) on a file system of its own",
}


def check_components(settings: Settings) -> list[Check]:
    """The running daemon's parts; with none, whether the dashboard's address is free to bind."""
    home = Home(settings.home)
    if daemon_listening(home.socket):
        try:
            report = anyio.run(RemoteSurface(home.socket).call, "status")
        except SurfaceError:
            return []  # doctor_store.store reports a daemon that does not answer
        degraded = (report.get("health") or {}).get("degraded") or {}
        return [
            Check(f"daemon part: {name}", False, detail, _COMPONENT_FIX.get(name, ""))
            for name, detail in degraded.items()
        ] or [Check("daemon parts", True, "every part of the running daemon is up")]
    if not settings.dashboard:
        return []
    host, port = settings.dashboard_host_port
    if port == 0:
        return [Check("dashboard address", True, f"{host}: any free port")]
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
    except OSError as exc:
        return [
            Check(
                "dashboard address",
                False,
                f"cannot bind {settings.dashboard_bind}: {exc.strerror or exc}",
                _COMPONENT_FIX["dashboard"],
            )
        ]
    return [Check("dashboard address", True, f"{settings.dashboard_bind} is free")]


_COMPONENT_FIX = {
    "dashboard": "free the port (`ss -ltnp` shows who holds it) or set EXECUTIVE_DASHBOARD_BIND "
    "to a free HOST:PORT; the daemon keeps trying to bind it",
}


DEFAULT_CHECKS: list[Callable[[Settings], list[Check]]] = [
    check_home,
    check_env_keys,
    check_memory_config,
    doctor_store.postgres,
    doctor_store.store,
    check_workers,
    check_isolation,
    check_limits,
    check_llm_engine,
    check_components,
]


def failed(checks: list[Check]) -> bool:
    return any(not c.ok and not c.warning for c in checks)


def run_checks(settings: Settings, report: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check's result; a failure always carries its fix. ``report`` sees each result as
    it comes (a person watching a slow check sees the ones before it)."""
    report = report or (lambda check: None)
    results = [Check("configuration", True, "all variables valid")]
    report(results[0])
    for fn in DEFAULT_CHECKS:
        try:
            found = fn(settings)
        except Exception as exc:  # a broken check is a failed check, not a crash
            found = [
                Check(
                    fn.__name__,
                    False,
                    f"check raised {exc!r}",
                    "run `executive doctor` again; if it repeats, report it with this line",
                )
            ]
        results.extend(found)
        for check in found:
            report(check)
    return results
