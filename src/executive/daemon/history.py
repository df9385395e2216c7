"""Git as the source of truth, kept: commit the ledgers after each iteration with outcomes.

The harvest ledger is the canonical memory log, so it must reach git, not sit untracked.
After an iteration that recorded ``OUTCOMES`` one commit, its message naming them, takes the
ledgers, retrospectives, snapshots and the workspace's own files (:mod:`executive.workspace.kept`:
each bundle's regular files, up to its size and count limits, where it now is, and needs-you.md):
a home is clean after each outcome, but for what a person put beside them. An iteration without
outcomes commits nothing. The work ledger is read on from its end at start (its lines
counted, never parsed), then from where the last look stopped; a ledger replaced or
truncated by hand is read again from its start.
"""

from __future__ import annotations

import anyio

from executive import git
from executive.files import JsonlTail
from executive.home import Home
from executive.logs import get_logger
from executive.workspace import kept

log = get_logger(__name__)

OUTCOMES = {
    "GOAL_COMPLETED": "completed",
    "GOAL_BLOCKED": "blocked",
    "STEP_COMPLETED": "step passed",
    "STEP_FAILED": "step failed",
    "RETRO_WRITTEN": "retrospective",
}
_MAX_NAMED = 5


class History:
    def __init__(self, home: Home) -> None:
        self._home = home
        self._tail = JsonlTail(home.work_ledger)

    def _commit_now(self, text: str) -> bool:
        # The workspace's files are listed here, in the worker thread, not on the event loop.
        home = self._home
        found = kept.workspace(home)
        if found.left_out:
            log.warning("history.left_out", files=found.left_out[:20], count=len(found.left_out))
        paths = [home.work_ledger, home.harvest_runs, home.retrospectives, home.snapshots]
        return git.commit(home.root, [*paths, *found.files], text, follow=[home.workspace])

    async def start(self) -> bool:
        """Commit what an earlier run left uncommitted; then follow the ledger from its end."""
        self._tail.skip_to_end()
        return await self._commit("chore(executive): ledgers left uncommitted by an earlier run")

    async def after_iteration(self) -> bool:
        _, records = self._tail.read()
        outcomes = [_describe(record) for record in records if record.get("event") in OUTCOMES]
        if not outcomes:
            return False
        return await self._commit(message(outcomes))

    async def _commit(self, text: str) -> bool:
        if not git.is_repo(self._home.root):
            return False
        try:
            done = await anyio.to_thread.run_sync(self._commit_now, text)
        except git.GitError as exc:
            log.error("history.commit_failed", error=str(exc))
            return False
        if done:
            log.info("history.committed", message=text.splitlines()[0])
        return done


def message(outcomes: list[str]) -> str:
    head = "; ".join(outcomes[:_MAX_NAMED])
    more = f" (+{len(outcomes) - _MAX_NAMED} more)" if len(outcomes) > _MAX_NAMED else ""
    return f"chore(executive): {head}{more}"


def _describe(record: dict[str, object]) -> str:
    what = OUTCOMES[str(record["event"])]
    bundle = str(record.get("bundle", "")).splitlines()[0][:80] if record.get("bundle") else ""
    step, attempt = record.get("step"), record.get("attempt") or record.get("attempts")
    # "step failed #1" read as the first failure: say which step, and which attempt.
    where = f"(step {step}, attempt {attempt})" if step is not None and attempt else ""
    where = where or (f"(step {step})" if step is not None else "")
    return " ".join(part for part in (bundle, what, where) if part)
