"""Isolation: how a worker runs apart from the daemon and from other workers.

A worker is a process tree the daemon starts, bounds and ends (``process``, ``tree``,
``cgroup``, ``limits``), as its own account (``account``) inside a bubblewrap sandbox whose
first program is the launcher (``sandbox``, ``launcher``).
"""

from executive.workers.isolation.cgroup import find as find_cgroups
from executive.workers.isolation.limits import report as limits_report
from executive.workers.isolation.process import (
    MARK,
    NOT_ISOLATED,
    reap_orphans,
    run,
    supervise,
)
from executive.workers.isolation.sandbox import (
    CONFINED,
    SANDBOX_PATH,
    Isolation,
    IsolationUnavailable,
    from_settings,
    program_hidden,
    reachable,
)

__all__ = [
    "CONFINED",
    "MARK",
    "NOT_ISOLATED",
    "SANDBOX_PATH",
    "Isolation",
    "IsolationUnavailable",
    "find_cgroups",
    "from_settings",
    "limits_report",
    "program_hidden",
    "reachable",
    "reap_orphans",
    "run",
    "supervise",
]
