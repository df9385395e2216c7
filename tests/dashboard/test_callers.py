"""Who calls the dashboard from this host, read from the kernel's socket table."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from executive.dashboard import callers
from executive.dashboard.callers import CallerGate
from executive.workers.isolation import sandbox
from tests.isolation import fetch_as

NOBODY = sandbox.account_ids("nobody")
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or NOBODY is None, reason="needs root and the nobody account"
)


def test_addresses_are_read_word_by_word_in_host_order():
    v4 = struct.unpack("=I", bytes([127, 0, 0, 1]))[0]
    assert callers.decode(f"{v4:08X}:1F90") == (callers._ip("127.0.0.1"), 8080)
    words = struct.unpack("=4I", socket.inet_pton(socket.AF_INET6, "::ffff:10.1.2.3"))
    v6 = "".join(f"{w:08X}" for w in words)
    assert callers.decode(f"{v6}:0050") == (callers._ip("10.1.2.3"), 80)  # mapped: its IPv4


@pytest.fixture
def listener():
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


def test_the_owner_of_our_own_connection_is_us(listener):
    with socket.create_connection(listener.getsockname()) as client:
        mine = client.getsockname()
        assert callers.owner(mine) == os.getuid()
        assert callers.owner(mine, listener.getsockname()) == os.getuid()
        assert callers.owner(("::ffff:" + mine[0], mine[1])) == os.getuid()
        assert callers.owner(mine, ("127.0.0.1", 1)) is None  # not connected to that server
    assert callers.owner(("127.0.0.1", 1)) is None


HOLD = """
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("%s %d" % s.getsockname(), flush=True)
sys.stdin.read()
"""
OTHER = 54321  # no account's name: another executive's worker, say, as the kernel sees it


@contextlib.contextmanager
def held_by(uid: int, gid: int, server: tuple[str, int]) -> Iterator[tuple[str, int]]:
    """A connection to ``server`` held open by a process of ``uid``: its address."""
    python = shutil.which("python3", path="/usr/bin:/bin")  # one any account may run
    if python is None:
        pytest.skip("no system python3 for another account")
    held = subprocess.Popen(
        [python, "-c", HOLD, str(server[1])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        user=uid,
        group=gid,
        extra_groups=[],
    )
    try:
        assert held.stdout is not None
        host, port = held.stdout.readline().split()
        yield host, int(port)
    finally:
        held.communicate("")


@needs_root
def test_only_the_daemons_account_root_and_listed_ones_are_served(listener):
    assert NOBODY is not None
    server = listener.getsockname()
    listed = OTHER + 1
    # The worker account is refused even when listed: a listing cannot let it in.
    gate = CallerGate(None, allowed=frozenset({listed, NOBODY[0]}), worker=(NOBODY[0], "nobody"))
    with held_by(*NOBODY, server) as worker:
        assert gate.refusal(worker, server) == (
            "the worker account (nobody) may not read the dashboard"
        )
    with held_by(OTHER, OTHER, server) as other:
        assert gate.refusal(other, server) == (
            f"uid {OTHER} is not the daemon's (0); "
            "EXECUTIVE_DASHBOARD_ALLOW_UIDS lists the other accounts it serves"
        )
    with held_by(listed, listed, server) as allowed:
        assert gate.refusal(allowed, server) is None
    with socket.create_connection(server) as mine:
        assert gate.refusal(mine.getsockname(), server) is None  # the operator's own


def test_a_remote_caller_is_left_to_the_token_and_a_unix_one_is_not_judged():
    gate = CallerGate(None)
    assert gate.refusal(("192.0.2.7", 40000), ("192.0.2.1", 8377)) is None  # not in our table
    assert gate.refusal(("/run/executive/dashboard.sock", 0)) is None


@pytest.mark.anyio
async def test_a_loopback_caller_nobody_owns_gets_403_before_any_route():
    async def page(request):
        return PlainTextResponse("the memory page")

    app = CallerGate(Starlette(routes=[Route("/memory", page)]), worker=(65534, "nobody"))
    # The transport's made-up client address is in no socket table: unknown, so refused.
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as client:
        answer = await client.get("/memory")
    assert answer.status_code == 403 and "who it is is unknown" in answer.text
    assert "memory page" not in answer.text


@needs_root
def test_a_dashboard_refuses_another_account_here_in_every_mode(demo):
    # The demo's workers have no account of their own (a sandbox, or the daemon's); another
    # executive's worker, as any other account of this host, is still refused.
    assert fetch_as(OTHER, demo.url.rstrip("/") + "/healthz") == (
        f"403 403: uid {OTHER} is not the daemon's (0); "
        "EXECUTIVE_DASHBOARD_ALLOW_UIDS lists the other accounts it serves"
    )
    assert demo.get("/healthz").status_code == 200  # the operator's own
