"""Who calls the dashboard from this host, read from the kernel's socket table."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from executive.dashboard import callers
from executive.dashboard.callers import AccountGate
from executive.workers import sandbox

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
        host, port = client.getsockname()
        assert callers.owner(host, port) == os.getuid()
        assert callers.owner("::ffff:" + host, port) == os.getuid()
    assert callers.owner("127.0.0.1", 1) is None


HOLD = """
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("%s %d" % s.getsockname(), flush=True)
sys.stdin.read()
"""


@needs_root
def test_the_worker_account_is_refused_and_the_operator_is_not(listener):
    assert NOBODY is not None
    python = shutil.which("python3", path="/usr/bin:/bin")  # one the account may run
    if python is None:
        pytest.skip("no system python3 for the worker account")
    held = subprocess.Popen(
        [python, "-c", HOLD, str(listener.getsockname()[1])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        user=NOBODY[0],
        group=NOBODY[1],
        extra_groups=[],
    )
    try:
        assert held.stdout is not None
        host, port = held.stdout.readline().split()
        gate = AccountGate(None, uid=NOBODY[0], account="nobody")
        assert gate.refusal(host, int(port)) == (
            "the worker account (nobody) may not read the dashboard"
        )
        with socket.create_connection(listener.getsockname()) as mine:
            assert gate.refusal(*mine.getsockname()) is None
    finally:
        held.communicate("")


@pytest.mark.anyio
async def test_a_loopback_caller_nobody_owns_gets_403_before_any_route():
    async def page(request):
        return PlainTextResponse("the memory page")

    app = AccountGate(Starlette(routes=[Route("/memory", page)]), uid=65534, account="nobody")
    # The transport's made-up client address is in no socket table: unknown, so refused.
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 1))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as client:
        answer = await client.get("/memory")
    assert answer.status_code == 403 and "who it is is unknown" in answer.text
    assert "memory page" not in answer.text
