"""A sandboxed worker's way out: an allow-list, a proxy in the daemon, and nothing else.

The sandbox's network is its own loopback alone (:mod:`executive.workers.isolation.sandbox`):
no service of this host is in reach. For one run (the worker and its verifiers) the daemon
opens, in a folder of its own under ``.state/``:

- ``proxy.sock``: the egress proxy (:mod:`executive.workers.egress.proxy`), which carries a request
  only to a host on ``EXECUTIVE_WORKER_ALLOW_HOSTS``;
- ``api.sock``, when the worker's API endpoint (``ANTHROPIC_BASE_URL``) is on the host's
  loopback (a local LLM gateway, a scripted API in tests): a bridge to exactly that address.

The folder is bound read-only into the sandbox at :data:`SANDBOX_DIR`; the launcher
(:mod:`executive.workers.isolation.launcher`) listens on the sandbox's ``127.0.0.1:3128`` (the proxy)
and on the endpoint's own port (the API), and the worker gets ``HTTP(S)_PROXY`` and
``ALL_PROXY`` (and their lower-case twins) pointing at the proxy. A client that ignores them
has no route out. When the run is over the listeners close and the folder goes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketListener, SocketStream

from executive import hosts
from executive.logs import get_logger
from executive.settings import Settings
from executive.unixpath import address
from executive.workers.egress.proxy import Proxy

log = get_logger(__name__)

SANDBOX_DIR = "/tmp/.executive-egress"  # inside the sandbox: its own /tmp, so always short
PROXY_PORT = 3128
CLOSE_GRACE_SECONDS = 5.0  # the sandbox is gone: its connections end at once
API_VARIABLES = ("ANTHROPIC_BASE_URL",)  # the API endpoint a claude worker is given
LOCAL = "localhost,127.0.0.1,::1"  # the worker's own servers stay off the proxy
Handler = Callable[[SocketStream], Awaitable[None]]


class EgressUnavailable(RuntimeError):
    """The way out cannot be opened here; the message says why."""


@dataclass(frozen=True)
class Plan:
    """What a sandboxed worker may reach: the allow-list, and the endpoint carried in."""

    allow: tuple[hosts.Entry, ...]
    carried: tuple[str, int] | None = None

    def describe(self) -> str:
        hosts_text = ", ".join(map(str, self.allow)) or "no host"
        text = f"through the egress proxy to {hosts_text}"
        if self.carried is not None:
            endpoint = hosts.Entry(*self.carried)
            text += f"; the API endpoint {endpoint} on this host's loopback, carried in"
        return text


def plan_for(settings: Settings, env: Mapping[str, str]) -> Plan:
    """The plan for a worker with ``env``: its API endpoint is allowed, or carried when local."""
    allow = list(settings.worker_allow_list)
    carried = None
    for name in API_VARIABLES:
        if not env.get(name):
            continue
        try:
            url = urlsplit(env[name])
            host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
        except ValueError as exc:
            log.warning("egress.endpoint_unreadable", variable=name, error=str(exc))
            continue
        if not host:
            log.warning("egress.endpoint_unreadable", variable=name, error="no host")
        elif hosts.is_loopback(host):
            carried = (hosts.normal(host), port)
        elif not hosts.allowed(allow, host, port):
            allow.append(hosts.Entry(hosts.normal(host), port))
    return Plan(tuple(allow), carried)


@dataclass(frozen=True)
class Route:
    """What the sandbox needs for one run's way out (see :mod:`executive.workers.isolation.sandbox`)."""

    folder: Path  # on the host; bound read-only at SANDBOX_DIR
    proxy_port: int
    carried: tuple[str, int] | None = None

    def bind_args(self) -> list[str]:
        return ["--ro-bind", str(self.folder), SANDBOX_DIR]

    def forwards(self) -> list[tuple[str, int, str, bool]]:
        """The launcher's ports: (listen host, port, Unix socket inside, required)."""
        spec = [("127.0.0.1", self.proxy_port, f"{SANDBOX_DIR}/proxy.sock", True)]
        if self.carried is not None:
            host, port = self.carried
            api = f"{SANDBOX_DIR}/api.sock"
            if hosts.is_ip(host):
                spec.append((host, port, api, True))
            else:  # localhost: whichever address the client's resolver picks
                spec += [("127.0.0.1", port, api, True), ("::1", port, api, False)]
        return spec

    def env(self, current: Mapping[str, str]) -> dict[str, str]:
        """The proxy variables; a ``NO_PROXY`` the operator passed through stays as it is."""
        url = f"http://127.0.0.1:{self.proxy_port}"
        names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
        added = {n: url for name in names for n in (name, name.lower())}
        if "NO_PROXY" not in current and "no_proxy" not in current:
            added |= {"NO_PROXY": LOCAL, "no_proxy": LOCAL}
        return added


@asynccontextmanager
async def opened(plan: Plan, folder: Path, *, label: str) -> AsyncIterator[Route]:
    """The proxy (and the endpoint's bridge) listening for one run; closed when it ends."""
    proxy = Proxy(plan.allow, label=label, carried=plan.carried)
    port = PROXY_PORT if plan.carried is None or plan.carried[1] != PROXY_PORT else 3129
    served: list[tuple[SocketListener, Handler]] = []
    failure: Exception | None = None
    try:
        try:
            _fresh(folder)
            served.append((await _listener(folder / "proxy.sock"), proxy.handle))
            if plan.carried is not None:
                served.append((await _listener(folder / "api.sock"), proxy.bridge))
        except OSError as exc:
            raise EgressUnavailable(f"cannot open the egress proxy in {folder}: {exc}") from exc
        async with anyio.create_task_group() as tg:
            for listener, handler in served:
                tg.start_soon(listener.serve, handler)
            try:
                yield Route(folder, port, plan.carried)
            except Exception as exc:
                failure = exc  # raised below, as itself: a task group would wrap it in a group
            finally:
                with anyio.CancelScope(shield=True):
                    await proxy.close(CLOSE_GRACE_SECONDS)  # ended first: see proxy.end
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            for listener, _ in served:
                await listener.aclose()
        shutil.rmtree(folder, ignore_errors=True)
        log.info("egress.closed", contract_id=label, **proxy.summary())
    if failure is not None:
        raise failure


def _fresh(folder: Path) -> None:
    """``folder`` new and private (a leftover of a killed daemon is removed first)."""
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(mode=0o700)


async def _listener(path: Path) -> SocketListener:
    old_umask = os.umask(0o177)  # born owner-only: the sandbox's uid is the daemon's
    try:
        with address(path) as where:
            return await anyio.create_unix_listener(where)
    finally:
        os.umask(old_umask)
