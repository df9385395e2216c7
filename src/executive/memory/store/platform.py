"""The hosted store: the mem0 Platform through the SDK's sync ``MemoryClient`` (mem0ai 2.2.1).

Every SDK call runs on a worker thread; the event loop only sleeps between event polls.
Traps handled here (``mem0-offline.md`` §5, ``original-system.md`` §7):

* ``MEM0_TELEMETRY=False`` is set before mem0 is first imported, and mem0 is imported only
  inside :meth:`PlatformStore.open`, on the worker thread: with telemetry on, the hosted
  client sends events to PostHog tagged with the account's email.
* ``MemoryClient()`` pings ``GET /v1/ping/`` in its constructor: it is built on a worker
  thread, never on the loop, never at import.
* Writes go to ``POST /v3/memories/add/`` with the four entity ids top-level and
  ``infer=False`` (Direct Import: the text is stored verbatim, with ``user_id`` *and*
  ``agent_id`` both set on the record). The answer is an event to poll at
  ``GET /v1/event/{id}/``; only ``SUCCEEDED`` with a memory id in its results is confirmed.
  A synchronous answer (the Direct Import page documents ``status: SUCCEEDED`` with
  ``results`` right in the add response) is read the same way, without polling.
* Reads pass entity ids only inside ``filters`` (the SDK rejects them top-level). The
  neutral :class:`Filter` compiles to the v2 filter grammar, see :func:`compile_filter`;
  every result is post-filtered with :meth:`Filter.matches`, so correctness never depends
  on how the server evaluates the filter.
* The API key is never logged, and is scrubbed from every error message.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import anyio.to_thread

from executive.dates import parse_instant
from executive.logs import get_logger
from executive.memory.store import mem0_door
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    NewMemory,
    StoreError,
    WriteReceipt,
)
from executive.memory.store.platform_wire import (
    ENTITY_FIELDS,
    compile_filter,
    describe,
    event_head,
    memory_id_of,
    rows_of,
    status_code,
)
from executive.memory.store.records import record_from_item

log = get_logger(__name__)

T = TypeVar("T")

DEFAULT_HOST = "https://api.mem0.ai"
PAGE_SIZE = 200  # the v3 list endpoint's maximum page_size
MAX_TOP_K = 1000  # the v3 search endpoint's maximum top_k
OVERFETCH_FLOOR = 30  # as the original CLI: max(3 x top_k, 30) when filtering client-side
FINAL_STATUSES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
WIPE_CONCURRENCY = 8
_REDACTED = "[REDACTED]"


@dataclass(eq=False, repr=False)  # no repr: it would show the API key
class PlatformStore:
    name = "platform"

    _client: Any
    _http: Any  # the SDK's own (it sets base_url and the key on it): event polls
    _secret: str
    _host: str
    _poll_seconds: float
    _poll_timeout: float
    _request_timeout: float
    _closed: bool = False

    @classmethod
    async def open(
        cls,
        api_key: str,
        *,
        host: str = DEFAULT_HOST,
        poll_seconds: float = 1.5,
        poll_timeout_seconds: float = 60.0,
        request_timeout_seconds: float = 30.0,
        mem0_dir: Path | None = None,
    ) -> PlatformStore:
        """The SDK client, built on a worker thread; ``mem0_dir``: see ``mem0_door.prepare``."""
        if not api_key:
            raise StoreError("cannot open the mem0 Platform: no API key")
        if poll_seconds <= 0 or poll_timeout_seconds <= 0:
            raise StoreError("cannot open the mem0 Platform: poll settings must be positive")
        mem0_door.prepare(mem0_dir)

        def build() -> Any:
            import httpx

            mem0_door.import_mem0()
            from mem0.client.main import MemoryClient

            http = httpx.Client(timeout=request_timeout_seconds)
            try:
                # The SDK overwrites base_url and headers (Authorization: Token <key>).
                return MemoryClient(api_key=api_key, host=host, client=http), http
            except BaseException:
                http.close()
                raise

        try:
            client, http = await anyio.to_thread.run_sync(build)
        except Exception as exc:
            message = f"cannot open the mem0 Platform at {host}: {describe(exc)}"
            raise StoreError(message.replace(api_key, _REDACTED)) from None
        log.info("store.opened", backend="platform", host=host)
        timing = (poll_seconds, poll_timeout_seconds, request_timeout_seconds)
        return cls(client, http, api_key, host, *timing)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, _REDACTED)

    async def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise StoreError(f"{what}: the store is closed")
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
        except StoreError:
            raise
        except Exception as exc:
            message = f"{what} failed on the mem0 Platform: {describe(exc)}"
            raise StoreError(self._scrub(message)) from None

    # --- reads ------------------------------------------------------------------------------
    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        if top_k <= 0:
            return []
        filters = compile_filter(where)
        # The Platform cannot evaluate min_confidence: the post-filter below does, from more.
        fetch = max(3 * top_k, OVERFETCH_FLOOR) if where.min_confidence is not None else top_k
        fetch = min(fetch, MAX_TOP_K)
        # threshold=0.0: the Platform's default (0.1) would cut before the daemon's own rules,
        # and the embedded store does not cut either.
        found = await self._call(
            "search", self._client.search, query, filters=filters, top_k=fetch, threshold=0.0
        )
        records = [record_from_item(row) for row in rows_of(found)]
        return [r for r in records if where.matches(r)][:top_k]

    async def get(self, memory_id: str) -> MemoryRecord | None:
        def run() -> MemoryRecord | None:
            try:
                item = self._client.get(memory_id)
            except Exception as exc:
                # 404: no such memory; 400: "memory_id should be a valid UUID", so none either.
                if status_code(exc) in (400, 404):
                    return None
                raise
            return record_from_item(item) if isinstance(item, dict) and item.get("id") else None

        return await self._call("get", run)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        body = await self._call("history", self._client.history, memory_id)
        return [dict(row) for row in rows_of(body)]

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        """Every matching memory: ``get_all`` page by page (200 a page) until a short page or
        ``next`` is null, then post-filtered. One thread call per page, so a cancel lands
        between pages."""
        filters = compile_filter(where)
        found: dict[str, MemoryRecord] = {}
        for page in itertools.count(1):
            body = await self._call(
                "list", self._client.get_all, filters=filters, page=page, page_size=PAGE_SIZE
            )
            rows = rows_of(body)
            for row in rows:
                record = record_from_item(row)
                found.setdefault(record.id, record)
            last = not isinstance(body, dict) or not body.get("next")
            if not rows or len(rows) < PAGE_SIZE or last:
                break
        records = [r for r in found.values() if where is None or where.matches(r)]
        records.sort(key=lambda r: (r.created_at or "", r.id))
        return records

    async def revision(self) -> int | None:
        """Unknown: other clients may write to the same Platform project at any time."""
        return None

    async def count(self, where: Filter | None = None) -> int:
        """The length of the complete, post-filtered listing. The API's ``count`` is not used:
        it counts what the server matched, before the daemon's own predicate."""
        return len(await self.list(where))

    # --- writes (harvester and rebuild tools only) --------------------------------------------
    async def add(self, item: NewMemory) -> WriteReceipt:
        return await self._add(item.require_new())

    async def _add(self, item: NewMemory) -> WriteReceipt:
        ids = {name: item.scope.get(name) for name in ENTITY_FIELDS}
        if not ids["app_id"] and isinstance(item.metadata.get("app_id"), str):
            ids["app_id"] = item.metadata["app_id"]  # the harvester keeps app_id in metadata
        kwargs: dict[str, Any] = {name: value for name, value in ids.items() if value}
        if not kwargs:
            return WriteReceipt("ERROR", error="a Platform write needs at least one entity id")
        kwargs |= {"metadata": dict(item.metadata), "infer": False}
        created = parse_instant(item.created_at)
        if created is not None:
            kwargs["timestamp"] = int(created.timestamp())  # backdates the stored created_at
        messages = [{"role": "user", "content": item.text}]
        response = await self._call("add", self._client.add, messages, **kwargs)
        head = event_head(response)
        event_id = head.get("event_id") or head.get("eventId")
        event_id = str(event_id) if event_id else None
        status = str(head.get("status") or "").upper()
        if status in FINAL_STATUSES:  # answered synchronously (Direct Import)
            body = response if isinstance(response, dict) else {"results": response}
            receipt = self._receipt(status, body, event_id)
            if receipt.confirmed or status != "SUCCEEDED" or event_id is None:
                return receipt
            # SUCCEEDED without a memory id in the answer: the event's results decide.
        if event_id is None:
            return WriteReceipt(
                "ERROR",
                error="the add response carried no event id",
                detail=response if isinstance(response, dict) else {"response": response},
            )
        return await self._await_event(event_id)

    async def add_many(self, items: list[NewMemory]) -> list[WriteReceipt]:
        """The Platform has no batch add that confirms each memory: one add (and poll) each.
        It cannot choose ids, so a rebuild's ids and histories are not kept (README)."""
        return [await self._add(item) for item in items]

    def _receipt(self, status: str, body: dict[str, Any], event_id: str | None) -> WriteReceipt:
        if status == "SUCCEEDED":
            memory_id = memory_id_of(body.get("results"))
            if memory_id is not None:
                return WriteReceipt(status, memory_id=memory_id, event_id=event_id, detail=body)
            return WriteReceipt(
                status,
                event_id=event_id,
                error="the event SUCCEEDED but created no memory (the Platform drops exact "
                "repeats that way); not confirmed",
                detail=body,
            )
        error = body.get("error") or body.get("message") or f"the event ended {status}"
        return WriteReceipt(status, event_id=event_id, error=self._scrub(str(error)), detail=body)

    async def _await_event(self, event_id: str) -> WriteReceipt:
        """Poll ``GET /v1/event/{id}/`` until a final status or the deadline. Non-2xx answers
        and transport errors are ignored (the write may still land): polling goes on."""
        path = f"/v1/event/{quote(event_id, safe='')}/"
        deadline = anyio.current_time() + self._poll_timeout
        last: dict[str, Any] = {}
        problem: str | None = None
        polls = 0
        while True:
            remaining = deadline - anyio.current_time()
            timeout = min(self._request_timeout, max(remaining, 1.0))
            try:
                response = await self._call("event poll", self._http.get, path, timeout=timeout)
                polls += 1
                body = response.json() if response.is_success else None
            except StoreError as exc:
                problem = str(exc)
            except ValueError:
                problem = "an event answer that is not JSON"
            else:
                if not response.is_success:
                    problem = f"HTTP {response.status_code}"
                elif isinstance(body, dict):
                    last = body
                    status = str(body.get("status") or "").upper()
                    if status in FINAL_STATUSES:
                        return self._receipt(status, body, event_id)
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                seen = last.get("status") or "none"
                note = f"; last problem: {problem}" if problem else ""
                return WriteReceipt(
                    "TIMEOUT",
                    event_id=event_id,
                    error=f"event {event_id} not final after {self._poll_timeout:g}s "
                    f"({polls} polls, last status {seen}{note})",
                    detail=last,
                )
            await anyio.sleep(min(self._poll_seconds, remaining))

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        """New text and/or metadata merged into the current metadata (PUT replaces metadata
        whole, so the current one is fetched first, as the original CLI did)."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = text
        if metadata is not None:
            current = await self.get(memory_id)
            if current is None:
                raise StoreError(f"update failed on the mem0 Platform: no memory {memory_id}")
            changes["metadata"] = {**current.metadata, **metadata}
        if changes:
            await self._call("update", self._client.update, memory_id, **changes)

    async def delete(self, memory_id: str) -> None:
        """Delete one memory. Already gone (404) counts as deleted."""

        def run() -> None:
            try:
                self._client.delete(memory_id)
            except Exception as exc:
                if status_code(exc) != 404:
                    raise

        await self._call("delete", run)

    async def wipe(self, user_id: str | None = None) -> None:
        """Delete every memory of ``user_id`` (with None, every memory the key can see), one by
        one over the complete listing.

        Not ``delete_all``: that endpoint only queues the deletion (an event to poll) and
        scopes by one entity id; per-memory deletes are synchronous and cover every record.
        """
        records = await self.list(None if user_id is None else Filter(user_id=user_id))
        limiter = anyio.CapacityLimiter(WIPE_CONCURRENCY)
        failures: list[str] = []

        async def one(memory_id: str) -> None:
            async with limiter:
                try:
                    await self.delete(memory_id)
                except StoreError as exc:
                    failures.append(str(exc))

        async with anyio.create_task_group() as group:
            for record in records:
                group.start_soon(one, record.id)
        deleted = len(records) - len(failures)
        log.warning(
            "store.wiped",
            backend="platform",
            host=self._host,
            deleted=deleted,
            one_installation=user_id is not None,
        )
        if failures:
            raise StoreError(f"wipe left {len(failures)} of {len(records)} memories: {failures[0]}")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await anyio.to_thread.run_sync(self._http.close)
        except Exception as exc:  # closing must not fail the caller
            log.warning("store.close_failed", backend="platform", error=self._scrub(repr(exc)))
        log.info("store.closed", backend="platform", host=self._host)
