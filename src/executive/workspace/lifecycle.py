"""The lifecycle folders: ondeck → in-progress/P<n> → completed | blocked.

Every move is one ``rename`` on one filesystem, and ``STEPS.json`` travels inside the
bundle's folder, so a kill at any instant leaves each bundle in exactly one place with a
state that matches it. A malformed bundle (``docs/bundles.md`` says what counts) never stops
the loop: it is moved to ``blocked/`` with a needs-you entry that names the file and the
error, its files kept as they were (moving a link moves the link, never what it points to).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from executive.dates import now_iso
from executive.files import UnsafeFile
from executive.home import PRIORITIES, Home
from executive.logs import get_logger
from executive.workspace import bundle as bundles
from executive.workspace.bundle import Bundle, BundleError
from executive.workspace.needs_you import add_entry, resolve
from executive.workspace.operator import free_name, places
from executive.workspace.state import (
    LOG_FILE,
    STATE_FILE,
    BundleState,
    StateError,
    StepState,
    log_progress,
    read_state,
    write_state,
)

log = get_logger(__name__)


@dataclass(frozen=True)
class Active:
    bundle: Bundle
    state: BundleState


@dataclass(eq=False)
class Workspace:
    home: Home
    default_vendor: str = "claude"
    breakdown_turns: int = 100
    max_prompt_bytes: int = bundles.PROMPT_MAX_BYTES

    # --- reading ------------------------------------------------------------------------------
    def load(self, folder: Path) -> Bundle:
        """The bundle in ``folder``, or :class:`BundleError`: checked before a byte is read."""
        workspace = self.home.root.resolve() / "workspace"
        bundles.check_folder(folder)
        if not folder.resolve().is_relative_to(workspace):
            raise BundleError(f"{folder}: resolves outside the workspace ({folder.resolve()})")
        return bundles.load(
            folder, default_vendor=self.default_vendor, max_prompt_bytes=self.max_prompt_bytes
        )

    def active(self) -> list[Active]:
        """Every runnable in-progress bundle; a broken one is quarantined on the way."""
        found = []
        for folder in [f for p in PRIORITIES for f in _folders(self.home.priority_dir(p))]:
            try:
                bundle = self.load(folder)
                state = read_state(folder) or _new_state(bundle)
            except (BundleError, StateError, UnsafeFile) as exc:
                self.quarantine(folder, str(exc), file=_culprit(exc))
                continue
            if state.status == "completed":  # a kill between "completed" and the move
                self._move(bundle.folder, self.home.completed)
                continue
            found.append(Active(bundle, state))
        return found

    def select(
        self, active: list[Active] | None = None, now: datetime | None = None
    ) -> Active | None:
        """P0 before P4, then the oldest; depth-first into its steps. A bundle backing off
        after a failure waits its turn; the others run meanwhile."""
        pool = self.active() if active is None else active
        moment = now or datetime.now(UTC)
        ready = [a for a in pool if a.state.next_step() is not None]
        candidates = [a for a in ready if a.state.waiting_until(moment) is None]
        if not candidates:
            return None
        return min(candidates, key=lambda a: (a.state.priority, a.state.queued_at, a.bundle.slug))

    # --- moving ---------------------------------------------------------------------------------
    def ingest(self) -> list[Active]:
        """Validate every ondeck bundle and promote it to in-progress by priority."""
        promoted = []
        for folder in _folders(self.home.ondeck):
            try:
                bundle = self.load(folder)
                clash = self._existing(bundle.slug)
                if clash is not None:
                    self._set_aside(folder, bundle.slug, clash)
                    continue
                state = read_state(folder) or _new_state(bundle)
                write_state(folder, state)
                log_progress(folder, f"queued ({state.priority})")
            except (BundleError, StateError, UnsafeFile) as exc:
                self.quarantine(folder, str(exc), file=_culprit(exc))
                continue
            self._flag_oversized(bundle)
            target = self._move(folder, self.home.priority_dir(state.priority), bundle.slug)
            log.info("bundle.ingested", bundle=bundle.slug, priority=state.priority)
            promoted.append(Active(bundle.model_copy(update={"folder": target}), state))
        return promoted

    def _flag_oversized(self, bundle: Bundle) -> None:
        """A step estimated above BREAKDOWN_THRESHOLD_TURNS runs anyway; a person is told (the
        original split such steps with an LLM; the built-in path has none, so it asks)."""
        big = [
            (n, s)
            for n, s in enumerate(bundle.steps, 1)
            if s.estimated_turns is not None and s.estimated_turns > self.breakdown_turns
        ]
        if not big:
            return
        add_entry(
            self.home.needs_you,
            f"oversized steps: {bundle.slug}",
            [
                f"step {n} “{s.title}” is estimated at {s.estimated_turns} turns, over "
                f"BREAKDOWN_THRESHOLD_TURNS ({self.breakdown_turns}): consider splitting it"
                for n, s in big
            ]
            + ["the bundle runs as it is meanwhile"],
        )
        log.warning("bundle.oversized_steps", bundle=bundle.slug, steps=[n for n, _ in big])

    def save(self, active: Active) -> None:
        write_state(active.bundle.folder, active.state)

    def complete(self, active: Active) -> Path:
        active.state.status = "completed"
        active.state.finished_at = now_iso()
        self.save(active)
        log_progress(active.bundle.folder, "completed")
        target = self._move(active.bundle.folder, self.home.completed)
        resolve(self.home.needs_you, active.bundle.slug, "completed")
        return target

    def block(
        self,
        active: Active,
        reason: str,
        details: list[str],
        blocks: Sequence[tuple[str, str]] = (),
    ) -> Path:
        active.state.status = "blocked"
        active.state.finished_at = now_iso()
        self.save(active)
        log_progress(active.bundle.folder, f"blocked: {reason}")
        target = self._move(active.bundle.folder, self.home.blocked)
        add_entry(
            self.home.needs_you,
            f"blocked: {active.bundle.slug}",
            [
                reason,
                *details,
                f"bundle: {target.relative_to(self.home.root)}",
                "to retry (attempts start again from zero): fix the cause, then run "
                f"`executive --home {self.home.root} bundle retry {target.name}`",
            ],
            [(label, text) for label, text in blocks if text.strip()],
        )
        return target

    def quarantine(self, folder: Path, error: str, file: str = bundles.PROMPT_FILE) -> Path | None:
        """Move a bundle that cannot run to ``blocked/`` (files kept) and tell a person; None
        when even the move failed: the error is logged, and the loop goes on."""
        try:
            target = self._move(folder, self.home.blocked)
        except OSError as exc:
            log.error("bundle.quarantine_failed", bundle=folder.name, error=str(exc))
            return None
        rel = target.relative_to(self.home.root)
        add_entry(
            self.home.needs_you,
            f"malformed bundle: {folder.name}",
            [
                f"file: {rel}/{file}",
                f"error: {error}",
                "fix the file, then move the folder back to workspace/ondeck/",
            ],
        )
        log.warning("bundle.quarantined", bundle=folder.name, error=error, moved_to=str(rel))
        return target

    def _set_aside(self, folder: Path, slug: str, clash: Path) -> None:
        """A queued bundle whose name another bundle has: parked in ``blocked/`` under a free
        name, so that ``bundle show`` and ``bundle retry`` reach this copy, not the other."""
        name = free_name(self.home, slug)
        try:
            target = self._move(folder, self.home.blocked, name)
        except OSError as exc:
            log.error("bundle.quarantine_failed", bundle=folder.name, error=str(exc))
            return
        rel, other = target.relative_to(self.home.root), clash.relative_to(self.home.root)
        add_entry(
            self.home.needs_you,
            f"name in use: {target.name}",
            [
                f"a bundle named {slug} already exists at {other}; this one is kept as {rel}",
                f"to run it under that name: `executive --home {self.home.root} bundle retry "
                f"{target.name}` (`bundle show {target.name}` shows it first)",
            ],
        )
        log.warning("bundle.name_in_use", bundle=slug, existing=str(other), moved_to=str(rel))

    def _existing(self, slug: str) -> Path | None:
        found = (root / slug for where, root in places(self.home) if where != "ondeck")
        return next((path for path in found if path.exists()), None)

    def _move(self, folder: Path, into: Path, name: str | None = None) -> Path:
        into.mkdir(parents=True, exist_ok=True)
        base = name or folder.name
        target, n = into / base, 2
        while target.exists():
            target, n = into / f"{base}-{n}", n + 1
        folder.rename(target)
        return target


def _folders(root: Path) -> list[Path]:
    """Bundle folders, oldest first; a symbolic link is listed too, so it gets quarantined."""
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        if entry.name.startswith("."):
            continue
        try:
            info = os.lstat(entry)
        except OSError:
            continue  # gone since the listing
        if stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
            found.append((info.st_mtime, entry.name, entry))
    return [entry for _, _, entry in sorted(found)]


def _culprit(exc: Exception) -> str:
    """The file a needs-you entry should point at for this error."""
    if isinstance(exc, StateError):
        return STATE_FILE
    if isinstance(exc, UnsafeFile) and LOG_FILE in str(exc):
        return LOG_FILE
    return bundles.PROMPT_FILE


def _new_state(bundle: Bundle) -> BundleState:
    return BundleState(
        slug=bundle.slug,
        title=bundle.title,
        priority=bundle.spec.priority,
        steps=[
            StepState(number=i, title=s.title, estimated_seconds=s.estimated_seconds)
            for i, s in enumerate(bundle.steps, 1)
        ],
    )
