"""A run's way out of the sandbox: the plan, the route, and a real sandbox going through it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from executive import hosts
from executive.settings import load_settings
from executive.workers.egress import route as egress
from executive.workers.egress.route import Plan, Route
from executive.workers.isolation import sandbox
from tests.isolation import named_server

needs_bwrap = pytest.mark.skipif(
    sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
)


@pytest.mark.parametrize(
    ("url", "allow", "carried"),
    [
        (None, ["api.anthropic.com"], None),
        ("http://127.0.0.1:8123", ["api.anthropic.com"], ("127.0.0.1", 8123)),
        ("http://[::1]:9/v1", ["api.anthropic.com"], ("::1", 9)),
        ("http://LocalHost", ["api.anthropic.com"], ("localhost", 80)),
        ("https://gateway.example.com/v1", ["api.anthropic.com", "gateway.example.com:443"], None),
        ("https://api.anthropic.com", ["api.anthropic.com"], None),  # allowed already
        ("http://127.0.0.1:bad", ["api.anthropic.com"], None),  # unreadable: nothing carried
    ],
)
def test_the_plan_allows_a_remote_endpoint_and_carries_a_local_one(home, url, allow, carried):
    env = {"ANTHROPIC_BASE_URL": url} if url else {}
    plan = egress.plan_for(load_settings(home), env)
    assert [str(e) for e in plan.allow] == allow
    assert plan.carried == carried


def test_the_worker_gets_the_proxy_variables_and_keeps_its_own_servers_off_it(tmp_path):
    route = Route(tmp_path, 3128)
    added = route.env({"PATH": "/usr/bin"})
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        assert added[name] == added[name.lower()] == "http://127.0.0.1:3128"
    assert added["NO_PROXY"] == added["no_proxy"] == "localhost,127.0.0.1,::1"
    # An operator's own NO_PROXY (passed through EXECUTIVE_WORKER_ENV) is left as it is.
    assert "NO_PROXY" not in route.env({"NO_PROXY": "internal.example"})


def test_a_local_name_is_carried_on_both_loopback_addresses(tmp_path):
    assert Route(tmp_path, 3128, ("localhost", 8080)).forwards() == [
        ("127.0.0.1", 3128, "/tmp/.executive-egress/proxy.sock", True),
        ("127.0.0.1", 8080, "/tmp/.executive-egress/api.sock", True),
        ("::1", 8080, "/tmp/.executive-egress/api.sock", False),  # where IPv6 is there
    ]
    assert Route(tmp_path, 3129, ("::1", 3128)).forwards()[1:] == [
        ("::1", 3128, "/tmp/.executive-egress/api.sock", True)
    ]


async def _route_port(folder: Path, carried: tuple[str, int] | None) -> tuple[int, list[str]]:
    async with egress.opened(Plan((), carried), folder, label="c") as route:
        return route.proxy_port, sorted(p.name for p in folder.iterdir())


def test_the_route_lives_in_a_private_folder_for_the_run_only(tmp_path):
    folder = tmp_path / ("deep-" * 20) / "egress" / "contract-1"  # past a socket path's limit
    folder.parent.parent.mkdir()
    port, names = anyio.run(_route_port, folder, None)
    assert (port, names) == (3128, ["proxy.sock"])
    assert not folder.exists()
    port, names = anyio.run(_route_port, folder, ("127.0.0.1", 3128))
    assert (port, names) == (3129, ["api.sock", "proxy.sock"])  # the endpoint keeps its port


@pytest.fixture
def servers() -> Iterator[dict[str, int]]:
    """Three HTTP servers on this host's loopback: stand-ins for an outside host, the API,
    and a service nobody allowed (the dashboard, a database)."""
    started = {}
    for name in ("outside", "api", "private"):
        started[name] = named_server(name)
    yield {name: s.server_address[1] for name, s in started.items()}
    for server in started.values():
        server.shutdown()
        server.server_close()


PROBE = r"""
import os, socket, sys, urllib.request
ports = dict(a.split("=") for a in sys.argv[1:])
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])

def via_proxy(port):
    s = socket.create_connection(("127.0.0.1", proxy))
    s.sendall(f"GET http://127.0.0.1:{port}/p HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    return data.decode().splitlines()[0] + " | " + data.decode().splitlines()[-1]

def direct(port):
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/d", timeout=10).read().decode()
    except OSError as exc:
        return type(exc).__name__

print("outside-via-proxy", via_proxy(ports["outside"]))
print("private-via-proxy", via_proxy(ports["private"]))
print("api-direct", direct(ports["api"]))
print("private-direct", direct(ports["private"]))
print("outside-direct", direct(ports["outside"]))
# The launcher's forwarding child (this process's child, same uid) cannot be taken over.
child = open(f"/proc/self/task/{os.getpid()}/children").read().split()[0]
try:
    open(f"/proc/{child}/mem", "rb").close()
    print("forwarder-memory opened")
except OSError as exc:
    print("forwarder-memory", type(exc).__name__)
"""


@needs_bwrap
def test_a_sandboxed_process_reaches_the_allowed_and_the_carried_and_nothing_else(servers):
    root = Path(tempfile.mkdtemp(prefix="executive-egress-", dir="/var/tmp"))
    try:
        out, state = root / "out", root / "state"
        out.mkdir()
        state.mkdir()
        plan = Plan(
            (hosts.entry(f"127.0.0.1:{servers['outside']}"),), ("127.0.0.1", servers["api"])
        )

        async def run() -> subprocess.CompletedProcess[bytes]:
            iso = sandbox.choose("sandbox", hidden=[state])
            async with egress.opened(plan, state / "egress" / "c", label="c") as route:
                probe = [sys.executable, "-c", PROBE, *(f"{k}={v}" for k, v in servers.items())]
                # The test's own Python: bound back when this checkout lives under /tmp.
                argv = replace(iso, route=route).wrap(
                    probe, workdir=out, readonly=sandbox.program_hidden(probe)
                )
                env = {"PATH": "/usr/bin:/bin", **route.env({})}
                return await anyio.run_process(argv, env=env, check=False, cwd=out)

        done = anyio.run(run)
    finally:
        shutil.rmtree(root)
    assert done.returncode == 0, done.stderr.decode()
    lines = dict(line.split(" ", 1) for line in done.stdout.decode().splitlines())
    assert lines == {
        "outside-via-proxy": "HTTP/1.0 200 OK | outside /p",
        "private-via-proxy": (
            "HTTP/1.1 403 Forbidden | executive egress proxy: "
            f"127.0.0.1:{servers['private']} is not on the allow-list"
        ),
        "api-direct": "api /d",  # carried in: the same address, inside
        "private-direct": "URLError",  # the sandbox's own loopback: nothing there
        "outside-direct": "URLError",  # allowed through the proxy only
        "forwarder-memory": "PermissionError",
    }
