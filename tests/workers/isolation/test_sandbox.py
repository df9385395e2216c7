"""The isolation modes with real bwrap and a real unprivileged account, as a worker sees them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from executive.workers.isolation import launcher, sandbox
from executive.workers.isolation.sandbox import Isolation, IsolationUnavailable

BWRAP_WORKS = sandbox.choose("auto").mode == "sandbox"
needs_bwrap = pytest.mark.skipif(not BWRAP_WORKS, reason="bubblewrap cannot build namespaces here")
PROBE = r"""
out=$1; home=$2
cat "$home/.env.executive" 2>&1 | head -1
ls -A "$home" 2>/dev/null | wc -l
ls -A "$home/.state" 2>/dev/null | wc -l
test -e "$home/.state/d.sock" && echo socket-there || echo socket-gone
echo ok > "$out/written.txt" && echo wrote-out
touch "$home/../outside.txt" 2>&1 | tail -1
echo private > /tmp/private.txt
grep -c : /proc/net/dev
echo "secret=${DAEMON_SECRET:-absent}"
ps -e --no-headers | wc -l
(head -c 1000000 /dev/zero > "$home/planted") 2>&1 | tail -1
(echo x > /dev/planted) 2>&1 | tail -1
"""


@pytest.fixture
def tree_root(tmp_path: Path):
    """A scratch tree outside /tmp (which every sandbox replaces), so the home is hidden by
    its own tmpfs, as a real home is."""
    root = Path(tempfile.mkdtemp(prefix="executive-sbx-", dir="/var/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    home, out = tmp_path / "home", tmp_path / "out"
    (home / ".state").mkdir(parents=True)
    (home / ".env.executive").write_text("GITHUB_TOKEN=plain-secret-value\n")
    out.mkdir()
    import socket

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(home / ".state" / "d.sock"))
    listener.listen()
    return home, out


@needs_bwrap
def test_the_sandbox_hides_the_home_state_and_socket_and_keeps_writes_in_the_output(tree_root):
    tmp_path = tree_root
    home, out = _tree(tmp_path)
    iso = sandbox.choose("sandbox", network=False, hidden=[home, home / ".state"])
    argv = iso.wrap(["sh", "-c", PROBE, "probe", str(out), str(home)], workdir=out)
    done = subprocess.run(
        argv, cwd=out, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=False
    )
    lines = done.stdout.splitlines()
    assert "No such file or directory" in lines[0]  # .env.executive is not there
    assert lines[1:3] == ["0", "0"]  # the home and .state list empty
    assert lines[3] == "socket-gone"  # with its folder
    assert lines[4] == "wrote-out" and (out / "written.txt").read_text() == "ok\n"
    assert "Read-only file system" in lines[5] and not (tmp_path / "outside.txt").exists()
    assert not Path("/tmp/private.txt").exists()
    assert lines[6] == "1"  # only lo with the network off
    assert lines[7] == "secret=absent"
    assert int(lines[8]) <= 6  # its own pid namespace: bwrap, sh and the probe's few
    # The empty home is not memory to fill: nothing can be written into it.
    assert "Permission denied" in lines[9]
    assert "Read-only file system" in lines[10]  # nor /dev (a tmpfs too)
    assert not (home / ".env.executive").read_text().startswith("x")


@needs_bwrap
@pytest.mark.parametrize("network", [True, False])
def test_a_sandbox_never_has_the_hosts_interfaces(tmp_path, network):
    # The network setting decides whether a run gets an egress route, never the host's
    # interfaces: only the sandbox's own loopback is there.
    _, out = _tree(tmp_path)
    iso = sandbox.choose("sandbox", network=network)
    done = subprocess.run(
        iso.wrap(["sh", "-c", "grep -c : /proc/net/dev"], workdir=out),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "1\n"


@needs_bwrap
def test_a_worker_sees_its_own_folder_and_no_other_bundles_or_peer_homes(tree_root, home):
    from executive.settings import load_settings

    outputs, peer = tree_root / "outputs", tree_root / "peer"
    (outputs / "mine").mkdir(parents=True)
    (outputs / "theirs").mkdir()
    (outputs / "theirs" / "CLAUDE.md").write_text("another bundle's pack\n")
    peer.mkdir()
    (peer / ".env.executive").write_text("GITHUB_TOKEN=peer-secret-value\n")
    settings = load_settings(
        home,
        worker_isolation="sandbox",
        output_root=outputs,
        peer_homes=str(peer),
        sandbox_hide=str(tree_root / "hidden"),
    )
    (tree_root / "hidden").mkdir()
    (tree_root / "hidden" / "key").write_text("x")
    iso = sandbox.from_settings(settings)
    script = f"ls -A {outputs}; ls -A {peer} | wc -l; ls -A {tree_root}/hidden | wc -l; pwd"
    done = subprocess.run(
        iso.wrap(["sh", "-c", script], workdir=outputs / "mine"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["mine", "0", "0", str(outputs / "mine")]


UNIX = r"""
import os, socket, stat, sys
print("visible", stat.S_ISSOCK(os.stat(sys.argv[1]).st_mode))
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1])
    print("connected")
