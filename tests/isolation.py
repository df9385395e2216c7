"""What tests of worker isolation share: the modes a worker runs under on this machine, the
processes a worker left behind, a loopback HTTP server that answers with its name, and a
request made as another account."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from executive.workers import sandbox

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


def named_server(name: str) -> http.server.ThreadingHTTPServer:
    """A server on this host's loopback, serving in a thread, that answers "<name> <path>"."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Named)
    server.name = name  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


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
