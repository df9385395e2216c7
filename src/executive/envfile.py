"""The ``.env.executive`` template, rendered from the settings themselves.

``.env.executive.example`` and the file ``executive init`` writes both come from here, so
a variable cannot be added to the code and forgotten in the template (a test compares).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from executive.config.sections import Budget, SharedStore, WorkerLimits
from executive.config.sources import READ_ELSEWHERE, aliases
from executive.hookspecs import ROLL_OUT, SPECS
from executive.settings import Settings, variable_names

# Keys in our own namespaces: one of these that names no setting is a typo, not a choice.
_OURS = re.compile(r"^(V3_|EXECUTIVE_)[A-Z0-9_]*$")


def _names(group: type[BaseSettings]) -> list[str]:
    """The variables a group of settings declares, in its order."""
    return [aliases(info.validation_alias)[0] for info in group.model_fields.values()]


# The hooks' flags in the original's staged roll-out order (C first, E last).
_STAGE_ORDER = [SPECS[name].flag for name in ROLL_OUT]

_SECTIONS: list[tuple[str, list[str]]] = [
    (
        "Memory. Executive tier only: nothing in this file ever reaches a worker.\n"
        "Hooks run only when the master switch AND their own flag are true. Turn them on one\n"
        "at a time, in this order (the original's staged roll-out), auditing each for a week.",
        ["V3_MEMORY_ENABLED", *_STAGE_ORDER],
    ),
    (
        "Memory store scope and retrieval.",
        [
            "V3_MEM0_USER_ID",
            "V3_MEM0_API_KEY",
            "V3_MEM0_TOP_K",
            "V3_MEM0_CONFIDENCE_FLOOR",
            "V3_MEM0_ENV",
            # Empty on purpose: an empty value is unset (the original's cohort bug).
            "V3_MEM0_COHORT",
        ],
    ),
    ("A store shared by several executives (EXECUTIVE_STORE=postgres).", _names(SharedStore)),
    (
        "The dashboard, /metrics and /healthz, served by the daemon.",
        [
            "EXECUTIVE_DASHBOARD",
            "EXECUTIVE_DASHBOARD_BIND",
            "EXECUTIVE_DASHBOARD_TOKEN",
            "EXECUTIVE_DASHBOARD_ALLOW_UIDS",
            "EXECUTIVE_DASHBOARD_REFRESH_SECONDS",
        ],
    ),
    (
        "What one worker's tree may use (`executive doctor` says which limits hold here).",
        _names(WorkerLimits),
    ),
    (
        "What paid runs may cost, in US dollars (docs/spend.md); unset: no cap.",
        _names(Budget),
    ),
]


def default_text(info: FieldInfo) -> str:
    """A field's default as a value in the file; empty when it has none (unset or computed)."""
    default: Any = info.get_default(call_default_factory=False)
    if default is None or info.default_factory is not None:
        return ""
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


# The template says "off" out loud rather than leaving the master switch unset.
_TEMPLATE_VALUES = {"V3_MEMORY_ENABLED": "false"}


def render_env(values: Mapping[str, str] | None = None) -> str:
    """Every variable with a one-line comment; ``values`` overrides the defaults shown."""
    chosen = {**_TEMPLATE_VALUES, **(values or {})}
    fields = {aliases(f.validation_alias)[0]: f for f in Settings.model_fields.values()}
    placed = {variable for _, variables in _SECTIONS for variable in variables}
    rest = [variable for variable in fields if variable not in placed]
    blocks: list[str] = []
    for intro, variables in [*_SECTIONS, ("Everything else, grouped as in settings.py.", rest)]:
        lines = [f"# {line}".rstrip() for line in intro.splitlines()]
        for variable in variables:
            info = fields[variable]
            value = chosen.get(variable, default_text(info))
            lines.append(f"# {info.description or ''}\n{variable}={value}")
        blocks.append("\n".join(lines))
    header = (
        "# executive configuration. Copy to <home>/.env.executive (mode 0600).\n"
        "# An empty value means unset: the default applies. The process environment wins.\n"
    )
    return header + "\n" + "\n\n".join(blocks) + "\n"


def unknown_keys(env_file: Path) -> list[tuple[str, str | None]]:
    """Keys of ``env_file`` in our namespaces that no setting reads, each with the closest name:
    pydantic-settings ignores them, so ``V3_MEM_HOOK_POSTRUN=true`` would leave Hook C off."""
    from dotenv import dotenv_values

    if not env_file.is_file():
        return []
    return _unknown(dotenv_values(env_file))


def unknown_environment_keys(
    environ: Mapping[str, str] | None = None,
) -> list[tuple[str, str | None]]:
    """The same check on the process environment (a supervisor's ``env`` or ``Environment=``),
    where a typo hides as well: ``V3_MEM_HOOK_FAILDIAG=true`` leaves Hook D off. Names read
    outside the settings (``EXECUTIVE_HOME``, ...) are no typo."""
    env = os.environ if environ is None else environ
    return _unknown(sorted(key for key in env if key not in READ_ELSEWHERE))


def _unknown(keys: Iterable[str]) -> list[tuple[str, str | None]]:
    known = variable_names()
    candidates = [*known, *READ_ELSEWHERE]
    unknown = []
    for key in keys:
        if _OURS.match(key) and key not in known:
            close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
            unknown.append((key, close[0] if close else None))
    return unknown
