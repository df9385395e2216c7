"""Durable file primitives: atomic replace, flushed JSON-lines appends, tolerant reads, locks.

The daemon may be killed with SIGKILL at any instant; these are the only ways it writes
state that must survive that.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from executive.logs import get_logger

log = get_logger(__name__)


def try_lock(path: Path) -> int | None:
    """An exclusive lock on the file ``path`` (made 0600 if missing, never through a link),
    held until the returned descriptor is closed (the kernel releases it on any exit); None
    while another holder has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new, never half:
    temporary file in the same folder, flush, fsync, chmod, rename, then fsync the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_json(path: Path, value: Any, *, mode: int = 0o644) -> None:
    atomic_write(path, json.dumps(value, indent=2, sort_keys=False, default=str) + "\n", mode=mode)


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and make it durable before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        # A torn line from an earlier crash would glue onto this one; start a fresh line.
        if os.fstat(fd).st_size and not _ends_with_newline(path):
            line = "\n" + line
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


_reported: set[tuple[str, int]] = set()


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON-lines file, skipping a torn or corrupt line (a kill
    mid-append leaves one), reported once per process."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                record = _decode(raw)
            except ValueError as exc:
                _skipped(path, number, exc)
                continue
            if record is not None:
                yield record


class JsonlTail:
    """Reads a JSON-lines file a bit at a time: each ``read`` returns what was appended since.

    It remembers the byte offset it reached. When the file was replaced (another inode) or
    truncated (shorter than the offset), or is gone, it starts over from the beginning and
    says so, so that whatever the caller folds over the records starts over too. Torn lines
    are skipped as :func:`read_jsonl` skips them. A last line without its newline is taken
    when it parses (the next append starts a fresh line after it, see :func:`append_jsonl`)
    and otherwise left for the next read: it may still be being written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._start(None)

    def _start(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._offset = 0
        self._line = 0
        self._open_line = False  # the last line taken had no newline yet

    def skip_to_end(self) -> None:
        """Read on from the file's end: nothing it holds now is returned. Its lines are counted
        (a newline scan, not a parse), so a torn line found later is named by its number."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            self._start(None)  # made later: all of it is new
            return
        with handle:
            info = os.fstat(handle.fileno())
            self._start((info.st_dev, info.st_ino))
            last = b"\n"
            while chunk := handle.read(1 << 20):
                self._offset += len(chunk)
                self._line += chunk.count(b"\n")
                last = chunk[-1:]
        # A last line without its newline counts as read: the next append ends it first.
        self._open_line = last != b"\n"
        self._line += self._open_line

    def read(self) -> tuple[bool, list[dict[str, Any]]]:
        """``(start_over, records)``: when ``start_over``, ``records`` begin at the file's start."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            self._start(None)
            return True, []
        with handle:
            info = os.fstat(handle.fileno())
            identity = (info.st_dev, info.st_ino)
            start_over = identity != self._identity or info.st_size < self._offset
            if start_over:
                self._start(identity)
            handle.seek(self._offset)
            return start_over, self._records(handle)

    def _records(self, handle: Any) -> list[dict[str, Any]]:
        records = []
        for raw in handle:
            if self._open_line and raw == b"\n":
                # The newline an append put after a last line taken before it had one.
                self._open_line = False
                self._offset += len(raw)
                continue
            self._open_line = False
            try:
                record, error = _decode(raw), None
            except ValueError as exc:
                record, error = None, exc
            ended = raw.endswith(b"\n")
            if error is not None and not ended:
                break  # half a line: still being written, or torn (skipped once it ends)
            self._offset += len(raw)
            self._line += 1
            self._open_line = not ended
            if error is not None:
                _skipped(self.path, self._line, error)
            elif record is not None:
                records.append(record)
        return records


def _decode(raw: bytes) -> dict[str, Any] | None:
    """The record on one line; None for a blank line or a value that is not an object;
    ``ValueError`` (a JSON or UTF-8 error) for a torn or corrupt line."""
    raw = raw.strip()
    if not raw:
        return None
    record = json.loads(raw)
    return record if isinstance(record, dict) else None


def _skipped(path: Path, number: int, exc: ValueError) -> None:
    if (str(path), number) not in _reported:
        _reported.add((str(path), number))
        log.warning("jsonl.line_skipped", path=str(path), line=number, error=str(exc))


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
