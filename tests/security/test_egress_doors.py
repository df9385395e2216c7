"""Issue 37's egress doors against a real daemon and a real sandboxed worker.

The daemon (sandbox mode) runs in a mount namespace of its own whose ``/etc/hosts`` gives
allowed names the addresses a hostile DNS answer would: this machine's own interface
address (a service listens on ``0.0.0.0`` there), loopback, a private, a CGNAT (a cloud's
metadata service), a link-local and a unique local address. This host's resolver reads that
file, so the daemon's lookups are real. A probe worker then tries each name through its
proxy, a ``Host`` header for another site, a second request on a kept-alive connection, and
names no resolver should see; a recording stand-in shows what reached it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.workers.egress.proxy import LOGGED_REFUSALS
from executive.workers.isolation import sandbox
from tests.daemonproc import Daemon
from tests.isolation import interface_address, named_server, recording_server
from tests.loop.homes import add_bundle, make_home, outputs

pytestmark = pytest.mark.skipif(
    sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
)
MALFORMED = LOGGED_REFUSALS + 5  # more than the log carries

PROBE = r"""
import json, os, socket, sys

config = json.load(open(os.path.join(os.path.dirname(sys.argv[0]), "config.json")))
proxy = ("127.0.0.1", int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1]))

def through_proxy(*request):
    try:
        return exchange(*request)
    except OSError as exc:  # what the old proxy did: carried on, to an address that hung
        return type(exc).__name__

def exchange(*request):
    with socket.create_connection(proxy, timeout=40) as s:
        for part in request:
            s.sendall(part)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    lines = data.decode(errors="replace").splitlines() or ["(no answer)"]
    return lines[0] + " | " + lines[-1]

found = {}
port, recorder = config["service"], config["recorder"]
for name in config["names"]:
    found[name] = through_proxy(
        f"GET http://{name}:{port}/ HTTP/1.1\r\nHost: {name}:{port}\r\n\r\n".encode())
found["connect own"] = through_proxy(f"CONNECT own.test:{port} HTTP/1.1\r\n\r\n".encode())
found["host header"] = through_proxy(
    f"GET http://127.0.0.1:{recorder}/a HTTP/1.1\r\nHost: evil.example\r\n\r\n".encode())
found["second request"] = through_proxy(
    f"POST http://127.0.0.1:{recorder}/first HTTP/1.1\r\nHost: 127.0.0.1:{recorder}\r\n"
    "Content-Length: 5\r\n\r\nhello".encode(),
    f"GET /second HTTP/1.1\r\nHost: evil.example\r\n\r\n".encode())
found["malformed"] = sorted({
    through_proxy(f"CONNECT b\u00fccher{i}.test:443 HTTP/1.1\r\n\r\n".encode()).split(" | ")[0]
    for i in range(config["malformed"])})
