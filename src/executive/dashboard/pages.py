"""The HTML pages: each handler gathers its data and names its template.

Rendering goes through one Jinja environment whose ``finalize`` scrubs every printed value
(before escaping, so a secret is recognised as itself), and the finished page is scrubbed once
more. Store reads go through the read view only; a store that fails is shown, not raised.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

import executive
from executive.dashboard import charts, health, sources
from executive.home import Home
from executive.hookspecs import HookName
from executive.memory.read import Reader, Scope, for_question
from executive.memory.runtime import MemoryRuntime
from executive.memory.store import Filter, StoreError
from executive.observe import HookRun, Observer
from executive.redact import scrub
from executive.settings import Settings
from executive.spend import chart

T = TypeVar("T")
# Figures that list the whole store are computed at most this often, however many tabs
# refresh and however often Prometheus scrapes: the store's one thread also serves the hooks.
STORE_FIGURES_SECONDS = 15.0


@dataclass
class Context:
    """What every page and probe reads. ``status`` is the daemon's own report (``executive status``)."""

    settings: Settings
    observer: Observer
    runtime: MemoryRuntime
    status: Callable[[], dict[str, Any]]
    _cache: dict[str, tuple[float, Any]] = field(default_factory=dict)

    async def cached(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < STORE_FIGURES_SECONDS:
            return cast(T, hit[1])
        value = await compute()
        self._cache[key] = (now, value)
        return value

    @property
    def home(self) -> Home:
        return Home(self.settings.home)


Page = tuple[str, dict[str, Any]]
Handler = Callable[["Context", Request], Awaitable[Page]]

MEMORY_PAGE = 200  # memories listed at once; the filters narrow the rest


def scrub_value(value: Any) -> Any:
    """Jinja's ``finalize``: every printed value is scrubbed before it is escaped."""
    if isinstance(value, Markup):  # our own SVG: scrubbed, and still markup
        return Markup(scrub(str(value)))
    return scrub(value) if isinstance(value, str) else value


_env = Environment(
    loader=PackageLoader("executive.dashboard", "templates"),
    autoescape=select_autoescape(["html"]),
    finalize=scrub_value,
    trim_blocks=True,
    lstrip_blocks=True,
)


class NotFound(Exception):
    pass


async def respond(ctx: Context, handler: Handler, request: Request) -> Response:
    status = 200
    try:
        template, data = await handler(ctx, request)
    except NotFound as exc:
        template, data, status = "missing.html", {"what": str(exc)}, 404
    html = _env.get_template(template).render(
        path=request.url.path,
        version=executive.__version__,
        live=data.pop("live", False),
        refresh_seconds=ctx.settings.dashboard_refresh_seconds,
        **data,
    )
    return HTMLResponse(scrub(html), status_code=status)


async def _store_view(ctx: Context, *, open_it: bool) -> tuple[Any, str]:
    """The read view, or None and why not. Pages that need memory may open the store."""
    s = ctx.settings
    if not s.surface_memory_on:
        return None, "memory is off (V3_MEMORY_ENABLED=false)"
    if not s.user_id:
        return None, "V3_MEM0_USER_ID is not set"
    if not ctx.runtime.opened and not open_it:
        return None, "the store opens on first use (no hook has needed it yet)"
    try:
        return await ctx.runtime.view(), ""
    except Exception as exc:
        return None, f"the store does not open: {exc}"


# --- overview --------------------------------------------------------------------------------
async def overview(ctx: Context, request: Request) -> Page:
    status = await anyio.to_thread.run_sync(ctx.status)
    _, loop = health.loop_state(ctx.settings, ctx.observer)
    view, store_note = await _store_view(ctx, open_it=False)
    by_type: dict[str, int] = {}
    drift: dict[str, int] | None = None
    if view is not None:
        try:
            by_type = await ctx.cached(
                "by_type", lambda: sources.by_type(view, ctx.settings.user_id)
            )
            drift = await ctx.cached(
                "drift",
                lambda: sources.drift(
                    view, ctx.home, ctx.settings.peer_home_list, ctx.settings.user_id
                ),
            )
        except Exception as exc:
            store_note = f"the store does not answer: {exc}"
    return "overview.html", {
        "live": True,
        "status": status,
        "spend_chart": chart([d["cost_usd"] for d in (status.get("spend") or {}).get("days", [])]),
        "loop": loop,
        "uptime": _duration(ctx.observer.uptime_seconds),
        "started_at": ctx.observer.started_at,
        "iterations": list(ctx.observer.iterations)[-10:][::-1],
        "by_type": by_type,
        "drift": drift,
        "store_note": store_note,
    }


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h {minutes}m {secs}s" if days else f"{hours}h {minutes}m {secs}s"


# --- bundles and packs -----------------------------------------------------------------------
async def bundles(ctx: Context, request: Request) -> Page:
    # A copy taken on the event loop: the deque may grow while the page is rendered.
    runs = list(ctx.observer.hook_runs)
    views = await anyio.to_thread.run_sync(sources.bundles, ctx.home, runs)
    ledger = await anyio.to_thread.run_sync(sources.tail_jsonl, ctx.home.work_ledger)
    return "bundles.html", {
        "live": True,
        "bundles": views,
        "kept": {p.contract_id for p in ctx.observer.packs},
        "chart": charts.bars(
            "Attempts per outcome", sources.attempts_per_outcome(ledger), "attempts"
        ),
    }


async def packs(ctx: Context, request: Request) -> Page:
    return "packs.html", {"live": True, "packs": list(ctx.observer.packs)[::-1]}


async def pack(ctx: Context, request: Request) -> Page:
    if (found := ctx.observer.pack(request.path_params["contract_id"])) is None:
        raise NotFound(
            f"no pack kept for {request.path_params['contract_id']} "
            f"(packs are kept in memory since the daemon started, the last {ctx.observer.packs.maxlen})"
        )
    return "pack.html", {"pack": found}


# --- hook runs -------------------------------------------------------------------------------
async def hook_runs(ctx: Context, request: Request) -> Page:
    hook = request.query_params.get("hook", "")
    outcome = request.query_params.get("outcome", "")
    ledger = await anyio.to_thread.run_sync(sources.tail_jsonl, ctx.home.work_ledger)
    earlier = sources.ledger_runs(ledger, before=ctx.observer.started_at)

    def chosen(runs: list[HookRun]) -> list[HookRun]:
        return [
            r
            for r in runs[::-1]
            if (not hook or r.hook == hook) and (not outcome or r.outcome == outcome)
        ][: ctx.observer.hook_runs.maxlen]

    return "hooks.html", {
        "live": True,
        "runs": chosen(list(ctx.observer.hook_runs)),
        "earlier": chosen(earlier),
        "hook": hook,
        "outcome": outcome,
        "hooks": [name.value for name in HookName],
        "skipped": {h: n for (h, o), n in ctx.observer.hook_counts.items() if o == "skipped"},
        "chart": charts.lines("Hook durations", sources.hook_durations(ledger), "s"),
    }


# --- memory ----------------------------------------------------------------------------------
async def memory(ctx: Context, request: Request) -> Page:
    q = request.query_params
    age = q.get("age", "")
    query = sources.Browse(
        type=q.get("type", ""),
        app=q.get("app", ""),
        env=q.get("env", ""),
        max_age_days=float(age) if age.replace(".", "", 1).isdigit() else None,
    )
    search = q.get("q", "").strip()
    view, note = await _store_view(ctx, open_it=True)
    records: list[Any] = []
    apps: list[str] = []
    trace: dict[str, Any] | None = None
    if view is not None:
        try:
            everything = await view.list(Filter(user_id=ctx.settings.user_id))
            apps = sorted({sources.app_of(r) for r in everything} - {""})
            if search:
                reader = Reader(
                    view,
                    user_id=ctx.settings.user_id or "",
                    floor=ctx.settings.confidence_floor,
                )
                request_ = for_question(search, app_id=query.app or "_global")
                if not query.app:  # one search over every app, not just the global scope
                    request_ = replace(request_, scopes=(Scope("every app"),))
                request_ = replace(request_, env=query.env or ctx.settings.env)
                result = await reader.read(request_)
                records, trace = sources.browse(result.memories, query), result.trace()
                records.sort(key=lambda r: -(r.score or 0))
            else:
                records = sources.browse(everything, query)
        except Exception as exc:
            note = f"the store does not answer: {exc}"
    entries = await anyio.to_thread.run_sync(sources.harvest_entries, ctx.home)
    return "memory.html", {
        "records": records[:MEMORY_PAGE],
        "total": len(records),
        "query": query,
        "age": age,
        "search": search,
        "trace": trace,
        "types": sources.TYPES,
        "apps": apps,
        "note": note,
        "app_of": sources.app_of,
        "chart": charts.lines("Memories by type", sources.memory_growth(entries)),
    }


async def memory_item(ctx: Context, request: Request) -> Page:
    view, note = await _store_view(ctx, open_it=True)
    memory_id = request.path_params["memory_id"]
    if view is None:
        raise NotFound(note)
    try:
        record = await view.get(memory_id)
        history = await view.history(memory_id) if record is not None else []
    except StoreError as exc:  # an id the backend cannot even parse
        raise NotFound(f"no memory with id {memory_id} ({exc})") from None
    if record is None:
        raise NotFound(f"no memory with id {memory_id}")
    return "memory_item.html", {"record": record, "history": history, "app": sources.app_of(record)}
