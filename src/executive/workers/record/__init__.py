"""The run's record: what a finished worker left, read by the daemon and told in a digest.

``left`` runs ``reader`` off the event loop: it compares the worker's folder before and after
and reads its run log (``runlog``); ``digest`` makes of them the run's ``experience`` (the
functions touched: ``symbols``; commands compared by ``shell``'s command identity).
Everything here is untrusted text, kept apart from what the daemon saw.
"""

from executive.workers.record.digest import fix_across, harness, own_test
from executive.workers.record.experience import (
    ACROSS,
    Experience,
    FileChange,
    Fix,
    brief,
    listed,
    scratch,
)
from executive.workers.record.left import Left
from executive.workers.record.shell import core as command_core
from executive.workers.record.shell import error_line
from executive.workers.record.shell import key as command_key
from executive.workers.record.shell import unsafe as unsafe_command

__all__ = [
    "ACROSS",
    "Experience",
    "FileChange",
    "Fix",
    "Left",
    "brief",
    "command_core",
    "command_key",
    "error_line",
    "fix_across",
    "harness",
    "listed",
    "own_test",
    "scratch",
    "unsafe_command",
]
