"""Serve the dashboard with Hypercorn as one more child of the supervisor's task group.

Hypercorn gets an explicit shutdown trigger, so it installs no signal handlers of its own (the
supervisor owns SIGTERM and SIGINT). It runs shielded and is stopped by that trigger when the
supervisor cancels us, so open connections close cleanly. A dashboard that cannot start (its
port taken) is a failed component: logged, shown by ``status`` and ``doctor``, and tried again with a backoff until it binds; the loop never waits for it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskStatus
from hypercorn.asyncio.run import worker_serve
from hypercorn.config import Config, Sockets
from hypercorn.utils import wrap_app

from executive.logs import get_logger
from executive.observe import Observer
from executive.settings import Settings

log = get_logger(__name__)

# A dashboard connection must not hold the daemon's shutdown (PM2 waits kill_timeout).
GRACEFUL_SECONDS = 3.0
# Tries to bind again after 1, 2, 4 ... seconds, then every minute.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


def _config(settings: Settings) -> Config:
    config = Config()
    host, port = settings.dashboard_host_port
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.graceful_timeout = GRACEFUL_SECONDS
    config.accesslog = None  # requests are not events of the loop; keep stdout for those
    # Hypercorn's own lines go through our pipeline (JSON, redacted), not raw to stderr.
    config.errorlog = logging.getLogger("hypercorn.error")
    config.include_server_header = False
    return config


def bound_urls(sockets: Sockets) -> list[str]:
    names = [sock.getsockname()[:2] for sock in sockets.insecure_sockets]
    return [f"http://[{h}]:{p}/" if ":" in h else f"http://{h}:{p}/" for h, p in names]


def service(settings: Settings, app: Any, observer: Observer) -> Callable[..., Awaitable[None]]:
    async def run(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        config = _config(settings)
        started = False

        def release() -> None:
            # Once: after the first failure to bind, or once listening. The daemon starts
            # either way; a dashboard that cannot bind keeps trying in here.
            nonlocal started
            if not started:
                started = True
                task_status.started()

        sockets = await _bind(settings, config, observer, release)
        for sock in sockets.insecure_sockets:
            # Listening now, so a browser sent here by the log line below is queued until
            # Hypercorn accepts, not refused (it listens again, with the same backlog).
            sock.listen(config.backlog)
        log.info(
            "dashboard.listening",
            urls=bound_urls(sockets),
            token_required=settings.dashboard_token is not None,
        )
        observer.component("dashboard", True, f"listening on {', '.join(bound_urls(sockets))}")
        stop = anyio.Event()
        release()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_serve, app, config, sockets, stop)
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

    return run


async def _bind(
    settings: Settings, config: Config, observer: Observer, failed: Callable[[], None]
) -> Sockets:
    """The listening sockets, once the address is free. Every failure is reported (and
    ``failed`` called), and the next try waits longer."""
    delay, attempt = RETRY_FIRST_SECONDS, 0
    while True:
        attempt += 1
        try:
            return config.create_sockets()
        except OSError as exc:
            why = f"cannot bind {settings.dashboard_bind}: {exc.strerror or exc}"
            observer.component(
                "dashboard", False, f"{why}; trying again in {delay:g}s (attempt {attempt})"
            )
            log.error(
                "dashboard.failed",
                bind=settings.dashboard_bind,
                error=str(exc),
                attempt=attempt,
                retry_in_seconds=delay,
                fix="free the port (`ss -ltnp` shows who holds it) or set "
                "EXECUTIVE_DASHBOARD_BIND to a free HOST:PORT, then restart",
            )
        failed()
        await anyio.sleep(delay)
        delay = min(delay * 2, RETRY_MAX_SECONDS)


async def _serve(app: Any, config: Config, sockets: Sockets, stop: anyio.Event) -> None:
    # Shielded: the outer cancellation only sets ``stop``; Hypercorn then drains and returns.
    with anyio.CancelScope(shield=True):
        try:
            await worker_serve(
                wrap_app(app, config.wsgi_max_body_size, "asgi"),
                config,
                sockets=sockets,
                shutdown_trigger=stop.wait,
            )
        except Exception as exc:
            log.exception("dashboard.crashed", error=repr(exc))
