"""Who is calling the dashboard from this host: the account that owns the caller's socket.

A worker in ``user`` mode runs as an account on this host's network (without bubblewrap
there is no network namespace), and so does another executive's worker on the same host:
a dashboard on 127.0.0.1 is one connect away from either. The kernel lists every TCP socket
of this network namespace with its owner's uid (``/proc/net/tcp``, ``tcp6``); the caller's
end of a connection is the entry whose local address is the caller's and whose remote
address is the dashboard's (a ``TIME_WAIT`` entry has no owner and is passed over).

:class:`CallerGate` serves a caller from this host only when that uid is the daemon's own,
root's (which can read the home, its token with it, anyway) or one the operator listed
(``EXECUTIVE_DASHBOARD_ALLOW_UIDS``); this executive's worker account is refused even if
listed. So each executive's dashboard refuses every other executive's worker, whatever
account it runs as. A caller from another machine has no entry here (its socket is not
ours): the token guards that case, as anything off loopback needs one. A loopback caller
without an entry is refused: it must be on this host, so not finding it means not knowing
who it is.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.responses import PlainTextResponse

from executive.logs import get_logger

log = get_logger(__name__)

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
TIME_WAIT = "06"  # the kernel's state number (include/net/tcp_states.h), as the table shows it
Address = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(text.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _is_ip(text: str) -> bool:
    try:
        _ip(text)
    except ValueError:
        return False
    return True


def decode(field: str) -> Address:
    """A ``/proc/net/tcp*`` address: the kernel prints each 32-bit word of it in host order."""
    hex_ip, hex_port = field.split(":")
    words = [int(hex_ip[i : i + 8], 16) for i in range(0, len(hex_ip), 8)]
    raw = struct.pack(f"={len(words)}I", *words)
    return _ip(str(ipaddress.ip_address(raw))), int(hex_port, 16)


def owner(client: tuple[str, int], server: tuple[str, int] | None = None) -> int | None:
    """The uid owning the TCP socket at ``client`` here (connected to ``server``), or None."""
    wanted = (_ip(client[0]), client[1])
    peer = (_ip(server[0]), server[1]) if server is not None else None
    port = f":{client[1]:04X}"
    for table in TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue  # no IPv6 here, say
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or not fields[1].endswith(port) or fields[3] == TIME_WAIT:
                continue
            if decode(fields[1]) == wanted and (peer is None or decode(fields[2]) == peer):
                return int(fields[7])
    return None


class CallerGate:
    """ASGI middleware: a caller from this host is served only as the daemon's own account,
    root or a listed one; anyone else's requests get 403, whatever they carry."""

    def __init__(
        self,
        app: Any,
        allowed: frozenset[int] = frozenset(),
        worker: tuple[int, str] | None = None,
    ) -> None:
        self.app = app
        self.own = os.geteuid()
        self.allowed = allowed | {self.own, 0}
        self.worker = worker

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client:
            server = scope.get("server")
            # The table is read in a thread: a host with many sockets must not stall the loop.
            why = await anyio.to_thread.run_sync(
                self.refusal, (str(client[0]), int(client[1])), server and tuple(server)
            )
            if why is not None:
                log.warning(
                    "dashboard.caller_refused", client=f"{client[0]}:{client[1]}", reason=why
                )
                await PlainTextResponse(f"403: {why}\n", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, client: tuple[str, int], server: tuple[str, int] | None = None) -> str | None:
        if not _is_ip(client[0]):
            return None  # not an IP peer (a Unix socket): not the worker's network
        if server is not None and not _is_ip(server[0]):
            server = None  # a name, not the address it listens on: match the caller alone
        if (uid := owner(client, server)) is None:
            if _ip(client[0]).is_loopback:
                return "the caller's socket is not in this host's table: who it is is unknown"
            return None  # another machine's: the token's to judge
        if self.worker is not None and uid == self.worker[0]:
            return f"the worker account ({self.worker[1]}) may not read the dashboard"
        if uid not in self.allowed:
            return (
                f"uid {uid} is not the daemon's ({self.own}); "
                "EXECUTIVE_DASHBOARD_ALLOW_UIDS lists the other accounts it serves"
            )
        return None
