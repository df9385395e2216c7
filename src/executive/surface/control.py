"""The memory surface over the daemon's control socket (``<home>/.state/executive.sock``).

The embedded store admits one process; while the daemon runs it holds it, so every other
``executive mem`` call (a person's, or the LLM engine's) is served by the daemon. One JSON
request line in, one JSON response line out.

The socket serves the operator, never a worker, and no request can stop it:

- it lives in the home's ``.state/`` (0700, checked with ``lstat``: a real folder of ours),
  which every sandbox hides; a deep home reaches it through ``/proc/self/fd/<dir>/…`` rather
  than a shared runtime folder, so there is no ``/tmp`` folder anyone could plant first;
- each peer is checked before a byte is read (:mod:`executive.peers`);
- a request is at most ``MAX_REQUEST`` bytes and ``MAX_DEPTH`` levels deep (checked before
  parsing), must arrive within ``REQUEST_SECONDS``, and anything wrong gets an error answer;
- no principle can be written, changed or deleted here: principles come only from the
  constitution sync (``constitution.md``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream, TaskStatus
from anyio.streams.buffered import BufferedByteReceiveStream

from executive import peers
from executive.files import parse_json
from executive.home import UnsafeHome, private_folder
from executive.logs import get_logger
from executive.surface.operations import MemorySurface, SurfaceError
from executive.unixpath import address

log = get_logger(__name__)

MAX_MESSAGE = 512 * 1024 * 1024  # a response: a complete listing of a large store is one message
MAX_REQUEST = 1024 * 1024
MAX_DEPTH = 32
REQUEST_SECONDS = 30.0
MAX_DRAIN = 16 * 1024 * 1024
PRINCIPLE = "principle"


def _prepare(path: Path) -> None:
    """A safe folder, and no stale socket in the way (anything else there is refused)."""
    private_folder(path.parent)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise UnsafeHome(f"{path} exists and is not a socket; refusing to replace it")
        path.unlink()


async def serve(
    surface: MemorySurface,
    path: Path,
    *,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    _prepare(path)
    old_umask = os.umask(0o177)  # the socket is born owner-only; no window before chmod
    try:
        with address(path) as where:
            listener = await anyio.create_unix_listener(where)
    finally:
        os.umask(old_umask)
    log.info("control.listening", socket=str(path))
    task_status.started()
    try:
        async with listener:
            await listener.serve(lambda stream: _guarded(surface, stream))
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.Path(path).unlink(missing_ok=True)


async def _guarded(surface: MemorySurface, stream: SocketStream) -> None:
    """One connection; nothing it does may end the listener (an exception here would)."""
    try:
        async with stream:
            await _handle(surface, stream)
    except Exception as exc:
        log.exception("control.connection_failed", error=repr(exc))


async def _handle(surface: MemorySurface, stream: SocketStream) -> None:
    await peers.settled()  # a worker starting now is registered before anyone is judged
    if (why := peers.refusal(stream.extra(SocketAttribute.raw_socket))) is not None:
        log.warning("control.peer_refused", reason=why)
        await _refuse(stream, f"refused: {why}")
        return
    request = None
    with anyio.move_on_after(REQUEST_SECONDS):
        request = await _read_request(stream)
    if request is None:
        return
    if isinstance(request, str):
        await _refuse(stream, f"bad request: {request}")
        return
    op, args = request
    try:
        _refuse_principles(op, args)
        if op in ("update", "delete"):
            await _refuse_principle_record(surface, args)
        response: dict[str, Any] = {"ok": True, "result": await surface.call(op, args)}
    except SurfaceError as exc:
        response = {"ok": False, "error": str(exc), "rejections": exc.rejections}
    except Exception as exc:
        log.exception("control.failed", op=op, error=repr(exc))
        response = {"ok": False, "error": f"{op} failed in the daemon: {exc!r}"}
    await _reply(stream, response)


async def _refuse(stream: SocketStream, error: str) -> None:
    """Answer ``error``, then read on (unread, bounded): closing with unread bytes resets the
    connection and loses the answer, so the client would not see why it was refused."""
    await _reply(stream, {"ok": False, "error": error})
    left = MAX_DRAIN
    with anyio.move_on_after(REQUEST_SECONDS):
        with contextlib.suppress(Exception):
            await stream.send_eof()
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            while left > 0:
                left -= len(await stream.receive(65536))


async def _read_request(stream: SocketStream) -> tuple[str, dict[str, Any]] | str | None:
    """(op, args), or why the request is bad, or None when the client left without one."""
    try:
        raw = await BufferedByteReceiveStream(stream).receive_until(b"\n", MAX_REQUEST)
    except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
        return None
    except anyio.DelimiterNotFound:
        return f"a request is one line of at most {MAX_REQUEST} bytes"
    try:
        request = parse_json(raw, max_bytes=MAX_REQUEST, max_depth=MAX_DEPTH)
    except ValueError as exc:
        return str(exc)
    if not isinstance(request, dict):
        return "a request is a JSON object"
    op, args = request.get("op"), request.get("args") or {}
    if not isinstance(op, str) or not op:
        return "'op' must be a non-empty string"
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        return "'args' must be an object"
    return op, args


def _is_principle(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    meta = item.get("metadata")
    fields = [item.get("type"), *(meta.get(k) for k in ("type",) if isinstance(meta, dict))]
    typed = any(isinstance(v, str) and v.strip().lower() == PRINCIPLE for v in fields)
    immutable = item.get("immutable") is True or (
        isinstance(meta, dict) and meta.get("immutable") is True
    )
    trigger = meta.get("trigger") if isinstance(meta, dict) else None
    return (
        typed or immutable or (isinstance(trigger, str) and trigger.strip().lower() == "spec_merge")
    )


def _refuse_principles(op: str, args: dict[str, Any]) -> None:
    if op == "add":
        items = args.get("items")
        if isinstance(items, list) and any(_is_principle(i) for i in items):
            raise SurfaceError(
                "principles cannot be written through the socket; they come only from "
                "constitution.md (the constitution sync)"
            )


async def _refuse_principle_record(surface: MemorySurface, args: dict[str, Any]) -> None:
    memory_id = args.get("id")
    if not isinstance(memory_id, str):
        return  # the surface reports the bad argument
    try:
        record = await surface.call("get", {"id": memory_id})
    except SurfaceError:
        return  # no such memory: the surface says so
    meta = record.get("metadata") or {}
    if record.get("immutable") is True or str(meta.get("type", "")).lower() == PRINCIPLE:
        raise SurfaceError(
            f"{memory_id} is a principle; principles change only through constitution.md"
        )


async def _reply(stream: SocketStream, response: dict[str, Any]) -> None:
    try:
        await stream.send(json.dumps(response, default=str).encode() + b"\n")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        log.warning("control.client_gone")


def daemon_listening(path: Path) -> bool:
    """Whether a daemon answers on ``path`` (a stale socket file does not count)."""
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            with address(path) as where:
                probe.connect(where)
        except OSError:
            return False
    return True


class RemoteSurface:
    """The same ``call(op, args)`` as :class:`MemorySurface`, served by the running daemon."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def call(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            with address(self.path) as where:
                stream = await anyio.connect_unix(where)
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
