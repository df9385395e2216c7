"""The egress proxy: the one way out of a sandbox, to the hosts the operator allows.

A sandboxed worker has no network of its own; what it sends to its proxy port arrives here
through a Unix socket (see :mod:`executive.workers.egress.route`). One HTTP request head is read,
bounded in size and time, and checked (:mod:`executive.workers.egress.request`), then:

- ``CONNECT host:port`` (https and anything tunnelled): the tunnel opens when the host and
  port are on the allow-list; bytes then pass untouched (no TLS is intercepted, so the
  name inside a TLS hello is not read);
- ``GET http://host/path`` (plain HTTP, absolute URI): the same check, then that one request
  goes on, in origin-form with ``Connection: close``, and nothing after it;
- anything else, or a host not on the list, gets a 4xx answer saying why.

A name is resolved here, once, and leads only to public addresses, never this machine's
(:mod:`executive.workers.egress.addresses`); an address an entry names itself is reached: the
operator's choice. The API endpoint the daemon carries into the sandbox is one exact address,
reached through :meth:`Proxy.bridge` without a head.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from executive import hosts
from executive.logs import get_logger
from executive.workers.egress import addresses
from executive.workers.egress.request import Refused, Target, authority, parse_head

log = get_logger(__name__)

MAX_HEAD = 16 * 1024
MAX_DRAIN = 64 * 1024  # read after a refusal, so the answer is not lost to a reset
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 30.0
MAX_CONNECTIONS = 64  # at once, per run: a worker cannot spend the daemon's descriptors
LOGGED_REFUSALS = 20  # per run, and as many failures; the rest are counted in egress.closed


@dataclass
class Proxy:
    """One run's proxy: its allow-list, the carried endpoint, and what it let through."""

    allow: Sequence[hosts.Entry]
    label: str = ""
    carried: tuple[str, int] | None = None
    resolve: addresses.Resolve = addresses.system_resolve  # a table in tests: no DNS here
    carried_count: int = 0
    refused: list[str] = field(default_factory=list)
    failed: int = 0  # connections ended by something unexpected (logged up to the cap)
    streams: set[SocketStream] = field(default_factory=set)  # open now, ended by close()
    running: int = 0  # connections being handled
    _idle: anyio.Event | None = None

    def permits(self, host: str, port: int) -> bool:
        exact = self.carried is not None and (hosts.normal(host), port) == self.carried
        return exact or hosts.allowed(self.allow, host, port)

    async def close(self, grace: float) -> None:
        """End every connection (not cancelled: see :func:`end`) and wait (up to ``grace``)
        until each handler has returned."""
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
            # Unexpected, so logged with its traceback, but no more often than refusals: a
            # worker that found a way to cause one must not fill the daemon's log with it.
            self.failed += 1
            if self.failed <= LOGGED_REFUSALS:
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
        if target.head is None:
            established = b"HTTP/1.1 200 Connection established\r\n\r\n"
            await self._carry(client, upstream, reply=established, forward=bytes(buffered.buffer))
        else:
            await self._carry_one(client, buffered, upstream, target)

    async def _carry_one(
        self,
        client: SocketStream,
        buffered: BufferedByteReceiveStream,
        upstream: SocketStream,
        target: Target,
    ) -> None:
        """One plain request on (its head, then its body's bytes and no more), and its answer
        back until the host ends it. A second request on the connection goes nowhere: its
        head was never checked."""
        assert target.head is not None
        self.streams.add(upstream)
        try:
            async with upstream:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await upstream.send(target.head)
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_send_body, buffered, upstream, target.body)
                        await _copy(upstream, client)
                        await end(client)  # wakes the body's reader, which waits on the client
        finally:
            self.streams.discard(upstream)

    async def _open(self, target: Target) -> SocketStream:
        where = authority(target.host, target.port)
        if not self.permits(target.host, target.port):
            raise Refused(403, f"{where} is not on the allow-list", where)
        try:
            with anyio.fail_after(CONNECT_SECONDS):
                found = await self._addresses(target)
                return await _connect(found, target.port, target.host)
        except TimeoutError:
            raise Refused(502, f"{where} did not answer in time", where) from None
        except Refused as exc:
            raise Refused(exc.status, exc.reason, where) from None

    async def _addresses(self, target: Target) -> list[str]:
        """Where an allowed target leads, resolved once: the addresses connected to."""
        host, port = target.host, target.port
        if hosts.is_ip(host):
            return [host]  # an entry (or the carried endpoint) names this address itself
        try:
            found = await self.resolve(host, port)
        except OSError as exc:
            raise Refused(502, f"cannot resolve {host}: {exc}") from None
        if (host, port) == self.carried:
            return found  # the API endpoint the daemon carries in (``localhost``)
        try:
            own = addresses.own()
        except OSError as exc:
            raise Refused(502, f"cannot list this machine's addresses: {exc}") from None
        for address in found:
            reason = addresses.refusal(address, own)
            if reason is not None and not hosts.named(self.allow, address, port):
                raise Refused(403, f"{host} resolves to {address}, {reason}")
        return found

    def _note(self, refusal: Refused) -> None:
        self.refused.append(refusal.where or "(no target)")
        if len(self.refused) <= LOGGED_REFUSALS:
            log.warning(
                "egress.refused",
                contract_id=self.label,
                host=refusal.where,
                status=refusal.status,
                reason=refusal.reason,
            )

    def summary(self) -> dict[str, object]:
        return {
            "refused": len(self.refused),
            "refused_hosts": sorted(set(self.refused))[:LOGGED_REFUSALS],
            "carried": self.carried_count,
            "failed": self.failed,
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


async def _send_body(
    buffered: BufferedByteReceiveStream, upstream: SocketStream, size: int
) -> None:
    """``size`` bytes of body upstream, then whatever else the client sends, read and dropped
    (left unread, it would turn the client's end of the answer into a reset)."""
    try:
        while size > 0:
            chunk = await buffered.receive(min(size, 65536))
            await upstream.send(chunk)
            size -= len(chunk)
        while True:
            await buffered.receive()
    except anyio.EndOfStream:
        if size > 0:
            await end(upstream)  # the body will never be whole: the host need not wait for it
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return  # the connection is being ended; the answer's side says how


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
