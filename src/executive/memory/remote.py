"""The memory surface over the daemon's control socket (``<home>/.state/executive.sock``).

The embedded store admits one process; while the daemon runs it holds it, so every other
``executive mem`` call (a person's, or the LLM engine's) is served by the daemon. One JSON
request line in, one JSON response line out. The socket is mode 0600 in a 0700 folder.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream, TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream

from executive.logs import get_logger
from executive.memory.surface import MemorySurface, SurfaceError

log = get_logger(__name__)

MAX_MESSAGE = 512 * 1024 * 1024  # a complete listing of a large store is one message


async def serve(
    surface: MemorySurface,
    path: Path,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``surface`` on a Unix socket until cancelled."""
    folder = anyio.Path(path.parent)
    await folder.mkdir(parents=True, exist_ok=True)
    # The folder may be a shared runtime folder (a deep home's socket): keep it ours alone.
    if (await folder.stat()).st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user; refusing to put the socket there")
    await folder.chmod(0o700)
    await anyio.Path(path).unlink(missing_ok=True)
    old_umask = os.umask(0o177)  # the socket is born owner-only; no window before chmod
    try:
        listener = await anyio.create_unix_listener(path)
    finally:
        os.umask(old_umask)
    log.info("control.listening", socket=str(path))
    task_status.started()
    try:
        async with listener:
            await listener.serve(lambda stream: _handle(surface, stream))
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.Path(path).unlink(missing_ok=True)


async def _handle(surface: MemorySurface, stream: SocketStream) -> None:
    async with stream:
        try:
            raw = await BufferedByteReceiveStream(stream).receive_until(b"\n", MAX_MESSAGE)
            request = json.loads(raw)
            op, args = request["op"], request.get("args") or {}
        except (anyio.EndOfStream, anyio.IncompleteRead):
            return
        except (ValueError, KeyError, TypeError) as exc:
            await _reply(stream, {"ok": False, "error": f"bad request: {exc}"})
            return
        try:
            result = await surface.call(op, args)
            response: dict[str, Any] = {"ok": True, "result": result}
        except SurfaceError as exc:
            response = {"ok": False, "error": str(exc), "rejections": exc.rejections}
        except Exception as exc:
            log.exception("control.failed", op=op, error=repr(exc))
            response = {"ok": False, "error": f"{op} failed in the daemon: {exc!r}"}
        await _reply(stream, response)


async def _reply(stream: SocketStream, response: dict[str, Any]) -> None:
    try:
        await stream.send(json.dumps(response, default=str).encode() + b"\n")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        log.warning("control.client_gone")


def daemon_listening(path: Path) -> bool:
    """Whether a daemon answers on ``path`` (a stale socket file does not count)."""
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


class RemoteSurface:
    """The same ``call(op, args)`` as :class:`MemorySurface`, served by the running daemon."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def call(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            stream = await anyio.connect_unix(self.path)
        except OSError as exc:
            raise SurfaceError(f"cannot reach the daemon at {self.path}: {exc}") from exc
        async with stream:
            await stream.send(json.dumps({"op": op, "args": args or {}}).encode() + b"\n")
            try:
                raw = await BufferedByteReceiveStream(stream).receive_until(b"\n", MAX_MESSAGE)
            except (anyio.EndOfStream, anyio.IncompleteRead) as exc:
                raise SurfaceError(f"the daemon closed the connection during {op}") from exc
        response = json.loads(raw)
        if not response.get("ok"):
            raise SurfaceError(response.get("error", "unknown error"), response.get("rejections"))
        return response["result"]
