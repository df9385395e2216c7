"""The control socket's transport: its folder, its address, its peer check (real sockets,
real processes, real bwrap). The surface behind it is a recorder: the store is not the point
here (the daemon tests in tests/security drive the real one)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from executive import peers
from executive.home import UnsafeHome, private_folder
from executive.surface.control import RemoteSurface, serve
from executive.surface.operations import SurfaceError
from executive.workers.isolation import sandbox

pytestmark = pytest.mark.anyio

CLIENT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"op": "count"}\\n')
print(s.makefile().readline(), end="")
"""


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append((op, args or {}))
        if op == "get":
            return {"id": args["id"], "metadata": {"type": "principle"}} if args else {}
        return {"op": op}


async def _serving(path: Path, surface: Recorder, body) -> Any:
    async with anyio.create_task_group() as tg:
        await tg.start(serve, surface, path)
        try:
            return await body()
        finally:
            tg.cancel_scope.cancel()


def test_the_socket_folder_is_made_private(tmp_path):
    folder = tmp_path / ".state"
    private_folder(folder)
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o700


def test_a_planted_symlink_for_the_folder_is_refused_and_its_target_left_alone(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    target.chmod(0o755)
    (tmp_path / ".state").symlink_to(target)
    with pytest.raises(UnsafeHome, match="not a plain folder"):
        private_folder(tmp_path / ".state")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_file_or_another_users_folder_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeHome):
        private_folder(tmp_path / "file")
    if os.geteuid() != 0:
        pytest.skip("making a folder of another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    with pytest.raises(UnsafeHome, match="belongs to uid 65534"):
        private_folder(theirs)


async def test_a_deep_home_keeps_its_socket_under_state(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 6) / ".state"
    deep.parent.mkdir(parents=True)
    path = deep / "executive.sock"
    assert len(os.fsencode(path)) > 108
    surface = Recorder()

    async def body() -> dict[str, Any]:
        assert stat.S_ISSOCK(path.lstat().st_mode)
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600
        return await RemoteSurface(path).call("count")

    assert await _serving(path, surface, body) == {"op": "count"}


async def test_something_else_at_the_socket_path_is_not_replaced(tmp_path):
    (tmp_path / ".state").mkdir(mode=0o700)
    path = tmp_path / ".state" / "executive.sock"
    path.write_text("not a socket")
    with pytest.raises(UnsafeHome, match="not a socket"):
        await serve(Recorder(), path)  # type: ignore[arg-type]
    assert path.read_text() == "not a socket"


async def test_principles_cannot_be_added_changed_or_deleted_through_the_socket(tmp_path):
    path = tmp_path / ".state" / "executive.sock"
    surface = Recorder()

    async def body() -> list[str]:
        errors = []
        remote = RemoteSurface(path)
        for op, args in (
            ("add", {"items": [{"text": "x", "metadata": {"type": "Principle "}}]}),
            ("add", {"items": [{"text": "x", "immutable": True, "metadata": {}}]}),
            ("add", {"items": [{"text": "x", "metadata": {"trigger": "spec_merge"}}]}),
            ("update", {"id": "m1", "text": "Always force-push."}),
            ("delete", {"id": "m1"}),
        ):
            with pytest.raises(SurfaceError) as caught:
                await remote.call(op, args)
            errors.append(str(caught.value))
        return errors

    errors = await _serving(path, surface, body)
    assert all("constitution.md" in e for e in errors)
    assert [op for op, _ in surface.calls if op in ("add", "update", "delete")] == []


async def _client(
    path: Path, env: dict[str, str] | None = None, wrap: list[str] = (), worker: bool = False
) -> str:
    script = path.parent.parent / "client.py"
    script.write_text(CLIENT)
    with peers.spawning() if worker else contextlib.nullcontext():  # as isolation.process does
        process = await anyio.open_process(
            [*wrap, sys.executable, str(script), str(path)],
            env={"PATH": os.environ["PATH"], **(env or {})},
            start_new_session=True,
        )
        if worker:
            peers.register(process.pid)
    try:
        assert process.stdout is not None
        chunks = [chunk async for chunk in process.stdout]
        await process.wait()
    finally:
        peers.unregister(process.pid)
    return b"".join(chunks).decode()


async def test_the_operator_is_served_and_workers_are_refused(tmp_path):
    path = tmp_path / ".state" / "executive.sock"
    surface = Recorder()

    async def body() -> dict[str, str]:
        answers = {"operator": await _client(path)}
        answers["marked"] = await _client(path, {"GOAL_CONTRACT": "contract-1"})
        # A worker's own process and its children, with no mark: the group and tree tell.
        answers["worker"] = await _client(path, worker=True)
        answers["worker child"] = await _client(path, wrap=["sh", "-c", '"$0" "$@"'], worker=True)
        if sandbox.choose("auto").mode == "sandbox":
            # The socket's folder shown to a sandbox on purpose: the namespaces still tell.
            bwrap = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--unshare-user"]
            bwrap += (
                ["--unshare-pid", "--cap-drop", "ALL"] if os.geteuid() == 0 else ["--unshare-pid"]
            )
            bwrap += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
            # Named again after /dev: the test's folder may live in /dev/shm.
            bwrap += ["--ro-bind", str(tmp_path), str(tmp_path), "--"]
            answers["sandboxed"] = await _client(path, wrap=bwrap)
        return answers

    answers = await _serving(path, surface, body)
    assert json.loads(answers["operator"]) == {"ok": True, "result": {"op": "count"}}
    assert "worker's run mark" in json.loads(answers["marked"])["error"]
    assert "worker's process tree" in json.loads(answers["worker"])["error"]
    assert "worker's process tree" in json.loads(answers["worker child"])["error"]
    if "sandboxed" in answers:
        assert "another pid namespace" in json.loads(answers["sandboxed"])["error"]
    assert [op for op, _ in surface.calls] == ["count"]


async def test_a_worker_that_connects_before_its_pid_is_registered_is_still_refused(tmp_path):
    """The race a fast worker could win: it connects while the daemon is still starting it
    (the loop serves meanwhile). Here the window is held open until the worker has sent its
    request; its answer is read once it is registered."""
    path = tmp_path / ".state" / "executive.sock"
    script = tmp_path / "early.py"
    script.write_text(
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        's.sendall(b\'{"op": "count"}\\n\')\n'
        "print('sent', flush=True)\n"
        "print(s.makefile().readline(), end='', flush=True)\n"
    )

    async def body() -> dict[str, Any]:
        with peers.spawning():
            process = await anyio.open_process(
                [sys.executable, str(script), str(path)],
                env={"PATH": os.environ["PATH"]},
                start_new_session=True,
            )
            assert process.stdout is not None
            lines = BufferedByteReceiveStream(process.stdout)
            assert await lines.receive_until(b"\n", 100) == b"sent"  # connected and asked
            peers.register(process.pid)
        try:
            answer = await lines.receive_until(b"\n", 10_000)
            await process.wait()
        finally:
            peers.unregister(process.pid)
        return json.loads(answer)

    answer = await _serving(path, Recorder(), body)
    assert "worker's process tree" in answer["error"]
