"""The sandbox's launcher: its seccomp filter, and how it fails."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.workers.isolation import launcher, sandbox

MACHINE = os.uname().machine
needs_filter = pytest.mark.skipif(
    MACHINE not in launcher.CONFINABLE, reason=f"no seccomp filter for {MACHINE}"
)
needs_bwrap = pytest.mark.skipif(
    sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
)


CONFINED = r"""
import json, os, socket, sys
from executive.workers.isolation import launcher

launcher.confine(os.uname().machine)
found = {}
for family in ("AF_UNIX", "AF_INET", "AF_INET6"):
    try:
        socket.socket(getattr(socket, family)).close()
        found[family] = "ok"
    except OSError as exc:
        found[family] = os.strerror(exc.errno)
socket.socketpair()
found["socketpair"] = "ok"
print(json.dumps(found))
"""


def _confined_child() -> dict[str, str]:
    """What a confined process may still open."""
    done = subprocess.run(
        [sys.executable, "-c", CONFINED], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@needs_filter
def test_the_filter_refuses_unix_sockets_and_nothing_else():
    assert _confined_child() == {
        "AF_UNIX": "Operation not permitted",
        "AF_INET": "ok",
        "AF_INET6": "ok",
        "socketpair": "ok",
    }


def test_every_known_machine_assembles_and_no_other():
    for machine in launcher.CONFINABLE:
        program = launcher.seccomp_filter(machine)
        assert len(program) % 8 == 0 and 0 < len(program) // 8 < 64
    with pytest.raises(KeyError):
        launcher.seccomp_filter("sparc64")


# The kernel's own numbers where its headers are installed (linux-libc-dev); the arm ones
# (281, 288) are arch/arm/tools/syscall.tbl's.
HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "i386": Path("/usr/include/x86_64-linux-gnu/asm/unistd_32.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


def _numbers(header: Path) -> dict[str, int]:
    return {
        m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+) (\d+)$", header.read_text(), re.M)
    }


def test_the_filters_call_numbers_are_the_kernels():
    found = {arch: _numbers(path) for arch, path in HEADERS.items() if path.exists()}
    if not found:
        pytest.skip("no kernel headers here")
    names = {
        "x86_64": ("socket", "socketpair"),
        "aarch64": ("socket", "socketpair"),
        "i386": ("socketcall", "socket", "socketpair", "io_uring_setup"),
    }
    tables = {
        "x86_64": launcher.CONFINABLE["x86_64"][0][1:],
        "aarch64": launcher.CONFINABLE["aarch64"][0][1:],
        "i386": launcher.CONFINABLE["x86_64"][1][1],
    }
    for arch, numbers in found.items():
        assert tuple(numbers[name] for name in names[arch]) == tables[arch], arch
        assert numbers["io_uring_setup"] == launcher.IO_URING_SETUP


def test_a_missing_program_is_named_and_exits_127():
    spec = json.dumps({"forwards": [], "confine": False})
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(sandbox.LAUNCHER_FILE), spec, "/nonexistent/worker"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 127
    assert "cannot start /nonexistent/worker" in done.stderr


# Every way a confined worker could aim a Unix socket of its own at a path it can see.
PAIRS = r"""
import errno, json, os, socket, sys

datagram, stream = sys.argv[1:3]
found = {}

def attempt(name, action):
    try:
        found[name] = action()
    except OSError as exc:
        found[name] = errno.errorcode[exc.errno]

def sockets_held():
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:
            pass  # the listing's own descriptor, closed since
    return [link for link in held if link.startswith("socket:")]

def aimed(a, b, name):
    # The datagram kinds: aimed at the host's socket if the pair was made at all.
    attempt(name + " sendto", lambda: a.sendto(b"out", datagram) and "sent")
    attempt(name + " connect", lambda: a.connect(datagram) or "connected")

def connected(a, b, name):
    a.sendall(b"own")
    found[name + " pipe"] = b.recv(3).decode()
    b.setblocking(False)
    attempt(name + " sendto", lambda: a.sendto(b"out", datagram) and "sent")
    attempt(name + " connect", lambda: a.connect(datagram) or "connected")
    attempt(name + " connect stream", lambda: a.connect(stream) or "connected")
    attempt(name + " peer got", lambda: b.recv(3).decode())
    b.close()
    attempt(name + " sendto after close", lambda: a.sendto(b"out", datagram) and "sent")
    attempt(name + " connect after close", lambda: a.connect(datagram) or "connected")

found["sockets held at start"] = sockets_held()
kinds = {
    "dgram": (socket.SOCK_DGRAM, aimed),
    "dgram cloexec": (socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, aimed),
    "raw": (socket.SOCK_RAW, aimed),  # AF_UNIX makes a SOCK_RAW pair a datagram pair
    "stream": (socket.SOCK_STREAM, connected),
    "seqpacket": (socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK, connected),
}
for name, (kind, then) in kinds.items():
    try:
        a, b = socket.socketpair(socket.AF_UNIX, kind)
    except OSError as exc:
        found[name] = errno.errorcode[exc.errno]
        continue
    then(a, b, name)
print(json.dumps(found))
"""


@pytest.fixture
def host_sockets() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A datagram socket and a stream listener on paths the sandbox's read-only ``/`` shows
    (as ``/dev/log`` and a database's are), outside the /tmp every sandbox replaces."""
    run = Path(tempfile.mkdtemp(prefix="executive-dgram-", dir="/var/tmp"))
    datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    datagram.bind(str(run / "log.sock"))
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(str(run / "service.sock"))
    stream.listen()
    for sock in (datagram, stream):
        sock.setblocking(False)
    (run / "out").mkdir()
    yield datagram, stream
    datagram.close()
    stream.close()
    shutil.rmtree(run)


