"""``executive doctor``: every check, what failed, and the fix for each."""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass

from executive import git
from executive.home import Home
from executive.hooks.llm import preflight
from executive.settings import Settings
from executive.workers import sandbox


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    # A warning is reported but does not fail the run (exit code stays 0).
    warning: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


CheckFn = Callable[[Settings], list[Check]]


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
    checks = [
        Check(
            "V3_MEM0_USER_ID",
            settings.user_id is not None,
            "set" if settings.user_id else "memory is on but no user id is set",
            "" if settings.user_id else "set V3_MEM0_USER_ID in .env.executive",
        )
    ]
    return checks


def check_workers(settings: Settings) -> list[Check]:
    if settings.worker_vendor != "claude":
        return [Check("worker vendor", True, f"default vendor {settings.worker_vendor}")]
    found = shutil.which(settings.claude_bin)
    return [
        Check(
            "claude worker CLI",
            found is not None,
            found or f"{settings.claude_bin} not on PATH (WORKER_VENDOR=claude)",
            "" if found else "install Claude Code, or set WORKER_VENDOR=command",
            # Only bundles that use the claude vendor need it; command bundles still run.
            warning=found is None,
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


def check_isolation(settings: Settings) -> list[Check]:
    """Which isolation workers get here, and why; ``none`` is a warning, an impossible choice a failure."""
    try:
        iso = sandbox.from_settings(settings)
    except sandbox.IsolationUnavailable as exc:
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
    network = "network on" if iso.network else "network off"
    return [Check("worker isolation", True, f"{iso.mode}: {iso.reason}; {network}")]


DEFAULT_CHECKS: list[CheckFn] = [
    check_home,
    check_memory_config,
    check_workers,
    check_isolation,
    check_llm_engine,
]


def failed(checks: list[Check]) -> bool:
    return any(not c.ok and not c.warning for c in checks)


def run_checks(settings: Settings, checks: list[CheckFn] | None = None) -> list[Check]:
    results = [Check("configuration", True, "all variables valid")]
    for fn in checks or DEFAULT_CHECKS:
        try:
            results.extend(fn(settings))
        except Exception as exc:  # a broken check is a failed check, not a crash
            results.append(Check(fn.__name__, False, f"check raised {exc!r}", "report this"))
    return results
