"""Issue 37's break 6 against a real daemon: a worker that spends its whole process budget
keeps its network.

The sandbox's forwarder (the launcher's child that leads 127.0.0.1:3128 to the egress proxy)
used to start two threads per connection; threads count against the run's ``pids.max``, so
a worker that had started as many processes as it may found its next connection never
answered, and nothing said why. The daemon here gives each run the smallest budget it
allows; the worker forks until the kernel refuses, then goes out through the proxy, a new
connection each time.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.workers.isolation import cgroup, sandbox
from tests.daemonproc import Daemon
from tests.isolation import named_server
from tests.loop.homes import add_bundle, make_home, outputs

pytestmark = [
    pytest.mark.skipif(
        sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot build namespaces here"
    ),
    pytest.mark.skipif(
        cgroup.hierarchy().hierarchy is None, reason="no pids cgroup the daemon can make here"
    ),
]
# The system's own: a version manager's shim (pyenv's is a shell script) would spend the
# budget before the worker ran.
PYTHON = shutil.which("python3", path="/usr/bin:/bin")

FLOOD = r"""
import errno, json, os, socket, sys

outside = int(sys.argv[1])
proxy = ("127.0.0.1", int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1]))
hold, release = os.pipe()
started, refused = 0, None
while refused is None:
    try:
        pid = os.fork()
    except OSError as exc:  # the budget is spent
        refused = errno.errorcode[exc.errno]
        break
    if pid == 0:
        os.close(release)
        os.read(hold, 1)  # held until the parent is done
        os._exit(0)
    started += 1
found = {"fork": refused, "started some": started > 0}
for n in range(3):  # a new connection each time
    try:
        with socket.create_connection(proxy, timeout=30) as s:
            s.sendall(f"GET http://127.0.0.1:{outside}/{n} HTTP/1.1\r\nHost: 127.0.0.1:{outside}\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        found[f"request {n}"] = data.decode().splitlines()[-1]
    except OSError as exc:
        found[f"request {n}"] = type(exc).__name__
os.close(release)
for _ in range(started):
    os.wait()
json.dump(found, open("flood.json", "w"))
"""


@pytest.fixture(scope="module")
def flooded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    if PYTHON is None:
        pytest.skip("no system python3")
    tmp = tmp_path_factory.mktemp("flood")
    outside = named_server("outside")
    port = outside.server_address[1]
    home = make_home(
        tmp,
        EXECUTIVE_WORKER_ISOLATION="sandbox",
        EXECUTIVE_WORKER_MAX_PROCESSES="8",  # the least it allows
        EXECUTIVE_WORKER_ALLOW_HOSTS=f"127.0.0.1:{port}",
    )
    folder = add_bundle(
        home,
        "flood",
        "",
        command=[PYTHON, "{bundle_dir}/flood.py", str(port)],
        max_attempts=1,
        verifiers=[{"builtin": "output_exists", "path": "flood.json"}],
    )
    (folder / "flood.py").write_text(FLOOD)
    daemon = Daemon(home)
    try:
        daemon.wait_for("goal.completed", timeout=120, bundle="flood")
        daemon.signal(signal.SIGTERM)
        code = daemon.wait(60)
    finally:
        daemon.kill()
        outside.shutdown()
        outside.server_close()
    yield {"out": outputs(home) / "flood", "daemon": daemon, "code": code}


def test_a_worker_that_spent_its_process_budget_still_reaches_the_allowed_host(flooded):
    assert flooded["code"] == 0, flooded["daemon"].stderr
    found = json.loads((Path(flooded["out"]) / "flood.json").read_text())
    assert found == {
        "fork": "EAGAIN",  # pids.max said no more
        "started some": True,
        "request 0": "outside /0",
        "request 1": "outside /1",
        "request 2": "outside /2",
    }
