"""Files in a folder a worker controls, touched without following anything it planted.

A worker can leave symlinks (``.executive -> <home>/workspace``), hard links and FIFOs in its
output folder. ``Path.resolve()`` then ``open()`` is check-then-use and follows links, and
``O_NOFOLLOW`` guards only the last component. So every path here is walked one folder at a
time from a directory fd with ``O_NOFOLLOW``; a write creates a new file (``O_EXCL``) and
renames it over the old name, which never writes through a hard link; a read refuses
anything but a regular file and never blocks on a FIFO.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path that leaves its folder, crosses a symlink, or is not what it must be."""


def parts(relative: str) -> list[str]:
    """The components of a folder-relative path; ``..``, absolute paths and empties refused."""
    path = PurePosixPath(relative)
    if path.is_absolute() or any(p == ".." for p in path.parts):
        raise UnsafePath(f"{relative!r} leaves its folder")
    found = [p for p in path.parts if p not in ("", ".")]
    if not found:
        raise UnsafePath(f"{relative!r} names no file")
    return found


@contextlib.contextmanager
def open_dir(root: Path, folders: Sequence[str] = ()) -> Iterator[int]:
    """A directory fd for ``root/folders…``, refusing a symlink at every step (root included)."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in folders:
            try:
                nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise UnsafePath(
                    f"{root}: {name!r} is not a plain folder ({exc.strerror})"
                ) from exc
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def write(root: Path, relative: str, data: str | bytes, *, mode: int = 0o644) -> Path:
    """Write ``root/relative`` as a new file and rename it into place; folders must exist."""
    *folders, name = parts(relative)
    raw = data.encode() if isinstance(data, str) else data
    tmp = f".{name}.executive-tmp"
    with open_dir(root, folders) as dir_fd:
        _remove(dir_fd, tmp)
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=dir_fd,
        )
        try:
            os.write(fd, raw)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            _remove(dir_fd, name)  # a folder in the way cannot be renamed over
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return root.joinpath(*folders, name)


def fresh_dir(root: Path, name: str, *, mode: int = 0o755) -> Path:
    """Remove whatever ``root/name`` is (a planted link is unlinked, never followed), mkdir it."""
    with open_dir(root) as dir_fd:
        _remove(dir_fd, name)
        os.mkdir(name, 0o700, dir_fd=dir_fd)  # fails if something raced in: never reuse it
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)  # mkdir's mode passes through the umask; this does not
        finally:
            os.close(fd)
    return root / name


def lstat(root: Path, relative: str) -> os.stat_result | None:
    """``lstat`` of ``root/relative`` walked without following links; None when missing."""
    *folders, name = parts(relative)
    try:
        with open_dir(root, folders) as dir_fd:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read(root: Path, relative: str, *, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file; a link, FIFO or device is refused."""
    *folders, name = parts(relative)
    with open_dir(root, folders) as dir_fd:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePath(f"{relative!r} is not a regular file")
            return os.read(fd, limit)
        finally:
            os.close(fd)


def _remove(dir_fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        # rmtree with dir_fd walks by fds and never follows a link it meets.
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)
