"""One result of ``executive doctor``: what was checked, whether it holds, and the fix.

Its own module so that checks may live beside ``doctor.py`` (which lists them all).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    # A warning is reported but does not fail the run (exit code stays 0).
    warning: bool = False
