"""Durable file primitives: atomic replace, flushed JSON-lines appends, tolerant reads.

The daemon may be killed with SIGKILL at any instant; these are the only ways it writes
state that must survive that.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from executive.logs import get_logger

log = get_logger(__name__)


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new, never half.

    Temporary file in the same folder, flush, fsync, chmod, rename, then fsync the folder.
    """
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
    """Yield the records of a JSON-lines file, skipping a torn or corrupt line.

    A kill mid-append leaves a torn line; it is skipped (and reported once per process).
    """
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                if (str(path), number) not in _reported:
                    _reported.add((str(path), number))
                    log.warning("jsonl.line_skipped", path=str(path), line=number, error=str(exc))
                continue
            if isinstance(record, dict):
                yield record


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