def _in_a_sandbox(inner: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """``inner`` (the launcher and what it runs) as a worker runs: inside bubblewrap."""
    iso = sandbox.choose("sandbox", network=False)
    # This test's Python, bound back when this checkout lives under /tmp.
    argv = iso.wrap(["true"], workdir=workdir, readonly=sandbox.program_hidden([sys.executable]))
    argv = [*argv[: argv.index("--") + 1], *inner]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _pairs_in_a_sandbox(host: tuple[socket.socket, socket.socket], confined: bool) -> dict:
    """PAIRS run behind the launcher, with or without its filter."""
    datagram, stream = (sock.getsockname() for sock in host)
    spec = json.dumps({"forwards": [], "confine": confined})
    python = sandbox.choose("sandbox").launcher
    inner = [python, "-I", "-S", str(sandbox.LAUNCHER_FILE), spec]
    done = _in_a_sandbox(
        [*inner, sys.executable, "-c", PAIRS, datagram, stream], Path(datagram).parent / "out"
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_filter
@needs_bwrap
def test_a_confined_worker_cannot_aim_a_unix_socket_at_a_path(host_sockets):
    assert _pairs_in_a_sandbox(host_sockets, confined=True) == {
        "sockets held at start": [],  # none inherited: nothing of ours to reuse
        # A datagram pair is the one kind that takes an address: refused, whatever its flags.
        "dgram": "EPERM",
        "dgram cloexec": "EPERM",
        "raw": "EPERM",
        # Pipes between the worker's own processes work; no address reaches past the peer.
        "stream pipe": "own",
        "stream sendto": "EISCONN",
        "stream connect": "EPROTOTYPE",
        "stream connect stream": "EISCONN",
        "stream peer got": "EAGAIN",
        "stream sendto after close": "EISCONN",
        "stream connect after close": "EPROTOTYPE",
        "seqpacket pipe": "own",
        "seqpacket sendto": "sent",  # the address is dropped: to its own peer
        "seqpacket connect": "EPROTOTYPE",
        "seqpacket connect stream": "EPROTOTYPE",
        "seqpacket peer got": "out",
        "seqpacket sendto after close": "EPIPE",
        "seqpacket connect after close": "EPROTOTYPE",
    }
    datagram, stream = host_sockets
    with pytest.raises(BlockingIOError):
        datagram.recv(16)  # nothing arrived
    with pytest.raises(BlockingIOError):
        stream.accept()


@needs_bwrap
def test_without_the_filter_a_datagram_pair_reaches_the_hosts_socket(host_sockets):
    # What the filter stops: the same program, unconfined, writes into the host's socket.
    found = _pairs_in_a_sandbox(host_sockets, confined=False)
    assert found["dgram sendto"] == found["raw sendto"] == "sent"
    datagram, _ = host_sockets
    assert datagram.recv(16) == b"out"


class _Digest(socketserver.StreamRequestHandler):
    """Reads to the end, answers the length and digest of what came, then that many bytes."""

    def handle(self) -> None:
        data = self.rfile.read()
        self.wfile.write(f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode())
        self.wfile.write(bytes(reversed(data)))


MANY = r"""
import hashlib, resource, socket, sys
port, count, size = map(int, sys.argv[1:4])
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))  # the forwarder keeps its own
payload = bytes(range(256)) * (size // 256)
links = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
for link in links:  # all open at once, each sent whole before any answer is read
    link.sendall(payload)
    link.shutdown(socket.SHUT_WR)
expected = f"{size} {hashlib.sha256(payload).hexdigest()}"
for link in links:
    answer = b""
    while chunk := link.recv(1 << 16):
        answer += chunk
    head, _, back = answer.partition(b"\n")
    assert head.decode() == expected, head
    assert back == bytes(reversed(payload)), len(back)
print("carried", count)
"""


def _carry(run: Path, count: int, size: int, nofile: int = 1024) -> subprocess.CompletedProcess:
    """MANY behind the launcher, in a sandbox, to a Unix socket of this host that answers."""
    server = socketserver.ThreadingUnixStreamServer(str(run / "upstream.sock"), _Digest)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    python = sandbox.choose("sandbox").launcher
    assert python is not None
    client = [sys.executable, "-c", MANY, "3128", str(count), str(size)]
    forwards = [("127.0.0.1", 3128, server.server_address, True)]
    # The forwarder keeps the launcher's descriptor limit; the client raises its own.
    limit = ["prlimit", f"--nofile={nofile}:1024", "--"]
    try:
        return _in_a_sandbox([*limit, *sandbox.launch(python, client, forwards)], run / "out")
    finally:
        server.shutdown()
        server.server_close()


@needs_bwrap
def test_the_forwarder_carries_many_connections_at_once_both_ways(host_sockets):
    done = _carry(Path(host_sockets[0].getsockname()).parent, 20, 512 * 1024)
    assert (done.returncode, done.stdout) == (0, "carried 20\n"), done.stderr


@needs_bwrap
def test_a_forwarder_out_of_descriptors_waits_and_carries_every_connection(host_sockets):
    # 40 connections, room for a handful at a time: the rest wait, queued, until one closes.
    done = _carry(Path(host_sockets[0].getsockname()).parent, 40, 4096, nofile=16)
    assert (done.returncode, done.stdout) == (0, "carried 40\n"), done.stderr
