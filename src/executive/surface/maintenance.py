"""The durability tools as surface operations: snapshot, restore, rebuild, drift, purge, replay.

They hold the store's write side (with the harvester, the only code that does), and take the
harvester's gate so no harvest write lands in the middle of a rebuild or a restore.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from executive import git
from executive.corpus import backfill
from executive.logs import get_logger
from executive.memory.durability import (
    Progress,
    RebuildError,
    SnapshotError,
    find_drift,
    fix_drift,
    installation,
    load_snapshot,
    purge,
    rebuild_store,
    restore,
    take_snapshot,
)
from executive.memory.health import confirmed_live
from executive.memory.runtime import MemoryRuntime
from executive.memory.write import TrustedRules
from executive.surface.operations import SurfaceError, skipped_when_off

log = get_logger(__name__)


@contextlib.contextmanager
def _as_surface_error() -> Iterator[None]:
    try:
        yield
    except (SnapshotError, RebuildError) as exc:
        raise SurfaceError(str(exc)) from exc


class Maintenance:
    def __init__(self, runtime: MemoryRuntime) -> None:
        self.runtime = runtime

    def should_snapshot(self) -> str | None:
        """Why the daily job has nothing to do, or None when it should run."""
        settings = self.runtime.settings
        if settings.surface_off is not None:
            return settings.surface_off
        if settings.store_in_home and not self.runtime.home.store_dir.exists():
            return "the embedded store was never opened"
        return None

    def _trusted(self) -> TrustedRules:
        """What constitution.md and the spec files (this home's and its peers') hold now."""
        try:
            return backfill.trusted_rules(self.runtime.members(), self.runtime.home.root)
        except (OSError, UnicodeDecodeError) as exc:
            raise SurfaceError(f"cannot read the files principles come from: {exc}") from exc

    async def snapshot(self) -> dict[str, Any]:
        if (off := skipped_when_off(self.runtime.settings)) is not None:
            return off
        home = self.runtime.home
        user_id = self.runtime.settings.user_id
        expected = await anyio.to_thread.run_sync(confirmed_live, self.runtime.ledger, user_id)
        with _as_surface_error():
            result = await take_snapshot(
                await self.runtime.store(), home.snapshots, user_id=user_id, expected=expected
            )
        if self.runtime.settings.snapshot_commit:
            result["committed"] = self._commit(Path(result["path"]))
        return result

    def _commit(self, path: Path) -> bool:
        home = self.runtime.home
        try:
            return git.commit(
                home.root,
                [path, home.work_ledger, home.harvest_runs, home.retrospectives],
                f"chore(memory-snapshot): daily snapshot {path.stem}",
            )
        except git.GitError as exc:
            log.error("snapshot.commit_failed", error=str(exc))
            return False

    async def restore(self, file: str) -> dict[str, Any]:
        if (off := skipped_when_off(self.runtime.settings)) is not None:
            return off
        with _as_surface_error():
            document = load_snapshot(Path(file))
            store = await self.runtime.store()
            return await restore(store, await self.runtime.harvester(), document, self._trusted())

    async def rebuild(self, progress: Progress | None = None) -> dict[str, Any]:
        if (off := skipped_when_off(self.runtime.settings)) is not None:
            return off
        with _as_surface_error():
            return await rebuild_store(
                await self.runtime.store(),
                await self.runtime.harvester(),
                self.runtime.ledgers(),
                self._trusted(),
                progress,
            )

    async def drift(self, fix: bool = False) -> dict[str, Any]:
        store = await self.runtime.store()
        trusted = self._trusted()
        if fix:
            if (off := skipped_when_off(self.runtime.settings)) is not None:
                return off
            with _as_surface_error():
                return await fix_drift(
                    store, await self.runtime.harvester(), self.runtime.ledgers(), trusted
                )
        report, _, _ = await find_drift(
            store, self.runtime.ledgers(), self.runtime.settings.user_id, trusted
        )
        return report.as_dict()

    async def purge(
        self,
        env: str | None = None,
        cohort: str | None = None,
        app_id: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        if (off := skipped_when_off(self.runtime.settings)) is not None:
            return off
        with _as_surface_error():
            # This installation's memories only: another's may share the store.
            mine = installation(self.runtime.settings.user_id, "purge")
            where = mine.narrowed(env=env, cohort=cohort, app_ids=(app_id,) if app_id else ())
            store = await self.runtime.store()
            if dry_run:
                if not (env or cohort or app_id):
                    raise SurfaceError("purge needs --env, --cohort or --app-id")
                matching = await store.list(where)
                by_type = Counter(str(r.metadata.get("type", "unknown")) for r in matching)
                return {"dry_run": True, "would_delete": len(matching), "by_type": dict(by_type)}
            what = ", ".join(
                f"{k}={v}" for k, v in {"env": env, "cohort": cohort, "app_id": app_id}.items() if v
            )
            return await purge(store, await self.runtime.harvester(), where, f"purge {what}")

    async def replay(self) -> dict[str, Any]:
        # A fold of the whole harvest ledger: in a worker thread, not on the daemon's loop.
        if await anyio.to_thread.run_sync(self.runtime.pending_writes) == 0:
            return {"pending": 0, "confirmed": 0, "still_pending": 0}
        return await (await self.runtime.harvester()).replay()
