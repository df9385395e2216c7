"""What an operator does to bundles: list, show, retry a blocked one, cancel a queued one.

A retry starts the attempts again from zero: a bundle moved back by hand used to keep its
count and block again after one run. A cancel parks a bundle in ``blocked/`` (so it can be
retried later). While a daemon runs, only the daemon moves queued bundles, so the CLI leaves
a cancel request in ``.state/requests/`` (out of every worker's reach) and the loop applies
it before its next iteration; with no daemon the CLI applies it itself, holding the lock.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from executive.dates import now_iso
from executive.home import PRIORITIES, Home
from executive.logs import get_logger
from executive.workspace.ledger import WorkLedger
from executive.workspace.needs_you import add_entry, resolve
from executive.workspace.state import BundleState, log_progress, read_state, write_state

log = get_logger(__name__)


class OperatorError(Exception):
    """A request that cannot be carried out; the message says why and what to do."""


@dataclass(frozen=True)
class Located:
    slug: str
    where: str  # ondeck, P0..P4, completed or blocked
    folder: Path
    state: BundleState | None
    state_error: str = ""


def places(home: Home) -> list[tuple[str, Path]]:
    return [
        ("ondeck", home.ondeck),
        *((p, home.priority_dir(p)) for p in PRIORITIES),
        ("completed", home.completed),
        ("blocked", home.blocked),
    ]


def list_bundles(home: Home, wheres: Collection[str] = ()) -> list[Located]:
    """Every bundle of the workspace, or of the places named in ``wheres`` only."""
    return [
        _locate(folder.name, where, folder)
        for where, root in places(home)
        if (not wheres or where in wheres) and root.is_dir()
        for folder in sorted(root.iterdir())
        if folder.is_dir() and not folder.is_symlink() and not folder.name.startswith(".")
    ]


def find(home: Home, slug: str) -> Located:
    if not slug or "/" in slug or slug.startswith("."):
        raise OperatorError(f"{slug!r} is not a bundle name")
    for where, root in places(home):
        folder = root / slug
        if folder.is_dir() and not folder.is_symlink():
            return _locate(slug, where, folder)
    raise OperatorError(f"no bundle named {slug} in {home.workspace}")


def in_use(home: Home, slug: str) -> Located | None:
    """The bundle already named ``slug`` anywhere in the workspace, or None when it is free."""
    try:
        return find(home, slug)
    except OperatorError:
        return None


def free_name(home: Home, slug: str) -> str:
    """``slug`` when no bundle in the workspace has it, else the first free ``slug-2``, ..."""
    name, n = slug, 2
    while in_use(home, name) is not None or any((root / name).exists() for _, root in places(home)):
        name, n = f"{slug}-{n}", n + 1
    return name


def retry(home: Home, slug: str) -> Path:
    """Move a blocked bundle back to ``ondeck/`` with its attempts reset; the loop picks it up."""
    found = find(home, slug)
    if found.where != "blocked":
        raise OperatorError(f"{slug} is in {found.where}, not blocked: nothing to retry")
    target = home.ondeck / slug
    if target.exists():
        raise OperatorError(f"{target} already exists; move or remove it first")
    reset = 0
    if found.state is not None:
        state = found.state
        state.status, state.finished_at = "active", ""
        for step in state.steps:
            if step.status != "done":
                reset += step.attempts
                step.status, step.attempts, step.retry_after = "pending", 0, ""
                step.last_error, step.errors, step.diagnosis = "", [], ""
        _save(found.folder, state)
    _log(found.folder, "retried by the operator: attempts reset")
    home.ondeck.mkdir(parents=True, exist_ok=True)
    found.folder.rename(target)
    resolve(home.needs_you, slug, "retried")
    WorkLedger(home.work_ledger).append("BUNDLE_RETRIED", bundle=slug, attempts_reset=reset)
    log.info("bundle.retried", bundle=slug, attempts_reset=reset)
    return target


def cancel(home: Home, slug: str, reason: str = "cancelled by the operator") -> Path:
    """Park a queued or in-progress bundle in ``blocked/``. Only the lock holder may call it."""
    found = find(home, slug)
    if found.where in ("completed", "blocked"):
        raise OperatorError(f"{slug} is already {found.where}")
    if found.state is not None:
        found.state.status, found.state.finished_at = "blocked", now_iso()
        _save(found.folder, found.state)
    _log(found.folder, reason)
    target = home.blocked / slug
    if target.exists():
        raise OperatorError(f"{target} already exists; move or remove it first")
    home.blocked.mkdir(parents=True, exist_ok=True)
    found.folder.rename(target)
    add_entry(
        home.needs_you,
        f"cancelled: {slug}",
        [
            reason,
            f"bundle: {target.relative_to(home.root)}",
            f"to run it after all: `executive --home {home.root} bundle retry {slug}`",
        ],
    )
    WorkLedger(home.work_ledger).append("BUNDLE_CANCELLED", bundle=slug, was=found.where)
    log.info("bundle.cancelled", bundle=slug, was=found.where)
    return target


# --- requests for the running daemon --------------------------------------------------------


def request_cancel(home: Home, slug: str) -> Located:
    """Leave a cancel for the running daemon; the bundle as it is now (running or queued)."""
    found = find(home, slug)  # refuse a name that matches nothing now, not at the next iteration
    if found.where in ("completed", "blocked"):
        raise OperatorError(f"{slug} is already {found.where}")
    folder = _requests(home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / slug).write_text(now_iso() + "\n")
    return found


def cancel_pending(home: Home, slug: str) -> bool:
    """Whether a cancel of ``slug`` waits for the daemon (it applies it between iterations)."""
    return (_requests(home) / slug).is_file()


def _requests(home: Home) -> Path:
    return home.state / "requests" / "cancel"


def apply_requests(home: Home) -> list[str]:
    """Carry out the cancels the CLI left; called by the loop between iterations."""
    folder = _requests(home)
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except FileNotFoundError:
        return []
    done = []
    for slug in names:
        try:
            cancel(home, slug)
            done.append(slug)
        except OperatorError as exc:
            log.warning("bundle.cancel_refused", bundle=slug, error=str(exc))
        (folder / slug).unlink(missing_ok=True)
    return done


def _save(folder: Path, state: BundleState) -> None:
    try:
        write_state(folder, state)
    except OSError as exc:
        raise OperatorError(f"{folder}: cannot write its state: {exc}") from None


def _log(folder: Path, line: str) -> None:
    try:
        log_progress(folder, line)
    except OSError as exc:  # a link or FIFO planted as the log: say so, move nothing
        raise OperatorError(f"{folder}: {exc}") from None


def _locate(slug: str, where: str, folder: Path) -> Located:
    try:
        return Located(slug, where, folder, read_state(folder))
    except (ValueError, OSError) as exc:
        return Located(slug, where, folder, None, f"{type(exc).__name__}: {exc}")
