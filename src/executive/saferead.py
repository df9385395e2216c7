"""Reading a file someone else controls: only a regular file, never through a link, capped.

A plain ``open()`` of a FIFO blocks until a writer comes (a daemon stuck in ``open`` ignores
SIGTERM); a link to ``/dev/zero`` reads forever; a 1 GB file is read whole before anyone
checks it. So (sandboxing notes, §6): ``O_NOFOLLOW`` refuses a symbolic link as the last
component, ``O_NONBLOCK`` makes opening a FIFO return at once, ``fstat`` on the open file
requires a regular file, and the size is checked before a byte is read and again while
reading (the file may grow between the two).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class UnsafeFile(OSError):
    """Not a regular file, a link, or larger than allowed; the message says which."""


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes``.

    Raises ``FileNotFoundError`` when it is absent and :class:`UnsafeFile` for a link, a
    FIFO, a device, a folder or a file over the limit.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(
                f"{path.name} is a symbolic link; only a regular file is read"
            ) from None
        if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EISDIR):
            raise UnsafeFile(f"{path.name} is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path.name} is not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise UnsafeFile(f"{path.name} is {info.st_size} bytes; the limit is {max_bytes}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnsafeFile(f"{path.name} grew past the limit of {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path, max_bytes: int) -> str:
    """:func:`read_regular` decoded as UTF-8; a decoding error is an ``UnsafeFile`` too."""
    raw = read_regular(path, max_bytes)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(f"{path.name} is not valid UTF-8 (byte {exc.start})") from None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"
