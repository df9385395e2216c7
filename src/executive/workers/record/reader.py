"""What a finished worker left behind, read from disk: its folder's changes and its run log.

The digest (:mod:`executive.workers.record.digest`) is pure; this is its edge. The folder is
looked at with ``lstat`` only (a planted link is noted, never followed) and at most
``max_files`` entries of it (past them the folder is "too large to compare", not walked on),
and the run log is read line by line with every line bounded, so a log of one enormous line
costs what the limit says, not what the worker printed. A name the digest cannot keep (too
long, not UTF-8, not plain) is counted, never raised: the worker chose it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from executive import relpath
from executive.logs import get_logger
from executive.spend import Spend
from executive.workers import output
from executive.workers.record import runlog
from executive.workers.record.digest import digest, of_command
from executive.workers.record.experience import (
    MAX_NOTES,
    PATH_CHARS,
    Experience,
    FileChange,
    bounded_files,
    normal_path,
    within,
)

log = get_logger(__name__)

SKIP_FOLDERS = frozenset({".git", ".executive"})
# The most of a run log the digest reads (the log itself is capped where it is written).
MAX_READ_BYTES = 64 * 1024 * 1024
OUTPUT_TAIL_BYTES = 8192
CAPPED = "the run log stops at its cap (EXECUTIVE_WORKER_LOG_MAX_BYTES): the end was dropped"


@dataclass(frozen=True)
class Snapshot:
    """A folder's files, path -> (modification time, size): enough to tell a file changed."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    complete: bool = True  # False: the walk stopped at its file count
    seconds: float = 0.0  # how long the walk took (reported, never decided on)


@dataclass(frozen=True)
class FolderDiff:
    """What a run changed in its folder, as far as it could be told."""

    changes: list[FileChange] = field(default_factory=list)
    unkept: int = 0  # changed files whose names cannot be kept: too long, not UTF-8, not plain
    compared: bool = True  # False: the folder held too many files to compare
    max_files: int = 0

    @property
    def notes(self) -> list[str]:
        notes = []
        if not self.compared:
            notes.append(
                f"the output folder holds over {self.max_files:,} files: too large to compare"
                " (EXECUTIVE_WORKER_FOLDER_MAX_FILES), its changes are unknown"
            )
        if self.unkept:
            notes.append(
                f"{self.unkept} changed files whose names cannot be kept (over "
                f"{PATH_CHARS} characters, not UTF-8, or not plain), left out"
            )
        return notes


def snapshot(
    folder: Path, skip_files: frozenset[str] = frozenset(), max_files: int = 100_000
) -> Snapshot:
    """Every file under ``folder`` but ``.git``/``.executive`` and ``skip_files`` (top level),
    up to ``max_files`` of them. Blocking: the daemon calls it in a worker thread."""
    started = time.monotonic()
    seen: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(folder):  # never descends into a linked folder
        dirs[:] = [d for d in dirs if d not in SKIP_FOLDERS]
        for name in files:
            if len(seen) >= max_files:
                return Snapshot(seen, complete=False, seconds=time.monotonic() - started)
            path = Path(root) / name
            if path.parent == folder and name in skip_files:
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            seen[str(path.relative_to(folder))] = (info.st_mtime_ns, info.st_size)
    return Snapshot(seen, seconds=time.monotonic() - started)


def changes(before: Snapshot, after: Snapshot, max_files: int = 0) -> FolderDiff:
    """What a run changed in its folder: caches and other noise left out, and every name the
    digest cannot keep counted before anything is built of it."""
    if not (before.complete and after.complete):
        return FolderDiff(compared=False, max_files=max_files)
    was, now = before.files, after.files
    found = [
        (p, "created" if p not in was else "modified") for p, s in now.items() if was.get(p) != s
    ]
    found += [(p, "deleted") for p in was if p not in now]
    kept = [FileChange(path=p, change=c) for p, c in found if normal_path(p) == p]
    unkept = sum(1 for p, _ in found if relpath.problem(p) is not None)
    return FolderDiff(kept, unkept=unkept, max_files=max_files)


def read_run(
    log_path: Path,
    *,
    vendor: str,
    workdir: Path,
    folder: FolderDiff,
    command: str,
    exit_code: int | None,
) -> tuple[Experience, Spend | None]:
    """The experience of one attempt and, for a claude worker, what the CLI's last ``result``
    line said it cost (None: not reported); one pass over the log. Never raises."""
    spend: Spend | None = None
    try:
        # The marker line is the daemon's, not the worker's: never its last words.
        tail, capped = output.unmarked(output.log_tail(log_path, OUTPUT_TAIL_BYTES))
        if vendor == "claude":
            found, spend = _claude(log_path, workdir, folder, tail)
        else:
            found = of_command(
                command=command,
                exit_code=exit_code,
                output=tail,
                changes=folder.changes,
                observed=folder.compared,
            )
        found = _noted(found, folder.notes)
        return (_noted(found, [CAPPED], complete=False) if capped else found), spend
    except OSError as exc:
        log.warning("experience.log_unreadable", path=str(log_path), error=str(exc))
        return Experience(
            source="command" if vendor != "claude" else "stream-json",
            files=bounded_files(folder.changes)[0],
            complete=False,
            notes=[f"the run log could not be read: {type(exc).__name__}", *folder.notes],
        ), spend


def _claude(
    log_path: Path, workdir: Path, folder: FolderDiff, tail: str
) -> tuple[Experience, Spend | None]:
    with log_path.open("rb") as handle:
        reading = runlog.read_lines(lines(handle))
    if reading.kind == "unknown":
        # Not Claude Code's stream-json at all (the CLI failed before it began): its output.
        return of_command(
            command="claude",
            exit_code=None,
            output=tail,
            changes=folder.changes,
            observed=folder.compared,
        ).model_copy(
            update={"complete": False, "notes": ["the run log holds no stream-json"]}
        ), None
    # The folder's own account wins; when it could not be taken, the record's edits stand.
    changes = folder.changes if folder.compared else None
    found = digest(reading, relative=within(str(workdir)), changes=changes)
    return found, reading.spend


def _noted(found: Experience, notes: list[str], *, complete: bool = True) -> Experience:
    """``found`` with ``notes`` first (the daemon's own, before the record's)."""
    if not notes and complete:
        return found
    update = {"notes": [*notes, *found.notes][:MAX_NOTES], "complete": found.complete and complete}
    return found.model_copy(update=update)


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
