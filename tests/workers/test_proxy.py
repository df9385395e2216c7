"""The egress proxy over real sockets: what it carries, what it refuses, and why it says so."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketStream

from executive import hosts
from executive.workers import proxy as proxy_module
from executive.workers.proxy import Proxy, Refused, parse_head

pytestmark = pytest.mark.anyio


def test_connect_names_its_target():
    target = parse_head(b"CONNECT Api.Anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443")
    assert (target.host, target.port, target.head) == ("api.anthropic.com", 443, None)
    assert parse_head(b"CONNECT [::1]:8443 HTTP/1.1").host == "::1"


def test_a_plain_request_goes_on_in_origin_form_without_proxy_headers():
    head = (
        b"POST http://pypi.org:8080/simple/x?y=1 HTTP/1.1\r\nHost: pypi.org:8080\r\n"
        b"Proxy-Authorization: Basic abc\r\nProxy-Connection: keep-alive\r\n"
        b"Connection: keep-alive\r\nContent-Length: 3"
    )
    target = parse_head(head)
    assert (target.host, target.port) == ("pypi.org", 8080)
    assert target.head == (
        b"POST /simple/x?y=1 HTTP/1.1\r\nHost: pypi.org:8080\r\nContent-Length: 3\r\n"
        b"Connection: close\r\n\r\n"
    )
    # No Host header: the URL's authority becomes one (user information left out).
    target = parse_head(b"GET http://user:pw@example.com HTTP/1.0")
    assert target.head == b"GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (b"GET https://pypi.org/ HTTP/1.1", "only CONNECT (for https) and absolute http://"),
        (b"GET /relative HTTP/1.1", "only CONNECT"),
        (b"CONNECT pypi.org HTTP/1.1", "CONNECT needs host:port"),
        (b"CONNECT pypi.org:99999 HTTP/1.1", "CONNECT needs host:port"),
        (b"GET http://pypi.org:x/ HTTP/1.1", "not a URL"),
        (b"\x16\x03\x01\x02\x00", "not an HTTP/1.x request line"),
        (b"GET http://pypi.org/ SPDY/3", "not an HTTP/1.x request line"),
    ],
)
def test_what_is_not_a_proxy_request_is_refused_with_400(head, reason):
    with pytest.raises(Refused, match=reason.replace("(", r"\(").replace(")", r"\)")) as caught:
        parse_head(head)
    assert caught.value.status == 400


@asynccontextmanager
async def upstream() -> AsyncIterator[tuple[int, list[bytes]]]:
    """A TCP server on loopback that records what it got and answers per request."""
    received: list[bytes] = []

    async def answer(stream: SocketStream) -> None:
        async with stream:
            data = b""
            async for chunk in stream:
                data += chunk
                if b"\r\n\r\n" in data or data.endswith(b"PING"):
                    break
            received.append(data)
            await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield listener.extra(anyio.abc.SocketAttribute.local_port), received
        tg.cancel_scope.cancel()


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
    assert proxy.summary() == {"refused": 0, "refused_hosts": [], "carried": 0}


async def test_a_plain_http_request_is_forwarded_to_an_allowed_host():
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"127.0.0.1:{port}"))
        async with served(proxy) as path:
            answer = await exchange(
                path, f"GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: h\r\n\r\n".encode()
            )
    assert answer.endswith(b"pong")
    assert received == [b"GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"]


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
    }


async def test_an_allowed_name_that_resolves_to_this_machine_is_refused(monkeypatch):
    # DNS cannot run here: the resolver's answer is what the test gives (its wire is not ours).
    async def resolve(host, port, **kwargs):
        return [(2, 1, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(proxy_module.anyio, "getaddrinfo", resolve)
    async with upstream() as (port, received):
        proxy = Proxy(hosts.parse(f"mirror.example.com:{port},localhost:{port}"))
        async with served(proxy) as path:
            named = await exchange(
                path, f"CONNECT mirror.example.com:{port} HTTP/1.1\r\n\r\n".encode()
            )
            local = await exchange(
                path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode(), b"PING"
            )
    assert named.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"mirror.example.com resolves to 127.0.0.1, an address of this machine" in named
    # An entry that names this machine itself is the operator's choice, and holds.
    assert local.startswith(b"HTTP/1.1 200") and local.endswith(b"pong")
    assert received == [b"PING"]


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
