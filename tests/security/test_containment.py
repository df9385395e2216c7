"""Issue 30's breaks 3, 5 and 6 against a real daemon and real sandboxed workers.

One daemon (sandbox mode, dashboard on loopback without a token, the network on) shares a
Postgres-like store with a peer home, and three stand-ins listen on this host's loopback: an
allowed "outside" host, the worker's API endpoint (``ANTHROPIC_BASE_URL``, as a local LLM
gateway or the scripted Messages API would be), and a private service nobody allowed (a
loopback Postgres). A probe worker tries every way out and writes down what happened; a
leaking worker prints the peer's token, found "somewhere else", and fails twice.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from executive.workers.isolation import sandbox
from tests.conftest import scaffolded
from tests.daemonproc import Daemon
from tests.isolation import fetch_as, named_server
from tests.loop.homes import add_bundle, events, make_home, outputs
from tests.security import hostile

pytestmark = pytest.mark.skipif(
    sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
)

PROBE = r"""
import json, os, socket, sys, urllib.request

config = json.load(open(os.path.join(os.path.dirname(sys.argv[0]), "config.json")))
proxy = ("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1]))
found = {}

def attempt(name, action):
    try:
        found[name] = action()
    except OSError as exc:
        found[name] = type(exc).__name__

def tcp(port):
    socket.create_connection(("127.0.0.1", port), timeout=10).close()
    return "connected"

def through_proxy(request):
    with socket.create_connection(proxy, timeout=30) as s:
        s.sendall(request.encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    lines = data.decode(errors="replace").splitlines()
    return lines[0] + " | " + lines[-1]

def unix(path):
    os.stat(path)  # there to see: only connecting is refused
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return "connected"

def datagram(path):
    # socket(AF_UNIX) is refused; a datagram pair would take an address (/dev/log's, say).
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"from the sandbox", path)
    return "sent"

attempt("peer env", lambda: open(config["peer"] + "/.env.executive").read())
attempt("outputs root", lambda: sorted(os.listdir(config["outputs"])))
attempt("other CLAUDE.md", lambda: open(config["outputs"] + "/other/CLAUDE.md").read())
attempt("dashboard", lambda: tcp(config["dashboard"]))
attempt("private service", lambda: tcp(config["private"]))
attempt("control socket", lambda: unix(config["socket"]))
attempt("unix service", lambda: unix(config["unix"]))
attempt("unix datagram", lambda: datagram(config["datagram"]))
attempt("dashboard via proxy", lambda: through_proxy(
    f"GET http://127.0.0.1:{config['dashboard']}/memory HTTP/1.1\r\n"
    f"Host: 127.0.0.1:{config['dashboard']}\r\n\r\n"))
attempt("private via proxy", lambda: through_proxy(
    f"CONNECT 127.0.0.1:{config['private']} HTTP/1.1\r\n\r\n"))
attempt("unlisted host via proxy", lambda: through_proxy(
    "CONNECT example.com:443 HTTP/1.1\r\n\r\n"))
attempt("outside via proxy", lambda: through_proxy(
    f"GET http://127.0.0.1:{config['outside']}/simple/ HTTP/1.1\r\n"
    f"Host: 127.0.0.1:{config['outside']}\r\n\r\n"))
# As a claude worker calls its API: the client's own way (NO_PROXY keeps loopback direct).
attempt("api", lambda: urllib.request.urlopen(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", timeout=30).read().decode())
json.dump(found, open("probe.json", "w"), indent=1)
"""


def _stage(home: Path, stage: Path, slug: str, files: dict[str, str], **front: object) -> None:
    """A bundle made beside the queue, then moved into it whole: the running daemon never
    sees half of it."""
    folder = add_bundle(stage, slug, "", **front)
    for name, text in files.items():
        (folder / name).write_text(text)
    folder.rename(home / "workspace" / "ondeck" / slug)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("containment")
    peer_token = "plain" + secrets.token_hex(20)  # no known shape: only its value betrays it
    peer = scaffolded(tmp / "peer")
    (peer / ".env.executive").write_text(f"GITHUB_TOKEN={peer_token}\n")
    outside, api = named_server("outside"), named_server("api")
    private = socket.create_server(("127.0.0.1", 0))  # a loopback Postgres, say
    run = Path(tempfile.mkdtemp(prefix="executive-run-", dir="/var/tmp"))  # seen in a sandbox
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(run / "service.sock"))
    unix.listen()
    log = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # as /dev/log or the journal's
    log.bind(str(run / "log.sock"))
    log.setblocking(False)
    home = make_home(
        tmp,
        EXECUTIVE_WORKER_ISOLATION="sandbox",
        EXECUTIVE_PEER_HOMES=str(peer),
        EXECUTIVE_WORKER_ALLOW_HOSTS=f"127.0.0.1:{outside.server_address[1]}",
        EXECUTIVE_WORKER_ENV="ANTHROPIC_BASE_URL",
    )
    out = outputs(home)
    add_bundle(home, "other", "echo mine > mine.txt\n", priority="P0")
    # The peer's token, found "somewhere else": in the leaking worker's own folder.
    (out / "leak").mkdir(parents=True)
    (out / "leak" / "found.txt").write_text(peer_token + "\n")
    add_bundle(
        home,
        "leak",
        f"cat {peer}/.env.executive || true\ncat found.txt\nexit 1\n",
        priority="P1",
        max_attempts=2,
        command=["sh", "{bundle_dir}/work.sh"],
    )
    daemon = Daemon(
        home,
        {
            "EXECUTIVE_DASHBOARD": "true",
            "EXECUTIVE_DASHBOARD_BIND": "127.0.0.1:0",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{api.server_address[1]}",
        },
    )
    try:
        url = daemon.wait_for("dashboard.listening", timeout=120)["urls"][0]
        config = {
            "peer": str(peer),
            "outputs": str(out),
            "socket": str(home / ".state" / "executive.sock"),
            "dashboard": int(url.rstrip("/").rsplit(":", 1)[1]),
            "private": private.getsockname()[1],
            "outside": outside.server_address[1],
            "unix": str(run / "service.sock"),
            "datagram": str(run / "log.sock"),
        }
        (tmp / "stage").mkdir()
        _stage(
            home,
            tmp / "stage",
            "probe",
            {"probe.py": PROBE, "config.json": json.dumps(config)},
            priority="P2",
            command=["python3", "{bundle_dir}/probe.py"],
            verifiers=[{"builtin": "output_exists", "path": "probe.json"}],
        )
        daemon.wait_for("goal.completed", timeout=300, bundle="probe")
        daemon.wait_for("goal.blocked", timeout=300, bundle="leak")
        daemon.signal(signal.SIGTERM)
        code = daemon.wait(60)
        try:
            logged = log.recv(64)
        except BlockingIOError:
            logged = None  # nothing arrived
    finally:
        daemon.kill()
        for server in (outside, api):
            server.shutdown()
            server.server_close()
        private.close()
        unix.close()
        log.close()
        shutil.rmtree(run, ignore_errors=True)
    yield {
        "home": home,
        "out": out,
        "daemon": daemon,
        "code": code,
        "token": peer_token,
        "config": config,
        "logged": logged,
    }


def test_a_worker_reaches_the_allowed_host_and_its_api_and_nothing_else_on_this_host(scene):
    assert scene["code"] == 0, scene["daemon"].stderr
    found = json.loads((scene["out"] / "probe" / "probe.json").read_text())
    refused = "HTTP/1.1 403 Forbidden | executive egress proxy:"
    dashboard, private = scene["config"]["dashboard"], scene["config"]["private"]
    assert found == {
        # Break 3: the peer home is not there.
        "peer env": "FileNotFoundError",
        # Break 6: the outputs root shows the worker its own folder only.
        "outputs root": ["probe"],
        "other CLAUDE.md": "FileNotFoundError",
        # Break 5: the dashboard, a loopback service and the control socket are out of reach,
        # directly and through the proxy.
        "dashboard": "ConnectionRefusedError",
        "private service": "ConnectionRefusedError",
        "control socket": "FileNotFoundError",
        "unix service": "PermissionError",  # a socket it can see (a database's, say)
        "unix datagram": "PermissionError",  # issue 37's break 4
        "dashboard via proxy": f"{refused} 127.0.0.1:{dashboard} is not on the allow-list",
        "private via proxy": f"{refused} 127.0.0.1:{private} is not on the allow-list",
        "unlisted host via proxy": f"{refused} example.com:443 is not on the allow-list",
        # What is allowed works: the listed host through the proxy, the API carried in.
        "outside via proxy": "HTTP/1.0 200 OK | outside /simple/",
        "api": "api /v1/messages",
    }
    assert scene["logged"] is None  # no datagram reached the host's socket
    assert (scene["out"] / "other" / "mine.txt").read_text() == "mine\n"  # it did run
    lines = scene["daemon"].records
    closed = [r for r in lines if r.get("event") == "egress.closed"]
    assert any(r["refused"] == 3 and r["carried"] == 1 for r in closed), closed


def test_a_peers_token_is_redacted_everywhere_it_could_be_recorded(scene):
    home, token = scene["home"], scene["token"]
    failed = events(home, "STEP_FAILED", bundle="leak")
    assert len(failed) == 2
    assert all("No such file or directory" in e["error"] for e in failed)  # the peer's file
    assert all("[REDACTED]" in e["error"] for e in failed)  # the copy found elsewhere
    history = hostile.whole_history(home)
    leak = scene["out"] / "leak"
    recorded = {str(p): p.read_bytes() for p in home.rglob("*") if p.is_file()}
    recorded |= {
        "CLAUDE.md": (leak / "CLAUDE.md").read_bytes(),
        "PROMPT.md": (leak / ".executive" / "PROMPT.md").read_bytes(),
        "git history": history,
        "daemon log": "".join(scene["daemon"].lines).encode(),
    }
    assert b"[REDACTED]" in recorded["PROMPT.md"]  # the second attempt was told, redacted
    hits = [name for name, data in recorded.items() if token.encode() in data]
    assert not hits, hits
    assert (leak / "found.txt").stat().st_size > 0  # the worker did have it to print


DASHBOARD_PROBE = r"""
import json, os, sys, urllib.error, urllib.request

port = json.load(open(os.path.join(os.path.dirname(sys.argv[0]), "config.json")))["dashboard"]
found = {}
for path in ("/memory", "/packs", "/healthz"):
    try:
        found[path] = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).status
    except urllib.error.HTTPError as exc:
        found[path] = f"{exc.code} {exc.read().decode().strip()}"
json.dump(found, open("probe.json", "w"))
"""


OTHER = 54321  # another executive's worker account, as the kernel sees it: a uid
LISTED = 54322  # an account the operator listed: a local Prometheus, say


@pytest.fixture(scope="module")
def user_mode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A root daemon whose workers run as ``nobody`` on this host's own network."""
    if os.geteuid() != 0 or sandbox.account_ids("nobody") is None:
        pytest.skip("user mode needs a root daemon and the nobody account")
    tmp = tmp_path_factory.mktemp("user-mode")
    # The account must reach its folders (and nothing else): a folder it may pass, not list.
    scratch = Path(tempfile.mkdtemp(prefix="executive-user-", dir="/var/tmp"))
    scratch.chmod(0o711)
    home = make_home(
        tmp, EXECUTIVE_WORKER_ISOLATION="user", EXECUTIVE_OUTPUT_ROOT=str(scratch / "outputs")
    )
    home.chmod(0o700)
    env = {
        "EXECUTIVE_DASHBOARD": "true",
        "EXECUTIVE_DASHBOARD_BIND": "127.0.0.1:0",
        # Listing the worker account itself lets it in no more.
        "EXECUTIVE_DASHBOARD_ALLOW_UIDS": f"{LISTED},nobody",
    }
    daemon = Daemon(home, env)
    try:
        url = daemon.wait_for("dashboard.listening", timeout=120)["urls"][0]
        (tmp / "stage").mkdir()
        config = {"dashboard": int(url.rstrip("/").rsplit(":", 1)[1])}
        _stage(
            home,
            tmp / "stage",
            "dashboard",
            {"probe.py": DASHBOARD_PROBE, "config.json": json.dumps(config)},
            command=["python3", "{bundle_dir}/probe.py"],
            verifiers=[{"builtin": "output_exists", "path": "probe.json"}],
        )
        daemon.wait_for("goal.completed", timeout=300, bundle="dashboard")
        operator = httpx.get(url.rstrip("/") + "/healthz", timeout=60).status_code
        others = {uid: fetch_as(uid, url.rstrip("/") + "/memory") for uid in (OTHER, LISTED)}
        daemon.signal(signal.SIGTERM)
        code = daemon.wait(60)
    finally:
        daemon.kill()
    yield {
        "out": scratch / "outputs",
        "daemon": daemon,
        "code": code,
        "operator": operator,
        "others": others,
    }
    shutil.rmtree(scratch, ignore_errors=True)


def test_in_user_mode_the_dashboard_refuses_the_worker_account(user_mode):
    assert user_mode["code"] == 0, user_mode["daemon"].stderr
    found = json.loads((user_mode["out"] / "dashboard" / "probe.json").read_text())
    refused = "403 403: the worker account (nobody) may not read the dashboard"
    assert found == {"/memory": refused, "/packs": refused, "/healthz": refused}
    assert user_mode["operator"] == 200  # the operator's own probe is served
    # Issue 37's break 5: another executive's worker (any other account here) is refused too;
    # an account the operator listed is served.
    assert user_mode["others"] == {
        OTHER: f"403 403: uid {OTHER} is not the daemon's (0); "
        "EXECUTIVE_DASHBOARD_ALLOW_UIDS lists the other accounts it serves",
        LISTED: "200",
    }
