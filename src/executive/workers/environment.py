"""A worker's environment: built from an allow-list, then checked by a guard.

Pillar one: a worker never gets the store key, a store client or any executive-tier
variable. The allow-list keeps the daemon's environment out by default; the guard refuses
the spawn outright if anything executive-tier got in anyway (an operator naming
``V3_MEM0_API_KEY`` in ``EXECUTIVE_WORKER_ENV``, or a key's value under another name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR")
_LOCALE = re.compile(r"^LC_[A-Z]+$")
# The executive tier: memory flags and keys, mem0's own variables, the daemon's settings.
EXECUTIVE_TIER = re.compile(r"^(V3_|MEM0_|EXECUTIVE_)|^AGENT_PATH$")


class LeakRefused(RuntimeError):
    """The spawn would hand an executive-tier variable to a worker."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(
            "refusing to spawn: executive-tier variables would reach the worker: "
            + ", ".join(names)
        )


def build(
    parent: Mapping[str, str],
    *,
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allow-listed part of ``parent``, the operator's named variables, then ``extra``."""
    wanted = set(BASE) | set(passthrough)
    env = {k: v for k, v in parent.items() if k in wanted or _LOCALE.match(k)}
    env.update(extra or {})
    return env


def guard(env: Mapping[str, str], secrets: Iterable[str] = ()) -> None:
    """Raise :class:`LeakRefused` naming every variable a worker must not see."""
    values = {s for s in secrets if s}
    leaks = sorted(k for k, v in env.items() if EXECUTIVE_TIER.match(k) or (v and v in values))
    if leaks:
        raise LeakRefused(leaks)
