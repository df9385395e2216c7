"""The egress proxy: the one way out of a sandbox, to the hosts the operator allows.

A sandboxed worker has no network of its own; what it sends to its proxy port arrives here
through a Unix socket (see :mod:`executive.workers.egress`). One HTTP request head is read,
bounded in size and time, and then:

- ``CONNECT host:port`` (https and anything tunnelled): the tunnel opens when the host and
  port are on the allow-list; bytes then pass untouched (no TLS is intercepted);
- ``GET http://host/path`` (plain HTTP, absolute URI): the same check, then the request goes
  on with an origin-form target and ``Connection: close``;
- anything else, or a host not on the list, gets a 4xx answer saying why.

A name is resolved here, once, and the connection goes to the address found, so an allowed
name that resolves to this machine (loopback, link-local, unspecified) is refused: only an
entry that names a loopback address itself reaches one. The API endpoint the daemon carries
into the sandbox is one exact address, reached through :meth:`Proxy.bridge` without a head.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from executive import hosts
from executive.logs import get_logger
from executive.untrusted import one_line

log = get_logger(__name__)

MAX_HEAD = 16 * 1024
MAX_DRAIN = 64 * 1024  # read after a refusal, so the answer is not lost to a reset
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 30.0
MAX_CONNECTIONS = 64  # at once, per run: a worker cannot spend the daemon's descriptors
LOGGED_REFUSALS = 20  # per run; the rest are counted in ``egress.closed``
_HOP_BY_HOP = {b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive"}


class Refused(Exception):
    """A request the proxy will not carry; ``status`` and the reason go back to the worker."""

    def __init__(self, status: int, reason: str, where: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.where = where  # host:port when the request got that far


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    head: bytes | None = None  # plain HTTP: the request head to send on; CONNECT: None


def parse_head(head: bytes) -> Target:
    """The destination of one request head (without its blank line); Refused(400) if none."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        raise Refused(400, "not an HTTP/1.x request line")
    method, target, version = (p.decode("latin-1") for p in parts)
    if method == "CONNECT":
        try:
            host, port = hosts.split_port(target)
        except ValueError:
            port = None
        if port is None or not host:
            raise Refused(400, f"CONNECT needs host:port, not {target!r}")
        return Target(hosts.normal(host), port)
    if not target.lower().startswith("http://"):
        raise Refused(400, "only CONNECT (for https) and absolute http:// URLs are carried")
    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError:
        raise Refused(400, f"not a URL: {target!r}") from None
    if not url.hostname:
        raise Refused(400, f"no host in {target!r}")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [line for line in lines[1:] if line.split(b":")[0].strip().lower() not in _HOP_BY_HOP]
    if not any(line.split(b":")[0].strip().lower() == b"host" for line in kept):
        kept.insert(0, b"Host: " + url.netloc.rpartition("@")[2].encode())
    start = f"{method} {path} {version}".encode("latin-1")
    return Target(url.hostname, port, b"\r\n".join([start, *kept, b"Connection: close", b"", b""]))


