"""Files someone else controls: only a regular file, never through a link, never blocking, capped.

A worker can leave symlinks (``.executive -> <home>/workspace``), hard links and FIFOs in its
output folder. A plain ``open()`` of a FIFO blocks until a writer comes (a daemon stuck in
``open`` ignores SIGTERM); a link to ``/dev/zero`` reads forever; a 1 GB file is read whole
before anyone checks it; ``Path.resolve()`` then ``open()`` is check-then-use and follows
links. So (sandboxing notes, §6): ``O_NOFOLLOW`` refuses a link as the last component, and a
path inside a folder is walked one folder at a time from a directory fd; ``O_NONBLOCK`` makes
opening a FIFO return at once; ``fstat`` on the open file requires a regular file; the size is
checked before a byte is read and again while reading (the file may grow between the two); a
write creates a new file (``O_EXCL``) and renames it over the old name, which never writes
through a hard link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}


class UnsafeFile(OSError):
    """A link, not a regular file, larger than allowed, or a path that leaves its folder; the
    message says which."""


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes``; ``FileNotFoundError``
    when absent, :class:`UnsafeFile` for a link, a FIFO, a device, a folder or a file too large."""
    return _read(path, path.name, max_bytes)


def read_text(path: Path, max_bytes: int) -> str:
    """:func:`read_regular` decoded as UTF-8; a decoding error is an ``UnsafeFile`` too."""
    raw = read_regular(path, max_bytes)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"{path.name} is not valid UTF-8 (byte {exc.start})") from None


def read_in(root: Path, relative: str, max_bytes: int) -> bytes:
    """:func:`read_regular` of ``root/relative``, walked without following any link."""
    *folders, name = _parts(relative)
    with _open_dir(root, folders) as dir_fd:
        return _read(name, relative, max_bytes, dir_fd=dir_fd)


def append_regular(path: Path, text: str) -> None:
    """Append ``text`` to a regular file (made if missing); a link or FIFO there raises
    :class:`UnsafeFile`, never blocks."""
    try:
        fd = os.open(path, _APPEND, 0o644)
    except OSError as exc:
        raise UnsafeFile(f"{path.name} cannot be appended safely: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(f"{path.name} is not a regular file")
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_in(root: Path, relative: str, data: str | bytes, *, mode: int = 0o644) -> Path:
    """Write ``root/relative`` as a new file and rename it into place; folders must exist."""
    *folders, name = _parts(relative)
    tmp = f".{name}.executive-tmp"
    with _open_dir(root, folders) as dir_fd:
        _remove(dir_fd, tmp)
        fd = os.open(tmp, _CREATE, mode, dir_fd=dir_fd)
        try:
            os.write(fd, data.encode() if isinstance(data, str) else data)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        existing = _lstat(dir_fd, name)
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            _remove(dir_fd, name)  # a folder in the way cannot be renamed over
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return root.joinpath(*folders, name)


def fresh_dir(root: Path, name: str, *, mode: int = 0o755) -> Path:
    """Remove whatever ``root/name`` is (a planted link is unlinked, never followed), mkdir it."""
    with _open_dir(root) as dir_fd:
        _remove(dir_fd, name)
        os.mkdir(name, 0o700, dir_fd=dir_fd)  # fails if something raced in: never reuse it
        fd = os.open(name, _DIR, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)  # mkdir's mode passes through the umask; this does not
        finally:
            os.close(fd)
    return root / name


def lstat_in(root: Path, relative: str) -> os.stat_result | None:
    """``lstat`` of ``root/relative`` walked without following links; None when missing."""
    *folders, name = _parts(relative)
    try:
        with _open_dir(root, folders) as dir_fd:
            return _lstat(dir_fd, name)
    except FileNotFoundError:
        return None


def _read(path: Path | str, name: str, max_bytes: int, *, dir_fd: int | None = None) -> bytes:
    try:
        fd = os.open(path, _READ, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(f"{name} is a symbolic link; only a regular file is read") from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EISDIR):
            raise UnsafeFile(f"{name} is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise UnsafeFile(f"{name} is not a regular file ({kind})")
        if info.st_size > max_bytes:
            raise UnsafeFile(f"{name} is {info.st_size} bytes; the limit is {max_bytes}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnsafeFile(f"{name} grew past the limit of {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _parts(relative: str) -> list[str]:
    """The components of a folder-relative path; ``..``, absolute paths and empties refused."""
    path = PurePosixPath(relative)
    if path.is_absolute() or any(p == ".." for p in path.parts):
        raise UnsafeFile(f"{relative!r} leaves its folder")
    found = [p for p in path.parts if p not in ("", ".")]
    if not found:
        raise UnsafeFile(f"{relative!r} names no file")
    return found


@contextlib.contextmanager
def _open_dir(root: Path, folders: Sequence[str] = ()) -> Iterator[int]:
    """A directory fd for ``root/folders…``, refusing a symlink at every step (root included)."""
    fd = os.open(root, _DIR)
    try:
        for name in folders:
            try:
                nxt = os.open(name, _DIR, dir_fd=fd)
            except OSError as exc:
                raise UnsafeFile(
                    f"{root}: {name!r} is not a plain folder ({exc.strerror})"
                ) from exc
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _remove(dir_fd: int, name: str) -> None:
    info = _lstat(dir_fd, name)
    if info is None:
        return
    if stat.S_ISDIR(info.st_mode):
        # rmtree with dir_fd walks by fds and never follows a link it meets.
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)
