"""Who is calling the dashboard from this host: the account that owns the caller's socket.

In ``user`` mode a worker runs as its own account on this host's network (without bubblewrap
there is no network namespace), so a dashboard on 127.0.0.1 is one connect away from it. The
kernel lists every TCP socket of this network namespace with its owner's uid
(``/proc/net/tcp``, ``tcp6``); the caller's end of a connection is the entry whose local
address is the caller's. :class:`AccountGate` refuses the worker account. A caller from
another machine has no entry here (its socket is not ours): the token guards that case, as
anything off loopback needs one. A loopback caller without an entry is refused: it must be
on this host, so not finding it means not knowing who it is.
"""

from __future__ import annotations

import ipaddress
import struct
from pathlib import Path
from typing import Any

from starlette.responses import PlainTextResponse

from executive.logs import get_logger

log = get_logger(__name__)

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
Address = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(text.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def decode(field: str) -> Address:
    """A ``/proc/net/tcp*`` address: the kernel prints each 32-bit word of it in host order."""
    hex_ip, hex_port = field.split(":")
    words = [int(hex_ip[i : i + 8], 16) for i in range(0, len(hex_ip), 8)]
    raw = struct.pack(f"={len(words)}I", *words)
    return _ip(str(ipaddress.ip_address(raw))), int(hex_port, 16)


def owner(client_host: str, client_port: int, tables: tuple[Path, ...] = TABLES) -> int | None:
    """The uid owning the TCP socket at ``client_host:client_port`` here, or None."""
    wanted = (_ip(client_host), client_port)
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue  # no IPv6 here, say
        for line in lines:
            fields = line.split()
            if len(fields) > 7 and decode(fields[1]) == wanted:
                return int(fields[7])
    return None


class AccountGate:
    """ASGI middleware: the worker account's requests get 403, whatever they carry."""

    def __init__(self, app: Any, uid: int, account: str) -> None:
        self.app = app
        self.uid = uid
        self.account = account

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client:
            why = self.refusal(str(client[0]), int(client[1]))
            if why is not None:
                log.warning(
                    "dashboard.caller_refused", client=f"{client[0]}:{client[1]}", reason=why
                )
                await PlainTextResponse(f"403: {why}\n", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, host: str, port: int) -> str | None:
        try:
            ip = _ip(host)
        except ValueError:
            return None  # not an IP peer (a Unix socket): not the worker's network
        uid = owner(host, port)
        if uid == self.uid:
            return f"the worker account ({self.account}) may not read the dashboard"
        if uid is None and ip.is_loopback:
            return "the caller's socket is not in this host's table: who it is is unknown"
        return None
