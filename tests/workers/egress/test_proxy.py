"""The egress proxy over real sockets: what it carries, what it refuses, and why it says so.

No DNS runs here: a name's answer is the resolver table a test gives the proxy (its seam);
the sockets, the listeners and this machine's own interface addresses are real.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketAttribute, SocketStream
from structlog.testing import capture_logs

from executive import hosts
from executive.workers.egress import proxy as proxy_module
from executive.workers.egress.addresses import Resolve
from executive.workers.egress.proxy import LOGGED_REFUSALS, Proxy
from tests.isolation import interface_address

pytestmark = pytest.mark.anyio
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong"


@asynccontextmanager
async def upstream(host: str = "127.0.0.1") -> AsyncIterator[tuple[int, list[bytes]]]:
    """A TCP server that answers one request per connection, then records every byte the
    connection brought until the proxy closed it (so a second request would show)."""
    received: list[bytes] = []

    async def answer(stream: SocketStream) -> None:
        async with stream:
            data = b""
            with anyio.CancelScope() as scope:
                async for chunk in stream:
                    data += chunk
                    if _whole(data):
                        scope.cancel()
            if not _whole(data):  # the client left (or was ended) before it asked
                received.append(data)
                return
            await stream.send(ANSWER)
            await stream.send_eof()
            async for chunk in stream:
                data += chunk
            received.append(data)

    listener = await anyio.create_tcp_listener(local_host=host, local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield listener.extra(SocketAttribute.local_port), received
        tg.cancel_scope.cancel()


def _whole(data: bytes) -> bool:
    """A request head and its Content-Length body, or a tunnel's PING."""
    if data.endswith(b"PING"):
        return True
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        return False
    lengths = [
        ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-l")
    ]
    return len(body) >= (int(lengths[0]) if lengths else 0)


@asynccontextmanager
async def served(proxy: Proxy, handler: str = "handle") -> AsyncIterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="px-", dir="/tmp"))
    path = folder / "p.sock"
    try:
        listener = await anyio.create_unix_listener(str(path))
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, getattr(proxy, handler))
            yield path
            await proxy.close(5)  # as the egress route ends a run: ended, then cancelled
            tg.cancel_scope.cancel()
    finally:
        shutil.rmtree(folder)


async def exchange(path: Path, *messages: bytes) -> bytes:
    async with await anyio.connect_unix(str(path)) as stream:
        for message in messages:
            await stream.send(message)
        await stream.send_eof()
        data = b""
        async for chunk in stream:
            data += chunk
        return data


def table(answers: Mapping[str, list[str]], asked: list[str] | None = None) -> Resolve:
    """A resolver that answers from ``answers`` (and notes each name asked in ``asked``)."""

    async def resolve(host: str, port: int) -> list[str]:
        if asked is not None:
            asked.append(host)
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return resolve


async def test_a_tunnel_opens_to_an_allowed_host_and_carries_bytes_both_ways():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"127.0.0.1:{port}"))
        async with served(proxy) as path:
            answer = await exchange(
                path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode() + b"early ", b"PING"
            )
    assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\n")
    assert answer.endswith(b"pong")
    assert received == [b"early PING"]  # what came with the head is not lost
    assert proxy.summary() == {"refused": 0, "refused_hosts": [], "carried": 0, "failed": 0}


async def test_a_plain_request_goes_on_alone_with_its_body_and_its_checked_host():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"127.0.0.1:{port}"))
        async with served(proxy) as path:
            first = f"POST http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            # A second request on the same connection, for another site of a shared front
            # end: its head was never checked, so it must go nowhere.
            second = f"GET http://127.0.0.1:{port}/y HTTP/1.1\r\nHost: evil.example\r\n\r\n"
            answer = await exchange(
                path, (first + "Content-Length: 5\r\n\r\n").encode(), b"hello" + second.encode()
            )
    assert answer == ANSWER
    assert received == [
        f"POST /x HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 5\r\n".encode()
        + b"Connection: close\r\n\r\nhello"
    ]


async def test_a_host_header_for_another_host_is_refused_and_reaches_nothing():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"127.0.0.1:{port}"), label="c-1")
        with capture_logs() as logs:
            async with served(proxy) as path:
                answer = await exchange(
                    path, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: h\r\n\r\n".encode()
                )
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    reason = f"the Host header names 'h', not 127.0.0.1:{port}"
    assert answer.endswith(f"executive egress proxy: {reason}\n".encode())
    assert received == []
    assert [(e["event"], e["log_level"], e["reason"]) for e in logs] == [
        ("egress.refused", "warning", reason)
    ]