def _local(address: str) -> bool:
    """An address of this machine or its link: never reached through a name."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast


async def addresses(host: str, port: int) -> list[str]:
    """Where ``host`` leads: itself for an address, else what it resolves to (checked)."""
    if hosts.is_ip(host):
        return [hosts.normal(host)]
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(502, f"cannot resolve {host}: {exc}") from None
    resolved = list(dict.fromkeys(str(info[4][0]) for info in found))
    local = [a for a in resolved if _local(a)]
    if local and not hosts.is_loopback(host):
        raise Refused(403, f"{host} resolves to {local[0]}, an address of this machine")
    return resolved


@dataclass
class Proxy:
    """One run's proxy: its allow-list, the carried endpoint, and what it let through."""

    allow: Sequence[hosts.Entry]
    label: str = ""
    carried: tuple[str, int] | None = None
    carried_count: int = 0
    refused: list[str] = field(default_factory=list)
    streams: set[SocketStream] = field(default_factory=set)  # open now, ended by close()
    running: int = 0  # connections being handled
    _idle: anyio.Event | None = None

    def permits(self, host: str, port: int) -> bool:
        exact = self.carried is not None and (hosts.normal(host), port) == self.carried
        return exact or hosts.allowed(self.allow, host, port)

    async def close(self, grace: float) -> None:
        """End every connection and wait (up to ``grace``) until each handler has returned.

        Ended, not cancelled: see :func:`end` for why.
        """
        for stream in list(self.streams):
            await end(stream)
        if self.running:
            self._idle = anyio.Event()
            with anyio.move_on_after(grace):
                await self._idle.wait()

    @contextlib.asynccontextmanager
    async def _connection(self, client: SocketStream) -> AsyncIterator[None]:
        """One connection, open until it ends or ``close``; nothing it raises may end the
        listener (a refusal is noted, anything else logged)."""
        self.streams.add(client)
        self.running += 1
        try:
            async with client:
                yield
        except Refused as exc:
            self._note(exc)
        except Exception as exc:
            log.exception("egress.connection_failed", contract_id=self.label, error=repr(exc))
        finally:
            self.streams.discard(client)
            self.running -= 1
            if self.running == 0 and self._idle is not None:
                self._idle.set()

    async def handle(self, client: SocketStream) -> None:
        """One connection from the sandbox's proxy port."""
        async with self._connection(client):
            if self.running > MAX_CONNECTIONS:
                await _answer(client, Refused(503, "too many connections at once"))
                return
            await self._serve(client)

    async def bridge(self, client: SocketStream) -> None:
        """One connection to the carried API endpoint: to that address, and nowhere else."""
        assert self.carried is not None
        async with self._connection(client):
            if self.running > MAX_CONNECTIONS:
                return  # a raw byte stream: closing it is the only answer
            upstream = await self._open(Target(*self.carried))
            self.carried_count += 1
            await self._carry(client, upstream)

    async def _carry(
        self,
        client: SocketStream,
        upstream: SocketStream,
        *,
        reply: bytes = b"",
        forward: bytes = b"",
    ) -> None:
        """``reply`` to the client, ``forward`` upstream, then bytes both ways until the end."""
        self.streams.add(upstream)
        try:
            async with upstream:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    if reply:
                        await client.send(reply)
                    if forward:
                        await upstream.send(forward)
                    await pipe(client, upstream)
        finally:
            self.streams.discard(upstream)

    async def _serve(self, client: SocketStream) -> None:
        buffered = BufferedByteReceiveStream(client)
        try:
            head = await _read_head(buffered)
            if head is None:
                return  # the client left before it asked anything
            target = parse_head(head)
            upstream = await self._open(target)
        except Refused as exc:
            self._note(exc)
            await _answer(client, exc)
            return
        established = b"HTTP/1.1 200 Connection established\r\n\r\n"
        await self._carry(
            client,
            upstream,
            reply=established if target.head is None else b"",
            forward=(target.head or b"") + bytes(buffered.buffer),
        )

    async def _open(self, target: Target) -> SocketStream:
        where = one_line(f"{target.host}:{target.port}")[:300]
        if not self.permits(target.host, target.port):
            raise Refused(403, f"{where} is not on the allow-list", where)
        try:
            with anyio.fail_after(CONNECT_SECONDS):
                found = await addresses(target.host, target.port)
                return await _connect(found, target.port, target.host)
        except TimeoutError:
            raise Refused(502, f"{where} did not answer in time", where) from None
        except Refused as exc:
            raise Refused(exc.status, exc.reason, where) from None

    def _note(self, refusal: Refused) -> None:
        self.refused.append(refusal.where or "(no target)")
        if len(self.refused) <= LOGGED_REFUSALS:
            log.warning(
                "egress.refused", contract_id=self.label, host=refusal.where, reason=refusal.reason
            )

    def summary(self) -> dict[str, object]:
        return {
            "refused": len(self.refused),
            "refused_hosts": sorted(set(self.refused))[:LOGGED_REFUSALS],
            "carried": self.carried_count,
        }


async def _read_head(buffered: BufferedByteReceiveStream) -> bytes | None:
    """One request head (without its blank line), or None when the client left first."""
    try:
        with anyio.fail_after(HEAD_SECONDS):
            return await buffered.receive_until(b"\r\n\r\n", MAX_HEAD)
    except anyio.DelimiterNotFound:
        raise Refused(400, f"request head longer than {MAX_HEAD} bytes") from None
    except TimeoutError:
        raise Refused(408, f"no request head within {HEAD_SECONDS:g} s") from None
    except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
        return None
    except anyio.ClosedResourceError:
        return None  # the run ended while it was asking


async def _connect(found: Iterable[str], port: int, name: str) -> SocketStream:
    errors = []
    for address in found:
        try:
            return await anyio.connect_tcp(address, port)
        except OSError as exc:
            errors.append(f"{address}: {exc.strerror or exc}")
    raise Refused(502, f"cannot connect to {name}:{port} ({'; '.join(errors) or 'no address'})")


async def _answer(client: SocketStream, refusal: Refused) -> None:
    body = f"executive egress proxy: {refusal.reason}\n".encode()
    status = f"HTTP/1.1 {refusal.status} {HTTPStatus(refusal.status).phrase}\r\n"
    headers = f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
    # A client already gone misses only this answer: the refusal is in the log and summary.
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await client.send((status + headers + "\r\n").encode() + body)
        await client.send_eof()
        # Read what it still sends (bounded): closing on unread bytes would reset the
        # connection, and the client would lose the answer that says why.
        with anyio.move_on_after(HEAD_SECONDS):
            drained = 0
            async for chunk in client:
                drained += len(chunk)
                if drained > MAX_DRAIN:
                    break


async def pipe(a: SocketStream, b: SocketStream) -> None:
    """Copy both ways until each side has ended (half-closes pass through), or one breaks."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(_copy, a, b)
        tg.start_soon(_copy, b, a)


async def _copy(src: SocketStream, dst: SocketStream) -> None:
    try:
        async for chunk in src:
            await dst.send(chunk)
        await dst.send_eof()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        # One side is gone (a reset): ending both ends the other direction as well.
        await end(src)
        await end(dst)


async def end(stream: SocketStream) -> None:
    """Stop ``stream`` both ways, waking a receive that waits on it.

    A Unix stream is shut down, never closed or cancelled under a waiting receive: anyio's
    (4.x, asyncio) then completes the receive's future twice when the socket turns readable
    in the same loop turn ("invalid state"). The shutdown wakes it through the selector, as
    an end of stream. A TCP stream's receive waits on an event, so it is simply closed.
    """
    raw = stream.extra(SocketAttribute.raw_socket, None)
    if raw is not None and raw.family == socket.AF_UNIX:
        with contextlib.suppress(OSError):
            raw.shutdown(socket.SHUT_RDWR)
    else:
        await stream.aclose()