except OSError as exc:
    print(type(exc).__name__, exc.errno)
a, b = socket.socketpair()  # a pipe between its own processes is fine
a.sendall(b"x")
print("pair", b.recv(1).decode())
socket.socket(socket.AF_INET).close()
print("inet ok")
"""


@needs_bwrap
@pytest.mark.skipif(not sandbox.CONFINED, reason="no seccomp filter for this machine")
def test_no_unix_socket_the_sandbox_can_see_can_be_reached(tree_root):
    # A database's or a container engine's socket somewhere under the read-only "/".
    tmp_path = tree_root
    _, out = _tree(tmp_path)
    (tmp_path / "run").mkdir()
    import socket

    visible = socket.socket(socket.AF_UNIX)
    visible.bind(str(tmp_path / "run" / "service.sock"))
    visible.listen()
    visible.setblocking(False)
    iso = sandbox.choose("sandbox", network=False)
    argv = iso.wrap(["python3", "-c", UNIX, str(tmp_path / "run" / "service.sock")], workdir=out)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    expected = ["visible True", "PermissionError 1", "pair x", "inet ok"]
    assert done.stdout.splitlines() == expected, done.stderr
    with pytest.raises(BlockingIOError):
        visible.accept()  # nothing ever arrived


@needs_bwrap
def test_as_root_every_capability_is_dropped(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the root case needs root")
    _, out = _tree(tmp_path)
    iso = sandbox.choose("sandbox")
    done = subprocess.run(
        iso.wrap(["sh", "-c", "grep CapEff /proc/self/status; mount -o remount,rw /"], workdir=out),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "CapEff:\t0000000000000000" in done.stdout
    assert done.returncode != 0


def test_a_required_mode_that_cannot_run_is_refused_with_the_reason():
    with pytest.raises(IsolationUnavailable, match="sandbox"):
        sandbox.choose("sandbox", bwrap="/nonexistent/bwrap")
    with pytest.raises(IsolationUnavailable, match="no account"):
        sandbox.choose("user", account="no-such-account-here")
    none = sandbox.choose("none")
    assert none.mode == "none" and "unsafe" in none.reason
    assert none.wrap(["true"], workdir=Path("/")) == ["true"]


def test_auto_falls_back_to_an_account_or_none_and_says_why():
    chosen = sandbox.choose("auto", bwrap="/nonexistent/bwrap")
    assert chosen.mode in ("user", "none")
    assert "bubblewrap" in chosen.reason or "bwrap" in chosen.reason


@pytest.mark.skipif(
    os.geteuid() != 0 or sandbox.account_ids("nobody") is None, reason="needs root and nobody"
)
def test_user_mode_runs_as_the_account_which_cannot_read_the_home(tree_root):
    import anyio

    from executive.workers.isolation.process import supervise
    from executive.workers.output import LogFile

    tmp_path = tree_root
    tmp_path.chmod(0o711)  # the account may pass through to its folder, not list it
    home, out = _tree(tmp_path)
    home.chmod(0o700)
    iso = sandbox.choose("user", account="nobody")
    assert isinstance(iso, Isolation) and iso.ids is not None
    os.chown(out, *iso.ids)
    log = tmp_path / "log"

    async def main() -> None:
        await supervise(
            ["sh", "-c", f"id -u; cat {home}/.env.executive; echo x > {out}/mine.txt"],
            cwd=out,
            env={"PATH": "/usr/bin:/bin"},
            timeout_seconds=30,
            sink=LogFile(log, None),
            isolation=iso,
        )

    anyio.run(main)
    text = log.read_text()
    assert text.splitlines()[0] == str(iso.ids[0])
    assert "Permission denied" in text and "plain-secret-value" not in text
    assert (home / ".env.executive").read_text() == "GITHUB_TOKEN=plain-secret-value\n"
    assert (out / "mine.txt").stat().st_uid == iso.ids[0]


def test_auto_skips_the_account_when_it_cannot_reach_the_output_folders(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    ids = sandbox.account_ids("nobody")
    if ids is None:
        pytest.skip("no nobody account")
    assert not sandbox.reachable(private / "outputs", *ids)
    chosen = sandbox.choose("auto", bwrap="/nonexistent/bwrap", workdir=private / "outputs")
    assert chosen.mode == "none"
    with pytest.raises(IsolationUnavailable):
        sandbox.choose("user", workdir=private / "outputs")


@needs_bwrap
def test_a_worker_program_under_the_hosts_tmp_is_bound_back_and_runs(tree_root):
    # A checkout under /tmp keeps the bundled Claude Code CLI in its venv there; the
    # sandbox's /tmp is its own, so without the bind the worker is "No such file".
    program_dir = Path(tempfile.mkdtemp(prefix="executive-prog-", dir="/tmp"))
    try:
        program = program_dir / "worker"
        program.write_text('#!/bin/sh\necho ran-from-tmp\nls -A "$(dirname "$0")"\n')
        program.chmod(0o755)
        (program_dir / "beside.txt").write_text("not for the worker")
        out = tree_root / "out"
        out.mkdir()
        iso = sandbox.choose("sandbox")
        assert sandbox.program_hidden([str(program)]) == [program.resolve()]
        assert sandbox.program_hidden(["sh"]) == []  # /bin/sh is there already
        without = subprocess.run(iso.wrap([str(program)], workdir=out), capture_output=True)
        assert without.returncode != 0  # what a checkout under /tmp got before
        ran = subprocess.run(
            iso.wrap([str(program)], workdir=out, readonly=sandbox.program_hidden([str(program)])),
            capture_output=True,
            text=True,
            check=False,
        )
        # The program runs; the folder it came from shows only the program, not its neighbours.
        assert ran.stdout.split() == ["ran-from-tmp", "worker"], ran.stderr
    finally:
        shutil.rmtree(program_dir, ignore_errors=True)


def test_the_launchers_command_line_is_short_and_names_it_and_the_worker(tmp_path):
    """What `ps` shows of every sandboxed worker: the launcher's file, then the worker."""
    argv = sandbox.launch("/usr/bin/python3", ["claude", "-p", "the goal"])
    line = " ".join(argv)
    assert argv[:4] == ["/usr/bin/python3", "-I", "-S", str(Path(launcher.__file__).resolve())]
    assert line.endswith("claude -p the goal")
    assert "executive/workers/isolation/launcher.py" in line and len(line) < 300
    # Bound back only where the sandbox would hide it.
    assert sandbox.launcher_hidden([]) == (
        [sandbox.LAUNCHER_FILE] if sandbox.LAUNCHER_FILE.is_relative_to("/tmp") else []
    )
    assert sandbox.launcher_hidden([sandbox.LAUNCHER_FILE.parent]) == [sandbox.LAUNCHER_FILE]