async def test_a_host_not_on_the_list_is_refused_and_counted():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse("api.anthropic.com"), label="c-1")
        async with served(proxy) as path:
            connect = await exchange(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            plain = await exchange(path, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n".encode())
            port_22 = await exchange(path, b"CONNECT api.anthropic.com:22 HTTP/1.1\r\n\r\n")
    for answer in (connect, plain):
        assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
        assert answer.endswith(f"127.0.0.1:{port} is not on the allow-list\n".encode())
    assert b"api.anthropic.com:22 is not on the allow-list" in port_22
    assert received == []  # nothing reached the host
    assert proxy.summary() == {
        "refused": 3,
        "refused_hosts": [f"127.0.0.1:{port}", "api.anthropic.com:22"],
        "carried": 0,
        "failed": 0,
    }


async def test_an_allowed_name_that_leads_anywhere_but_a_public_address_is_refused():
    own = interface_address()
    if own is None:
        pytest.skip("this machine has no non-loopback IPv4 interface")
    # A service on every interface: what a LAN (or public) address of this machine reaches.
    async with upstream("0.0.0.0") as (port, received):
        direct = await anyio.connect_tcp(own, port)  # it is there to be reached
        await direct.aclose()
        answers = {
            "own.example.com": [own],
            "loop.example.com": ["127.0.0.1"],
            "lan.example.com": ["10.0.0.7"],
            "metadata.example.com": ["100.100.100.200"],
            "link.example.com": ["169.254.169.254"],
            "ula.example.com": ["fd12:3456::1"],
            "mapped.example.com": ["::ffff:127.0.0.1"],
            "mixed.example.com": ["127.0.0.1", "10.0.0.7"],
        }
        reasons = {
            "own.example.com": f"{own}, an address of this machine",
            "loop.example.com": "127.0.0.1, an address of this machine",
            "lan.example.com": "10.0.0.7, a private address",
            "metadata.example.com": "100.100.100.200, a shared (CGNAT) address",
            "link.example.com": "169.254.169.254, a link-local address",
            "ula.example.com": "fd12:3456::1, a unique local (ULA) address",
            "mapped.example.com": "::ffff:127.0.0.1, an address of this machine (IPv4-mapped)",
            "mixed.example.com": "127.0.0.1, an address of this machine",
        }
        allow = hosts.parse(",".join(f"{name}:{port}" for name in answers))
        proxy = Proxy(allow, label="c-1", resolve=table(answers))
        with capture_logs() as logs:
            async with served(proxy) as path:
                got = {}
                for name in answers:
                    got[name] = await exchange(
                        path,
                        f"GET http://{name}:{port}/ HTTP/1.1\r\nHost: {name}:{port}\r\n\r\n".encode(),
                    )
    assert received == [b""]  # only the test's own direct connection
    for name, reason in reasons.items():
        assert got[name].startswith(b"HTTP/1.1 403 Forbidden"), got[name]
        assert got[name].endswith(f"proxy: {name} resolves to {reason}\n".encode())
    refused = {e["host"]: e["reason"] for e in logs if e["event"] == "egress.refused"}
    assert refused == {f"{n}:{port}": f"{n} resolves to {r}" for n, r in reasons.items()}


async def test_an_address_the_allow_list_names_itself_is_reached_by_one_lookup():
    async with upstream() as (port, received):
        asked: list[str] = []
        # The name leads to loopback: reached only because the operator listed that address.
        allow = hosts.parse(f"mirror.example.com:{port},127.0.0.1:{port}")
        proxy = Proxy(allow, resolve=table({"mirror.example.com": ["127.0.0.1"]}, asked))
        async with served(proxy) as path:
            connect = f"CONNECT mirror.example.com:{port} HTTP/1.1\r\n\r\n".encode()
            answer = await exchange(path, connect, b"PING")
        # Listing the name alone does not make its address the operator's choice.
        name_only = Proxy(allow[:1], resolve=table({"mirror.example.com": ["127.0.0.1"]}))
        async with served(name_only) as path:
            refused = await exchange(path, connect)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"pong")
    assert received == [b"PING"]
    assert asked == ["mirror.example.com"]  # resolved once: the address checked is the one used
    assert refused.startswith(b"HTTP/1.1 403") and b"an address of this machine" in refused


async def test_localhost_is_not_a_way_to_this_machine():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"localhost:{port}"), resolve=table({"localhost": ["127.0.0.1"]}))
        async with served(proxy) as path:
            answer = await exchange(path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403")
    assert answer.endswith(b"localhost resolves to 127.0.0.1, an address of this machine\n")
    assert received == []


async def test_malformed_names_get_400_and_warnings_under_the_cap_never_a_traceback():
    proxy = Proxy(hosts.parse("*.example"), label="c-1")
    count = LOGGED_REFUSALS + 10
    with capture_logs() as logs:
        async with served(proxy) as path:
            answers = [
                await exchange(path, f"CONNECT bücher{i}.example:443 HTTP/1.1\r\n\r\n".encode())
                for i in range(count)
            ]
    assert all(a.startswith(b"HTTP/1.1 400 Bad Request") for a in answers)
    assert b"is not a host name or IP address" in answers[0]
    assert [e["log_level"] for e in logs] == ["warning"] * LOGGED_REFUSALS
    assert {e["event"] for e in logs} == {"egress.refused"}
    assert proxy.summary()["refused"] == count


async def test_unexpected_failures_are_logged_up_to_the_cap_and_counted():
    async def broken(host: str, port: int) -> list[str]:
        raise RuntimeError("resolver bug")

    proxy = Proxy(hosts.parse("pypi.org"), label="c-1", resolve=broken)
    count = LOGGED_REFUSALS + 5
    with capture_logs() as logs:
        async with served(proxy) as path:
            for _ in range(count):
                assert await exchange(path, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n") == b""
    assert [e["event"] for e in logs] == ["egress.connection_failed"] * LOGGED_REFUSALS
    assert proxy.summary()["failed"] == count


async def test_bad_heads_get_an_answer_and_the_proxy_keeps_serving(monkeypatch):
    monkeypatch.setattr(proxy_module, "MAX_HEAD", 64)
    proxy = Proxy(())
    async with served(proxy) as path:
        long = await exchange(path, b"GET http://a/ HTTP/1.1\r\nX: " + b"x" * 100)
        garbage = await exchange(path, b"\x00\x01\x02\r\n\r\n")
        gone = await exchange(path, b"GET http://a/")  # leaves before the head ends
        after = await exchange(path, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
    assert long.startswith(b"HTTP/1.1 400") and b"longer than 64 bytes" in long
    assert garbage.startswith(b"HTTP/1.1 400") and b"not an HTTP/1.x request line" in garbage
    assert gone == b""
    assert after.startswith(b"HTTP/1.1 403")


async def test_connections_past_the_limit_are_refused(monkeypatch):
    monkeypatch.setattr(proxy_module, "MAX_CONNECTIONS", 1)
    async with upstream() as (port, _):
        proxy = Proxy(hosts.parse(f"127.0.0.1:{port}"))
        async with served(proxy) as path, await anyio.connect_unix(str(path)) as held:
            # An open tunnel holds the one slot.
            await held.send(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            assert (await held.receive()).startswith(b"HTTP/1.1 200")
            answer = await exchange(path, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 503") and b"too many connections" in answer


async def test_the_bridge_reaches_exactly_the_carried_endpoint():
    async with upstream() as (port, received):
        proxy = Proxy((), carried=("127.0.0.1", port))
        async with served(proxy, "bridge") as path:
            answer = await exchange(path, b"POST /v1/messages HTTP/1.1\r\n\r\n")
        # The proxy port carries it too, for a client that sends even loopback to its proxy.
        assert proxy.permits("127.0.0.1", port) and not proxy.permits("127.0.0.1", port + 1)
    assert answer.endswith(b"pong")
    assert received == [b"POST /v1/messages HTTP/1.1\r\n\r\n"]
    assert proxy.summary()["carried"] == 1


async def test_a_carried_localhost_endpoint_is_the_one_name_that_leads_here():
    async with upstream() as (port, received):
        resolve = table({"localhost": ["127.0.0.1"]})
        proxy = Proxy((), carried=("localhost", port), resolve=resolve)
        async with served(proxy, "bridge") as bridge, served(proxy) as path:
            bridged = await exchange(bridge, b"POST /v1/messages HTTP/1.1\r\n\r\n")
            proxied = await exchange(
                path,
                f"POST http://localhost:{port}/v1/messages HTTP/1.1\r\n".encode()
                + f"Host: localhost:{port}\r\n\r\n".encode(),
            )
    assert bridged.endswith(b"pong") and proxied.endswith(b"pong")
    assert received == [
        b"POST /v1/messages HTTP/1.1\r\n\r\n",
        f"POST /v1/messages HTTP/1.1\r\nHost: localhost:{port}\r\n".encode()
        + b"Connection: close\r\n\r\n",
    ]
