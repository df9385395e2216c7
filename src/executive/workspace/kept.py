"""What git keeps of the workspace: the queue's files, but nothing too large or not a file.

After each outcome the home's history takes the workspace (:mod:`executive.daemon.history`):
``needs-you.md``, the folders' ``.gitkeep`` and each bundle's folder where it now is (its
``PROMPT.md``, ``STEPS.json``, ``PROGRESS_LOG.md`` and whatever the operator gave it, a
command's script say). Only regular files (a link or a FIFO is never followed) of at most
``MAX_BYTES``, and at most ``MAX_FILES`` a bundle: a bundle's folder may hold anything (a data
set, a sparse gigabyte the loader quarantined), and the home's history must not take it.
What is left out stays on disk, untracked, and is named in the returned list.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from executive.home import Home
from executive.workspace.operator import places

MAX_BYTES = 1024 * 1024  # a PROMPT.md is at most 256 KiB; a progress log grows with attempts
MAX_FILES = 200  # a bundle's


@dataclass
class Kept:
    files: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # "path: why", for the log


def workspace(home: Home) -> Kept:
    """The workspace files the next commit takes, in a stable order, and what it leaves out."""
    kept = Kept()
    queues = [root for _, root in places(home)]
    for path in (home.needs_you, *(queue / ".gitkeep" for queue in queues)):
        if _regular(path) is not None:
            kept.files.append(path)
    for queue in queues:
        for bundle in _subfolders(queue):
            _bundle(bundle, kept)
    return kept


def _subfolders(queue: Path) -> list[Path]:
    try:
        return sorted(e for e in queue.iterdir() if e.is_dir() and not e.is_symlink())
    except OSError:
        return []


def _bundle(folder: Path, kept: Kept) -> None:
    count = 0
    for root, dirs, names in os.walk(folder):  # never follows a link to a folder
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            size = _regular(path)
            if size is None:
                continue  # a link, a FIFO, a socket: never a file of the history
            if size > MAX_BYTES:
                kept.left_out.append(f"{path}: {size} bytes, over {MAX_BYTES}")
            elif count >= MAX_FILES:
                kept.left_out.append(f"{path}: over {MAX_FILES} files in its bundle")
            else:
                kept.files.append(path)
                count += 1


def _regular(path: Path) -> int | None:
    """A regular file's size; None for anything else, or nothing there."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None
