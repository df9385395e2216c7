"""Hypothesis drives the control socket's request parser on a real daemon.

Every input (random bytes, deep or huge JSON, objects of the wrong shape, real operations
with random arguments) gets exactly one JSON answer with ``ok`` true or false; nothing
escapes the parser, and the daemon keeps serving and running its loop throughout.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.daemonproc import Daemon
from tests.loop.homes import make_home

OPS = [
    "search",
    "get",
    "history",
    "list",
    "count",
    "validate",
    "add",
    "update",
    "delete",
    "pending",
    "backfill",
    "snapshot",
    "nope",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
requests = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(min_value=1, max_value=60_000).map(lambda n: b"[" * n),
    st.integers(min_value=1, max_value=20_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda op, args: json.dumps({"op": op, "args": args}).encode(),
        st.sampled_from(OPS),
        st.dictionaries(
            st.sampled_from(["id", "query", "items", "text", "lanes", "dry_run", "x"]),
            json_values,
            max_size=3,
        ),
    ),
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = make_home(tmp_path_factory.mktemp("fuzz"), V3_MEMORY_ENABLED="false")
    proc = Daemon(home)
    try:
        proc.wait_for("control.listening", timeout=120)
        yield proc
        proc.signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        proc.kill()


def ask(path: Path, raw: bytes) -> dict:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(60)
        sock.connect(str(path))
        with contextlib.suppress(BrokenPipeError):  # refused at its limit; the answer waits
            sock.sendall(raw + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(raw=requests)
def test_every_request_gets_an_answer_and_the_daemon_stays_up(daemon: Daemon, raw: bytes) -> None:
    answer = ask(daemon.home / ".state" / "executive.sock", raw.replace(b"\n", b" "))
    assert isinstance(answer, dict) and isinstance(answer.get("ok"), bool)
    if not answer["ok"]:
        assert isinstance(answer["error"], str) and answer["error"]
    assert daemon.proc.poll() is None


def test_the_daemon_still_serves_after_the_fuzzing(daemon: Daemon) -> None:
    answer = ask(daemon.home / ".state" / "executive.sock", b'{"op": "pending"}')
    assert answer["ok"] is True and answer["result"]["count"] == 0
    assert not [r for r in daemon.records if r.get("event") in ("daemon.stopped", "loop.crashed")]
