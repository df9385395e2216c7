"""A repository-relative path, as memory and a worker's digest both keep one.

A path a memory is about comes from a worker's record: untrusted. Kept only in its plain
form (``src/weather/parser.py``: relative, no ``.`` or ``..`` part, no empty part, no
backslash, printable), so it can name a file and never point outside the project.
"""

from __future__ import annotations

import posixpath
import re

MAX_CHARS = 200
# Control and bidi characters, and lone surrogates (a file name that is not UTF-8, as
# ``os.walk`` hands it over): none can be written as text anywhere the path goes.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def problem(path: str) -> str | None:
    """Why ``path`` is not a plain relative path, or None when it is one."""
    if not path:
        return "is empty"
    if len(path) > MAX_CHARS:
        return f"is {len(path)} characters; at most {MAX_CHARS}"
    if _UNPRINTABLE.search(path) or "\\" in path:
        return "holds a control character, a backslash or bytes that are not UTF-8"
    if posixpath.isabs(path) or path.startswith("~"):
        return "is absolute; only a path relative to the project is kept"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "is not in plain form (an empty, '.' or '..' part)"
    return None


def normal(path: str) -> str | None:
    """``./src//x.py`` → ``src/x.py``; None when no plain relative path comes of it."""
    flat = posixpath.normpath(path.strip()) if path.strip() else ""
    return flat if problem(flat) is None else None
