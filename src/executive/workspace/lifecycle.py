"""The lifecycle folders: ondeck → in-progress/P<n> → completed | blocked.

Every move is one ``rename`` on one filesystem, and ``STEPS.json`` travels inside the
bundle's folder, so a kill at any instant leaves each bundle in exactly one place with a
state that matches it. A malformed bundle never stops the loop: it is moved to ``blocked/``
with a needs-you entry that names the file and the error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from executive.home import PRIORITIES, Home
from executive.logs import get_logger
from executive.workspace import bundle as bundles
from executive.workspace.bundle import Bundle, BundleError
from executive.workspace.needs_you import add_entry
from executive.workspace.state import (
    BundleState,
    StepState,
    log_progress,
    now_iso,
    read_state,
    write_state,
)

log = get_logger(__name__)


@dataclass(frozen=True)
class Active:
    bundle: Bundle
    state: BundleState


class Workspace:
    def __init__(
        self, home: Home, default_vendor: str = "claude", breakdown_turns: int = 100
    ) -> None:
        self.home = home
        self.default_vendor = default_vendor
        self.breakdown_turns = breakdown_turns

    # --- reading ------------------------------------------------------------------------------
    def ondeck(self) -> list[Path]:
        return _folders(self.home.ondeck)

    def in_progress(self) -> list[Path]:
        return [f for p in PRIORITIES for f in _folders(self.home.priority_dir(p))]

    def queued(self) -> int:
        return len(self.ondeck()) + len(self.in_progress())

    def active(self) -> list[Active]:
        """Every runnable in-progress bundle; a broken one is quarantined on the way."""
        found = []
        for folder in self.in_progress():
            try:
                bundle = bundles.load(folder, default_vendor=self.default_vendor)
            except BundleError as exc:
                self.quarantine(folder, str(exc))
                continue
            state = read_state(folder) or _new_state(bundle)
            if state.status == "completed":  # a kill between "completed" and the move
                self._move(bundle.folder, self.home.completed)
                continue
            found.append(Active(bundle, state))
        return found

    def select(
        self, active: list[Active] | None = None, now: datetime | None = None
    ) -> Active | None:
        """P0 before P4, then the oldest; depth-first into its steps.

        A bundle backing off after a failure waits its turn; the others run meanwhile.
        """
        pool = self.active() if active is None else active
        moment = now or datetime.now(UTC)
        candidates = [
            a
            for a in pool
            if a.state.next_step() is not None and a.state.waiting_until(moment) is None
        ]
        if not candidates:
            return None
        return min(candidates, key=lambda a: (a.state.priority, a.state.queued_at, a.bundle.slug))

    # --- moving ---------------------------------------------------------------------------------
    def ingest(self) -> list[Active]:
        """Validate every ondeck bundle and promote it to in-progress by priority."""
        promoted = []
        for folder in self.ondeck():
            try:
                bundle = bundles.load(folder, default_vendor=self.default_vendor)
            except BundleError as exc:
                self.quarantine(folder, str(exc))
                continue
            clash = self._existing(bundle.slug)
            if clash is not None:
                self.quarantine(folder, f"a bundle named {bundle.slug} already exists at {clash}")
                continue
            state = read_state(folder) or _new_state(bundle)
            write_state(folder, state)
            log_progress(folder, f"queued ({state.priority})")
            self._flag_oversized(bundle)
            target = self._move(folder, self.home.priority_dir(state.priority), bundle.slug)
            moved = bundle.model_copy(update={"folder": target})
            log.info("bundle.ingested", bundle=bundle.slug, priority=state.priority)
            promoted.append(Active(moved, state))
        return promoted

    def _flag_oversized(self, bundle: Bundle) -> None:
        """A step estimated above BREAKDOWN_THRESHOLD_TURNS runs anyway; a person is told.

        The original split such steps with an LLM; the built-in path has none, so it asks.
        """
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
        return self._move(active.bundle.folder, self.home.completed)

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

    def quarantine(self, folder: Path, error: str) -> Path:
        target = self._move(folder, self.home.blocked)
        rel = target.relative_to(self.home.root)
        add_entry(
            self.home.needs_you,
            f"malformed bundle: {folder.name}",
            [
                f"file: {rel}/{bundles.PROMPT_FILE}",
                f"error: {error}",
                "fix the file, then move the folder back to workspace/ondeck/",
            ],
        )
        log.warning("bundle.quarantined", bundle=folder.name, error=error, moved_to=str(rel))
        return target

    def _existing(self, slug: str) -> Path | None:
        for root in [
            *(self.home.priority_dir(p) for p in PRIORITIES),
            self.home.completed,
            self.home.blocked,
        ]:
            if (root / slug).exists():
                return root / slug
        return None

    def _move(self, folder: Path, into: Path, name: str | None = None) -> Path:
        into.mkdir(parents=True, exist_ok=True)
        base = name or folder.name
        target = into / base
        n = 2
        while target.exists():
            target = into / f"{base}-{n}"
            n += 1
        folder.rename(target)
        return target


def _folders(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    folders = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return sorted(folders, key=lambda p: (p.stat().st_mtime, p.name))


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
