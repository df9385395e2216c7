"""The ASGI application: pages, ``/metrics`` and ``/healthz``, read-only, behind one token.

Every route answers GET (and HEAD) only, so no request can change anything. With a token set,
every request must carry it: ``Authorization: Bearer <token>`` (probes, Prometheus), or
``?token=<token>`` once in a browser, which then keeps it in a same-site, HTTP-only cookie so
the page's links work. Before the token, a caller from this host must be the daemon's own
account, root or one listed in ``EXECUTIVE_DASHBOARD_ALLOW_UIDS`` (:mod:`.callers`).
"""

from __future__ import annotations

import hmac
import json
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from executive.dashboard import health, pages, sources
from executive.dashboard.callers import CallerGate
from executive.dashboard.metrics import CONTENT_TYPE, StoreFigures, exposition
from executive.dashboard.pages import Context
from executive.logs import get_logger
from executive.redact import learn, scrub
from executive.settings import Settings
from executive.workers import isolation
from executive.workspace import spending

log = get_logger(__name__)

COOKIE = "executive_dashboard_token"


class _TokenGate(BaseHTTPMiddleware):
    def __init__(self, app: Any, token: str) -> None:
        super().__init__(app)
        self._token = token.encode()

    def _matches(self, offered: str | None) -> bool:
        return offered is not None and hmac.compare_digest(offered.encode(), self._token)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        header = request.headers.get("authorization", "")
        bearer = header[7:] if header.lower().startswith("bearer ") else None
        query = request.query_params.get("token")
        if not any(self._matches(t) for t in (bearer, query, request.cookies.get(COOKIE))):
            return PlainTextResponse(
                "401: this dashboard needs its token (EXECUTIVE_DASHBOARD_TOKEN)",
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        response = await call_next(request)
        if self._matches(query):
            response.set_cookie(COOKIE, query or "", httponly=True, samesite="strict")
        return response


async def _figures(ctx: Context) -> StoreFigures:
    counts = ctx.home.queue_counts()
    figures = StoreFigures(queue={**counts, "in_progress": sum(counts["in_progress"].values())})
    try:
        # A fold of the whole harvest ledger: in a worker thread, not on the daemon's loop.
        figures.pending_writes = await anyio.to_thread.run_sync(ctx.runtime.pending_writes)
    except (OSError, ValueError) as exc:
        # The gauge goes missing from the scrape; the line says why.
        log.warning("metrics.pending_writes_unreadable", error=str(exc))
    try:
        figures.spend = await anyio.to_thread.run_sync(spending.budget_of(ctx.settings).summary)
    except (OSError, ValueError) as exc:
        log.warning("metrics.spend_unreadable", error=str(exc))
    if ctx.runtime.opened:
        # Only a store the daemon already opened: a scrape must not load the embedding model.
        try:
            view = await ctx.runtime.view()
            figures.by_type = await ctx.cached(
                "by_type", lambda: sources.by_type(view, ctx.settings.user_id)
            )
        except Exception as exc:
            # A scrape still answers (queue, hooks, loop) when the store does not.
            log.warning("metrics.store_unreadable", error=f"{type(exc).__name__}: {exc}")
    found = await ctx.cached("store_health", lambda: health.store_health(ctx.settings, ctx.runtime))
    if found is not None:
        figures.store_up = found.state not in ("down", "error")
        figures.store_missing = found.missing
    return figures


async def _metrics(ctx: Context, request: Request) -> Response:
    text = exposition(ctx.observer, await _figures(ctx)).decode()
    return Response(scrub(text), media_type=CONTENT_TYPE)


async def _healthz(ctx: Context, request: Request) -> Response:
    result = await health.check(ctx.settings, ctx.observer, ctx.runtime)
    body = scrub(json.dumps(result.as_dict()))
    return Response(
        body + "\n", status_code=200 if result.ok else 503, media_type="application/json"
    )


async def _no_icon(request: Request) -> Response:
    # Browsers ask for one on every non-HTML answer (/metrics, /healthz): none, and no 404.
    return Response(status_code=204)


def build_app(ctx: Context) -> Starlette:
    learn(secrets=ctx.settings.secret_values())
    static = Path(str(files("executive.dashboard") / "static"))
    routes = [
        Route("/", partial(pages.respond, ctx, pages.overview)),
        Route("/bundles", partial(pages.respond, ctx, pages.bundles)),
        Route("/hooks", partial(pages.respond, ctx, pages.hook_runs)),
        Route("/packs", partial(pages.respond, ctx, pages.packs)),
        Route("/packs/{contract_id}", partial(pages.respond, ctx, pages.pack)),
        Route("/memory", partial(pages.respond, ctx, pages.memory)),
        Route("/memory/{memory_id}", partial(pages.respond, ctx, pages.memory_item)),
        Route("/metrics", partial(_metrics, ctx)),
        Route("/healthz", partial(_healthz, ctx)),
        Route("/favicon.ico", _no_icon),
        Mount("/static", StaticFiles(directory=static), name="static"),
    ]
    token = ctx.settings.dashboard_token
    middleware = [Middleware(_TokenGate, token=token.get_secret_value())] if token else []
    # Outermost: another account of this host is refused before a token is even looked at.
    allowed, worker = ctx.settings.dashboard_allowed_uids, _worker_account(ctx.settings)
    middleware.insert(0, Middleware(CallerGate, allowed=allowed, worker=worker))
    return Starlette(routes=routes, middleware=middleware)


def _worker_account(settings: Settings) -> tuple[int, str] | None:
    """The worker account's uid and name when workers run as one (``user`` mode)."""
    try:
        iso = isolation.from_settings(settings)
    except isolation.IsolationUnavailable:
        return None  # no worker runs at all
    if iso.mode != "user" or iso.ids is None or iso.account is None:
        return None
    return iso.ids[0], iso.account
