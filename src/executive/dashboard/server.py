"""Serve the dashboard with Hypercorn as one more child of the supervisor's task group.

Hypercorn gets an explicit shutdown trigger, so it installs no signal handlers of its own (the
supervisor owns SIGTERM and SIGINT). It runs shielded and is stopped by that trigger when the
supervisor cancels us, so open connections close cleanly. A dashboard that cannot start (its
port taken) is logged and given up: the loop matters more than the page that watches it.
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
from executive.settings import Settings

log = get_logger(__name__)

# A dashboard connection must not hold the daemon's shutdown (PM2 waits kill_timeout).
GRACEFUL_SECONDS = 3.0


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
    urls = []
    for sock in sockets.insecure_sockets:
        host, port = sock.getsockname()[:2]
        urls.append(f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/")
    return urls


def service(settings: Settings, app: Any) -> Callable[..., Awaitable[None]]:
    """The supervisor's service: serve until cancelled."""

    async def run(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        config = _config(settings)
        try:
            sockets = config.create_sockets()
        except OSError as exc:
            log.error("dashboard.failed", bind=settings.dashboard_bind, error=str(exc))
            task_status.started()  # given up: the daemon goes on without its page
            return
        for sock in sockets.insecure_sockets:
            # Listening now, so a browser sent here by the log line below is queued until
            # Hypercorn accepts, not refused (it listens again, with the same backlog).
            sock.listen(config.backlog)
        log.info(
            "dashboard.listening",
            urls=bound_urls(sockets),
            token_required=settings.dashboard_token is not None,
        )
        stop = anyio.Event()
        task_status.started()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_serve, app, config, sockets, stop)
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

    return run


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
