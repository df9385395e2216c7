"""A worker's output on its way to the record: streamed, redacted as it passes, capped.

The worker writes into a pipe. The daemon reads it in chunks on the event loop and hands
each chunk to a sink in a worker thread, where it is decoded, scrubbed (a secret split
between two chunks included: :class:`executive.redact.StreamScrubber`) and written. Past
the cap one marker line is written and every further chunk is read and dropped on the
loop, so the worker never blocks on a full pipe and nothing grows with what it prints.
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path

import anyio

from executive.logs import get_logger
from executive.redact import redactor

log = get_logger(__name__)

CHUNK_BYTES = 64 * 1024
MARKER = "\n[executive: the output passed {limit} bytes; the rest was dropped]\n"
_MARKED = re.compile(r"\n?\[executive: the output passed \d+ bytes; the rest was dropped\]\n\Z")


def unmarked(tail: str) -> tuple[str, bool]:
    """The end of a run log without its marker line, and whether the log was capped."""
    found = _MARKED.search(tail)
    return (tail[: found.start()], True) if found else (tail, False)


def log_tail(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of a run log, decoded."""
    with path.open("rb") as handle:
        handle.seek(max(0, handle.seek(0, os.SEEK_END) - limit))
        return handle.read().decode(errors="replace")


class Redacting:
    """Decodes, scrubs and caps a stream of chunks; subclasses say where the text goes.
    ``write`` and ``close`` run in a worker thread (file writes, regular expressions); the
    pump reads ``full`` on the loop, to drop chunks without a thread hop."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.full = False
        self.closed = False
        self.written = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._scrubber = redactor().stream()

    def write(self, data: bytes) -> None:
        if not self.full:
            self._emit(self._scrubber.feed(self._decoder.decode(data)))

    def close(self) -> None:
        """What the scrubber held back, then the sink's own release; once only."""
        if self.closed:
            return
        self.closed = True
        if not self.full:
            self._emit(self._scrubber.feed(self._decoder.decode(b"", final=True)))
            self._emit(self._scrubber.flush())
        self._close()

    def _emit(self, text: str) -> None:
        data = text.encode()
        if self.limit is not None and self.written + len(data) > self.limit:
            room = self.limit - self.written
            # Cut on a character boundary: the record stays valid UTF-8.
            data = data[:room].decode(errors="ignore").encode()
            self._put(data + MARKER.format(limit=self.limit).encode())
            self.full = True
        else:
            self._put(data)
        self.written += len(data)

    def _put(self, data: bytes) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        """Release what the sink holds (after the last ``_put``)."""


class LogFile(Redacting):
    """A worker's run log: appended to, at most ``limit`` bytes plus the marker."""

    def __init__(self, path: Path, limit: int | None) -> None:
        super().__init__(limit)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")

    def _put(self, data: bytes) -> None:
        if data:
            self._file.write(data)

    def _close(self) -> None:
        self._file.close()


class Tail(Redacting):
    """The last ``keep`` bytes of the scrubbed output (a verifier's evidence)."""

    def __init__(self, keep: int, limit: int | None) -> None:
        super().__init__(limit)
        self._keep = keep
        self._kept = bytearray()

    def _put(self, data: bytes) -> None:
        self._kept += data
        del self._kept[: len(self._kept) - self._keep]

    def text(self) -> str:
        return self._kept.decode(errors="replace")


class Pump:
    """Reads a pipe's read end into a sink until end of file, or until told to finish."""

    def __init__(self, fd: int, sink: Redacting) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self.sink = sink
        self.total = 0  # bytes the worker printed, dropped ones included

    async def run(self) -> None:
        while await self._drain():
            await anyio.wait_readable(self.fd)

    async def finish(self) -> None:
        """Everything still in the pipe into the sink, then the pipe closed.

        Called once the worker's tree is gone: what it wrote is in the pipe by then, and a
        process that escaped and still holds the write end cannot keep the run open.
        """
        try:
            await self._drain()
        finally:
            os.close(self.fd)
        if self.sink.full:
            log.warning(
                "worker.output_capped",
                limit=self.sink.limit,
                printed_bytes=self.total,
            )

    async def _drain(self) -> bool:
        """Read what is there now; False at end of file."""
        while True:
            try:
                data = os.read(self.fd, CHUNK_BYTES)
            except BlockingIOError:
                return True
            if not data:
                return False
            self.total += len(data)
            if self.sink.full:
                await anyio.lowlevel.checkpoint()  # dropped, but the loop still gets turns
                continue
            # Shielded: a chunk read is a chunk written, even when the run is being ended
            # (the thread call would otherwise check for cancellation first and lose it).
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.sink.write, data)
