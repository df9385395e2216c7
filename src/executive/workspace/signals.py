"""A failure's root signal: its error with the particulars (numbers, paths, ids) removed.

Two failures share a root signal when they failed the same way; retrospectives group
failures by it and Hook D looks for it repeating.
"""

from __future__ import annotations

import hashlib
import re

_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.-]*/)+[\w.-]+")
_HEX = re.compile(r"\b(?:0x)?[0-9a-f]{7,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_QUOTED = re.compile(r"(['\"`]).{1,80}?\1")
_SPACE = re.compile(r"\s+")
_NAMES_ERROR = re.compile(r"error|exception|fail|fatal|denied|refused|timeout", re.IGNORECASE)
MAX_CHARS = 100
_PARTICULARS = ((_PATH, "<path>"), (_QUOTED, r"\1…\1"), (_HEX, "<id>"), (_NUMBER, "<n>"))


def root_signal(error: str) -> str:
    """``"error: ECONNRESET while fetching /tmp/x (attempt 3)"`` → ``"error: econnreset while fetching <path> (attempt <n>)"``."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    if not lines:
        return "no error output"
    # Prefer a line that names the error; else the last line (tracebacks end with it).
    named = [line for line in lines if _NAMES_ERROR.search(line)]
    line = named[-1] if named else lines[-1]
    for pattern, mark in _PARTICULARS:
        line = pattern.sub(mark, line)
    return _SPACE.sub(" ", line).strip().lower()[:MAX_CHARS]


def signal_tag(signal: str) -> str:
    """A tag that names a signal in memory metadata: ``sig-<8 hex>``."""
    return "sig-" + hashlib.sha256(signal.encode()).hexdigest()[:8]
