"""What a finished worker left behind, read from disk: its folder's changes and its run log.

The pure digest is :mod:`executive.workers.experience`; this is its edge. The folder is
looked at with ``lstat`` only (a planted link is noted, never followed), and the run log is
read line by line with every line bounded, so a log of one enormous line costs what the
limit says, not what the worker printed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from executive.logs import get_logger
from executive.workers import output, runlog
from executive.workers.experience import (
    MAX_NOTES,
    Experience,
    FileChange,
    bounded_files,
    digest,
    normal_path,
    of_command,
    within,
)

log = get_logger(__name__)

# Path -> (modification time, size): enough to tell a file changed.
Snapshot = dict[str, tuple[int, int]]
SKIP_FOLDERS = frozenset({".git", ".executive"})
# The most of a run log the digest reads (the log itself is capped where it is written).
MAX_READ_BYTES = 64 * 1024 * 1024
OUTPUT_TAIL_BYTES = 8192


def snapshot(folder: Path, skip_files: frozenset[str] = frozenset()) -> Snapshot:
    """Every file under ``folder`` but ``.git``/``.executive`` and ``skip_files`` (top level)."""
    seen: Snapshot = {}
    for root, dirs, files in os.walk(folder):  # never descends into a linked folder
        dirs[:] = [d for d in dirs if d not in SKIP_FOLDERS]
        for name in files:
            path = Path(root) / name
            if path.parent == folder and name in skip_files:
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            seen[str(path.relative_to(folder))] = (info.st_mtime_ns, info.st_size)
    return seen


def changes(before: Snapshot, after: Snapshot) -> list[FileChange]:
    """What a run changed in its folder, caches and other noise left out."""
    found = [
        FileChange(path=p, change="created" if p not in before else "modified")
        for p, stamp in after.items()
        if before.get(p) != stamp
    ]
    found += [FileChange(path=p, change="deleted") for p in before if p not in after]
    return [c for c in found if normal_path(c.path) == c.path]


def read(
    log_path: Path | None,
    *,
    vendor: str,
    workdir: Path,
    folder_changes: list[FileChange],
    command: str,
    exit_code: int | None,
) -> Experience:
    """The experience of one attempt; never raises (an unreadable log gives a partial one)."""
    try:
        # The marker line is the daemon's, not the worker's: never its last words.
        raw = output.log_tail(log_path, OUTPUT_TAIL_BYTES) if log_path is not None else ""
        tail, capped = output.unmarked(raw)
        if vendor == "claude":
            found = _claude(log_path, workdir, folder_changes, tail)
        else:
            found = of_command(
                command=command, exit_code=exit_code, output=tail, changes=folder_changes
            )
        return _capped(found) if capped else found
    except OSError as exc:
        log.warning("experience.log_unreadable", path=str(log_path), error=str(exc))
        return Experience(
            source="command" if vendor != "claude" else "stream-json",
            files=bounded_files(folder_changes)[0],
            complete=False,
            notes=[f"the run log could not be read: {type(exc).__name__}"],
        )


def _claude(
    log_path: Path | None, workdir: Path, folder_changes: list[FileChange], tail: str
) -> Experience:
    if log_path is None:
        return Experience(source="stream-json", complete=False, notes=["no run log"])
    with log_path.open("rb") as handle:
        reading = runlog.read_lines(lines(handle))
    if reading.kind == "unknown":
        # Not Claude Code's stream-json at all (the CLI failed before it began): its output.
        return of_command(
            command="claude", exit_code=None, output=tail, changes=folder_changes
        ).model_copy(update={"complete": False, "notes": ["the run log holds no stream-json"]})
    return digest(reading, relative=within(str(workdir)), changes=folder_changes)


def _capped(found: Experience) -> Experience:
    note = "the run log stops at its cap (EXECUTIVE_WORKER_LOG_MAX_BYTES): the end was dropped"
    notes = [note, *found.notes][:MAX_NOTES]
    return found.model_copy(update={"complete": False, "notes": notes})


def lines(handle: BinaryIO, max_line: int = runlog.MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``handle``; a line over ``max_line`` comes as its first ``max_line + 1``
    bytes (which the reader refuses by size) and the rest of it is skipped unread."""
    total = 0
    while total < MAX_READ_BYTES:
        line = handle.readline(max_line + 1)
        if not line:
            return
        total += len(line)
        if len(line) > max_line and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                total += len(rest)
            total += len(rest)
        yield line
