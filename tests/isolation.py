"""What tests of worker isolation share: the modes a worker runs under on this machine, the
processes a worker left behind, a loopback HTTP server that answers with its name, a TCP
server that records every byte it was sent, an address of this machine's own network, and a
request made as another account."""

from __future__ import annotations

import fcntl
import http.server
import os
import shutil
import socket
import socketserver
import struct
import subprocess
import threading
from pathlib import Path

import pytest

from executive.workers.isolation import sandbox

# Each mode a test runs a worker under, skipped (with why) where this machine cannot.
MODES = [
    pytest.param(
        "sandbox",
        marks=pytest.mark.skipif(
            sandbox.choose("auto").mode != "sandbox",
            reason="bubblewrap cannot build namespaces on this machine",
        ),
    ),
    pytest.param(
        "user",
        marks=pytest.mark.skipif(
            os.geteuid() != 0 or sandbox.account_ids("nobody") is None,
            reason="user mode needs a root daemon and the nobody account",
        ),
    ),
    "none",
]


def alive_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmd and state != "Z":
            found.append(int(entry.name))
    return found


class _Named(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"{self.server.name} {self.path}".encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def named_server(name: str, host: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """A server on this host's loopback (or ``host``), serving in a thread, that answers
    "<name> <path>"."""
    server = http.server.ThreadingHTTPServer((host, 0), _Named)
    server.name = name  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _Recording(socketserver.BaseRequestHandler):
    """One request answered, then every byte the connection brings until its other end
    closes, recorded: a second request sent on the connection would show."""

    def handle(self) -> None:
        data = b""
        while not _whole(data) and (chunk := self.request.recv(65536)):
            data += chunk
        if _whole(data):
            body = b"recorded"
            self.request.sendall(
                b"HTTP/1.1 200 OK\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            self.request.shutdown(socket.SHUT_WR)
            while chunk := self.request.recv(65536):
                data += chunk
        self.server.received.append(data)  # type: ignore[attr-defined]


def _whole(data: bytes) -> bool:
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        return False
    lengths = [
        line.split(b":", 1)[1]
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    ]
    return len(body) >= (int(lengths[0]) if lengths else 0)


def recording_server() -> socketserver.ThreadingTCPServer:
    """A server on this host's loopback, serving in a thread, whose ``received`` lists what
    each connection brought."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Recording)
    server.daemon_threads = True
    server.received = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def interface_address() -> str | None:
    """An IPv4 address of one of this machine's non-loopback interfaces, read by ioctl (not
    the way the egress proxy reads them), or None when it has none."""
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()))
            except OSError:
                continue  # no IPv4 address (SIOCGIFADDR)
        address = socket.inet_ntoa(packed[20:24])
        if not address.startswith("127."):
            return address
    return None


FETCH = """
import sys, urllib.error, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=30).status)
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode().strip())
"""


def fetch_as(uid: int, url: str) -> str:
    """What ``url`` answers a process of ``uid`` (needs root): its status, and the text of an
    error. Run with the system's Python, which any account may run."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 for another account")
    done = subprocess.run(
        [python, "-c", FETCH, url],
        capture_output=True,
        text=True,
        check=True,
        user=uid,
        group=uid,
        extra_groups=[],
    )
    return done.stdout.strip()