json.dump(found, open("probe.json", "w"), indent=1)
"""


def _hosts_file(folder: Path, own: str) -> tuple[Path, dict[str, str]]:
    names = {
        "own.test": own,
        "loop.test": "127.0.0.1",
        "lan.test": "10.0.0.7",
        "metadata.test": "100.100.100.200",
        "link.test": "169.254.169.254",
        "ula.test": "fd12:3456::1",
    }
    path = folder / "hosts"
    lines = [f"{address} {name}" for name, address in names.items()]
    path.write_text(Path("/etc/hosts").read_text() + "\n".join(lines) + "\n")
    return path, names


def _own_hosts(hosts_file: Path) -> list[str]:
    """The command that starts the daemon with ``hosts_file`` as its /etc/hosts, in a mount
    namespace of its own (nothing outside it sees the change); skips where that cannot be."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a mount namespace for /etc/hosts needs root and unshare")
    prefix = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        'mount --bind "$0" /etc/hosts && exec "$@"',
        str(hosts_file),
    ]
    tried = subprocess.run([*prefix, "getent", "hosts", "own.test"], capture_output=True)
    if tried.returncode != 0:
        pytest.skip(f"cannot give the daemon its own /etc/hosts: {tried.stderr.decode()}")
    return prefix


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    own = interface_address()
    if own is None:
        pytest.skip("this machine has no non-loopback IPv4 interface")
    tmp = tmp_path_factory.mktemp("egress-doors")
    hosts_file, names = _hosts_file(tmp, own)
    prefix = _own_hosts(hosts_file)
    service = named_server("service", "0.0.0.0")  # every interface: a LAN or public one too
    port = service.server_address[1]
    recorder = recording_server()
    allow = [f"{name}:{port}" for name in names] + [f"127.0.0.1:{recorder.server_address[1]}"]
    allow.append("*.test:443")  # the malformed names are under it: the check comes first
    home = make_home(
        tmp, EXECUTIVE_WORKER_ISOLATION="sandbox", EXECUTIVE_WORKER_ALLOW_HOSTS=",".join(allow)
    )
    config = {
        "names": list(names),
        "service": port,
        "recorder": recorder.server_address[1],
        "malformed": MALFORMED,
    }
    stage = Path(tempfile.mkdtemp(prefix="egress-stage-", dir=tmp))
    folder = add_bundle(
        stage,
        "probe",
        "",
        command=["python3", "{bundle_dir}/probe.py"],
        timeout_seconds=300,  # when a door is open, an attempt may hang until its timeout
        verifiers=[{"builtin": "output_exists", "path": "probe.json"}],
    )
    (folder / "probe.py").write_text(PROBE)
    (folder / "config.json").write_text(json.dumps(config))
    folder.rename(home / "workspace" / "ondeck" / "probe")
    daemon = Daemon(home, prefix=prefix)
    try:
        daemon.wait_for("goal.completed", timeout=300, bundle="probe")
        # The service was there to reach, at this machine's own address.
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        reached = direct.open(f"http://{own}:{port}/d", timeout=30).read()
        daemon.signal(signal.SIGTERM)
        code = daemon.wait(60)
    finally:
        daemon.kill()
        service.shutdown()
        service.server_close()
        recorder.shutdown()
        recorder.server_close()
    found = json.loads((outputs(home) / "probe" / "probe.json").read_text())
    yield {
        "daemon": daemon,
        "code": code,
        "found": found,
        "names": names,
        "port": port,
        "recorder": recorder,
        "reached": reached,
    }


def test_an_allowed_name_reaches_no_address_that_is_not_public(scene):
    assert scene["code"] == 0, scene["daemon"].stderr
    names, found = scene["names"], scene["found"]
    refused = "HTTP/1.1 403 Forbidden | executive egress proxy:"
    why = {
        "own.test": "an address of this machine",
        "loop.test": "an address of this machine",
        "lan.test": "a private address",
        "metadata.test": "a shared (CGNAT) address",
        "link.test": "a link-local address",
        "ula.test": "a unique local (ULA) address",
    }
    assert scene["reached"] == b"service /d"
    for name, address in names.items():
        assert found[name] == f"{refused} {name} resolves to {address}, {why[name]}"
    assert found["connect own"] == found["own.test"]


def test_the_host_header_and_a_second_request_reach_nothing_unchecked(scene):
    found, recorder = scene["found"], scene["recorder"]
    at = f"127.0.0.1:{recorder.server_address[1]}"
    assert found["host header"] == (
        f"HTTP/1.1 403 Forbidden | executive egress proxy: "
        f"the Host header names 'evil.example', not {at}"
    )
    assert found["second request"] == "HTTP/1.1 200 OK | recorded"
    assert recorder.received == [
        f"POST /first HTTP/1.1\r\nHost: {at}\r\nContent-Length: 5\r\n".encode()
        + b"Connection: close\r\n\r\nhello"
    ]


def test_malformed_names_get_400_and_the_log_gets_warnings_under_the_cap(scene):
    assert scene["found"]["malformed"] == ["HTTP/1.1 400 Bad Request"]
    records = scene["daemon"].records
    egress = [r for r in records if str(r.get("event", "")).startswith("egress.")]
    refused = [r for r in egress if r["event"] == "egress.refused"]
    assert len(refused) == LOGGED_REFUSALS
    assert {r["level"] for r in refused} == {"warning"}
    assert not [r for r in records if r.get("level") in ("error", "critical")]
    assert not any("Traceback" in line for line in scene["daemon"].lines)
    reasons = [r["reason"] for r in refused]
    assert "metadata.test resolves to 100.100.100.200, a shared (CGNAT) address" in reasons
    closed = [r for r in egress if r["event"] == "egress.closed" and r["refused"]]
    assert [(r["refused"], r["failed"]) for r in closed] == [
        (len(scene["names"]) + 2 + MALFORMED, 0)
    ]
