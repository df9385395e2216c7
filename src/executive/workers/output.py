"""A worker's output, taken as it comes: into its run log, redacted and capped, or a tail.

The worker writes into a pipe that the daemon drains as it fills, so the worker never waits
on a full pipe and the daemon never holds more than a piece of what it printed (a worker
that printed 300 MB used to be read whole, decoded and redacted on the event loop: 145 MB
more resident, ``/healthz`` silent for 30 s). Redacting and writing happen in a worker
thread, a piece at a time, through :class:`executive.redact.Stream` (a secret cut in two
by a piece boundary is still caught). Past the cap one marker line is written and the rest
is read and dropped.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Protocol

import anyio
from anyio.abc import ByteReceiveStream

from executive.logs import get_logger
from executive.redact import Stream

log = get_logger(__name__)

CHUNK = 65536
# The line that ends a run log cut at its cap; the digest of the run says so when it sees it.
MARKER = "[executive: the output went past {cap:,} bytes here; the rest was dropped]"
MARKER_START = MARKER.split("{", 1)[0]


class Output(Protocol):
    """Where a run's output goes, a piece at a time, then once closed."""

    async def write(self, chunk: bytes) -> None: ...

    async def aclose(self) -> None: ...


async def drain(stream: ByteReceiveStream, output: Output) -> None:
    """Everything ``stream`` gives until its end, into ``output``."""
    async for chunk in stream:
        await output.write(chunk)


class RunLog:
    """The run log file, written in a worker thread: redacted, at most ``cap`` bytes, then the
    marker. Not thread-safe: one thread at a time, as :class:`LogOutput` calls it."""

    def __init__(self, path: Path, cap: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._cap = cap
        self._room = cap
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stream = Stream()
        self._line_start = True
        self.full = False

    def write(self, chunk: bytes) -> None:
        self._put(self._stream.feed(self._decoder.decode(chunk)))

    def close(self) -> None:
        try:
            if not self.full:
                self._put(self._stream.feed(self._decoder.decode(b"", final=True)))
                self._put(self._stream.close())
        finally:
            self._file.close()

    def _put(self, text: str) -> None:
        if self.full or not text:
            return
        data = text.encode()
        if len(data) <= self._room:
            self._file.write(data)
            self._room -= len(data)
            self._line_start = data.endswith(b"\n")
            return
        # Cut on a character boundary, then the marker on a line of its own.
        kept = data[: self._room].decode(errors="ignore").encode()
        at_start = kept.endswith(b"\n") if kept else self._line_start
        marker = MARKER.format(cap=self._cap).encode()
        self._file.write(kept + (b"" if at_start else b"\n") + marker + b"\n")
        self._file.flush()
        self.full = True


class LogOutput:
    """A run's output into its :class:`RunLog`, each piece handed to a worker thread; once the
    log is full, pieces are dropped here, on the loop, at the cost of reading them."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self._log = RunLog(path, cap)

    async def write(self, chunk: bytes) -> None:
        if self._log.full:
            return
        try:
            await anyio.to_thread.run_sync(self._log.write, chunk)
        except OSError as exc:  # a full disk: the worker runs on, its output is dropped
            log.error("worker.log_unwritable", path=str(self.path), error=str(exc))
            self._log.full = True

    async def aclose(self) -> None:
        try:
            await anyio.to_thread.run_sync(self._log.close)
        except OSError as exc:
            log.error("worker.log_unwritable", path=str(self.path), error=str(exc))


class Tail:
    """The last ``limit`` bytes of a run's output, in memory (a verifier's evidence)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._kept = bytearray()

    async def write(self, chunk: bytes) -> None:
        self._kept += chunk
        if len(self._kept) > self._limit:
            del self._kept[: len(self._kept) - self._limit]

    async def aclose(self) -> None:
        return None

    def text(self) -> str:
        return bytes(self._kept).decode(errors="replace")


def cut_at_cap(log_path: Path) -> bool:
    """Whether the run log at ``log_path`` ends with the marker (its output was cut)."""
    tail = len(MARKER) + 64
    with log_path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - tail))
        return MARKER_START.encode() in handle.read()
