"""The ``executive mem`` surface: every memory operation as JSON in, JSON out.

One deterministic door for the executive, the LLM skill engine and a person at a shell, in
this process or through the daemon's (``control.py``: the embedded store admits one process).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from executive.memory.runtime import MemoryRuntime
from executive.memory.store import Filter, MemoryRecord, StoreError
from executive.memory.taxonomy import AGENT_ID, Importance, MemoryType
from executive.memory.write import PRINCIPLE_REFUSED, Rejected, Rejection, classify_memory, stamp
from executive.settings import Settings

# Memory ids are UUIDs; packs and log lines show their first 8 characters. Anything shorter
# than a whole id is taken as a prefix, and a prefix must be long enough to mean something.
_FULL_ID = 32
_MIN_PREFIX = 6


def skipped_when_off(settings: Settings) -> dict[str, Any] | None:
    """What an operation answers while memory is switched off, or None when it is on."""
    reason = settings.surface_off
    return None if reason is None else {"ok": True, "skipped": True, "reason": reason}


class SurfaceError(Exception):
    """A request the surface refuses or could not carry out; ``rejections`` when invalid."""

    def __init__(self, message: str, rejections: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.rejections = rejections or []

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": False,
            "error": str(self),
            **({"rejections": self.rejections} if self.rejections else {}),
        }


def record_dict(record: MemoryRecord) -> dict[str, Any]:
    return record.model_dump(exclude_none=True)


class MemorySurface:
    def __init__(self, runtime: MemoryRuntime) -> None:
        self.runtime = runtime
        self._ops: dict[str, Callable[..., Awaitable[dict[str, Any]]]] = {
            "search": self.search,
            "get": self.get,
            "history": self.history,
            "list": self.list,
            "count": self.count,
            "validate": self.validate,
            "add": self.add,
            "update": self.update,
            "delete": self.delete,
            "pending": self.pending,
        }

    def register(self, name: str, op: Callable[..., Awaitable[dict[str, Any]]]) -> None:
        self._ops[name] = op

    async def call(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        if op not in self._ops:
            raise SurfaceError(f"unknown operation {op!r}; known: {', '.join(sorted(self._ops))}")
        try:
            return await self._ops[op](**(args or {}))
        except TypeError as exc:
            raise SurfaceError(f"bad arguments for {op}: {exc}") from exc
        except StoreError as exc:
            raise SurfaceError(str(exc)) from exc

    def _user(self) -> str:
        user = self.runtime.settings.user_id
        if not user:
            raise SurfaceError("V3_MEM0_USER_ID is not set (see .env.executive)")
        return user

    async def search(
        self,
        query: str,
        app_id: str | None = None,
        run_id: str | None = None,
        type: str | None = None,
        top_k: int | None = None,
        min_confidence: float | None = None,
        env: str | None = None,
    ) -> dict[str, Any]:
        if not query or not query.strip():
            raise SurfaceError("search needs a non-empty --query")
        if type is not None and type not in {t.value for t in MemoryType}:
            raise SurfaceError(
                f"unknown type {type!r}; one of {', '.join(t.value for t in MemoryType)}"
            )
        where = Filter(
            user_id=self._user(),
            agent_id=AGENT_ID,
            app_ids=(app_id,) if app_id else (),
            run_id=run_id,
            types=(type,) if type else (),
            env=env,
            min_confidence=min_confidence,
        )
        view = await self.runtime.view()
        found = await view.search(query, where, top_k or self.runtime.settings.top_k)
        return {"count": len(found), "results": [record_dict(r) for r in found]}

    async def resolve(self, id: str) -> MemoryRecord:
        """The memory ``id`` names: a whole id, or a unique prefix as packs and logs show it."""
        view = await self.runtime.view()
        record = await view.get(id) if len(id) >= _FULL_ID else None
        if record is not None:
            return record
        if len(id) < _MIN_PREFIX:
            raise SurfaceError(
                f"no memory with id {id} (give the whole id or at least {_MIN_PREFIX} characters)"
            )
        matches = [r for r in await view.list(Filter(user_id=self._user())) if r.id.startswith(id)]
        if not matches:
            raise SurfaceError(f"no memory with id {id}")
        if len(matches) > 1:
            shown = ", ".join(r.id for r in matches[:5])
            raise SurfaceError(
                f"{len(matches)} memories have ids starting {id}: {shown}; give more characters"
            )
        return matches[0]

    async def get(self, id: str) -> dict[str, Any]:
        return record_dict(await self.resolve(id))

    async def history(self, id: str) -> dict[str, Any]:
        record = await self.resolve(id)
        rows = await (await self.runtime.view()).history(record.id)
        return {"id": record.id, "count": len(rows), "history": rows}

    async def list(
        self, app_id: str | None = None, env: str | None = None, file: str | None = None
    ) -> dict[str, Any]:
        """Every memory of this installation (no cap), optionally one app, env or file."""
        where = Filter(
            user_id=self._user(),
            app_ids=(app_id,) if app_id else (),
            env=env,
            metadata=(("files", file),) if file else (),
        )
        records = await (await self.runtime.view()).list(where)
        return {"count": len(records), "results": [record_dict(r) for r in records]}

    async def count(self) -> dict[str, Any]:
        return {"count": await (await self.runtime.view()).count(Filter(user_id=self._user()))}

    async def pending(self) -> dict[str, Any]:
        states = self.runtime.ledger.state().pending()
        return {
            "count": len(states),
            "pending": [
                {"key": s.key, "op": s.last_op, "attempts": s.attempts, "error": s.last_error}
                for s in states
            ],
        }

    async def validate(self, items: list[Any]) -> dict[str, Any]:
        defaults = self.runtime.defaults
        problems = []
        for index, item in enumerate(items):
            stamped = stamp(item, defaults)
            rejections = classify_memory(stamped, user_id=defaults.user_id)
            if not rejections and stamped["metadata"]["type"] == MemoryType.PRINCIPLE:
                # What `add` would say: this surface never writes a principle.
                rejections = [Rejection("metadata.type", PRINCIPLE_REFUSED)]
            problems += [{"item": index, "field": r.field, "reason": r.reason} for r in rejections]
        return {"ok": not problems, "total": len(items), "rejections": problems}

    async def add(self, items: list[Any]) -> dict[str, Any]:
        if (skipped := skipped_when_off(self.runtime.settings)) is not None:
            return skipped
        if not items:
            raise SurfaceError("nothing to add")
        harvester = await self.runtime.harvester()
        try:
            return (await harvester.add(items, actor="cli")).as_dict()
        except Rejected as exc:
            raise _rejected(exc) from exc

    async def update(
        self, id: str, text: str | None = None, importance: str | None = None
    ) -> dict[str, Any]:
        if (skipped := skipped_when_off(self.runtime.settings)) is not None:
            return skipped
        if text is None and importance is None:
            raise SurfaceError("update needs --text or --importance")
        if importance is not None and importance not in {i.value for i in Importance}:
            raise SurfaceError(
                f"unknown importance {importance!r}; one of {', '.join(i.value for i in Importance)}"
            )
        if text is not None and not text.strip():
            raise SurfaceError("--text must not be empty")
        id = (await self.resolve(id)).id
        harvester = await self.runtime.harvester()
        try:
            updated = await harvester.update(
                id,
                text=text,
                metadata={"importance": importance} if importance else None,
                actor="cli",
            )
        except Rejected as exc:
            raise _rejected(exc) from exc
        return {"ok": True, "id": id, "updated": record_dict(updated)}

    async def delete(self, id: str) -> dict[str, Any]:
        if (skipped := skipped_when_off(self.runtime.settings)) is not None:
            return skipped
        record = await self.resolve(id)
        harvester = await self.runtime.harvester()
        if not await harvester.delete(record, actor="cli", reason="executive mem delete"):
            raise SurfaceError(f"delete of {record.id} failed; it stays pending in the ledger")
        return {"ok": True, "id": record.id, "deleted": True}


def _rejected(exc: Rejected) -> SurfaceError:
    """The harvester's rejections, each naming its item and field."""
    out = []
    for r in exc.rejections:
        field, item = r.field, None
        if field.startswith("[") and "]." in field:
            index, field = field[1:].split("].", 1)
            item = int(index)
        out.append(
            {"field": field, "reason": r.reason, **({"item": item} if item is not None else {})}
        )
    return SurfaceError("rejected: nothing was written", out)
