"""A Unix socket's address for a path of any length.

``sun_path`` holds 108 bytes on Linux (104 on macOS), and an agent home can sit deeper than
that. A longer path is reached through a held descriptor of its folder
(``/proc/self/fd/<n>/<name>``), never through a shorter shared folder (``/tmp``) someone
else could have made first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

SUN_PATH_MAX = 100  # with room to spare below the kernel's 108


class PathTooLong(RuntimeError):
    """No way to address the socket here; the message says what to do."""


@contextlib.contextmanager
def address(path: Path) -> Iterator[str]:
    """A ``sun_path`` for ``path``: itself, or through a held folder fd when it is too long."""
    if len(os.fsencode(path)) < SUN_PATH_MAX:
        yield str(path)
        return
    if not Path("/proc/self/fd").is_dir():
        raise PathTooLong(
            f"{path} is too long for a Unix socket and this system has no /proc/self/fd; "
            "use a shorter home path"
        )
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)
