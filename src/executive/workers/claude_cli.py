"""Which Claude Code CLI runs: one answer for claude workers and the LLM engine.

In order: the configured one (``EXECUTIVE_CLAUDE_BIN`` set to a path, or a name other than
the default ``claude``), then ``claude`` on the ``PATH``, then the CLI that claude-agent-sdk
bundles (the version it was built with). A fresh home has no ``claude`` on the ``PATH`` but
the SDK's own CLI in the venv, and both workers and the engine can run that one. Found
without importing the SDK (a second of imports) and without running anything.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_NAME = "claude"
CONFIGURED = "EXECUTIVE_CLAUDE_BIN"
ON_PATH = "PATH"
BUNDLED = "claude-agent-sdk's bundled CLI"


@dataclass(frozen=True)
class ClaudeCli:
    path: str | None  # None: no CLI anywhere
    source: str  # CONFIGURED, ON_PATH or BUNDLED; what was looked for when none

    def describe(self) -> str:
        if self.path is None:
            return f"no Claude Code CLI: {self.source}"
        return f"{self.path} (from {self.source})"


def sdk_dir() -> Path | None:
    """Where ``claude_agent_sdk`` is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec("claude_agent_sdk")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_cli() -> Path | None:
    """The CLI inside the installed SDK, where its wheel ships one for this platform."""
    root = sdk_dir()
    if root is None:
        return None
    path = root / "_bundled" / ("claude.exe" if sys.platform == "win32" else "claude")
    return path if path.is_file() and os.access(path, os.X_OK) else None


def resolve(claude_bin: str = DEFAULT_NAME, path: str | None = None) -> ClaudeCli:
    """The CLI to run for ``EXECUTIVE_CLAUDE_BIN=claude_bin``; ``path`` is a ``PATH`` to search
    (default: the process's). A value the operator set is never replaced by another CLI: a
    configured path that is missing is said as missing."""
    configured = claude_bin != DEFAULT_NAME or os.sep in claude_bin
    found = shutil.which(claude_bin, path=path)
    if configured:
        if found is not None:
            return ClaudeCli(found, CONFIGURED)
        return ClaudeCli(None, f"{CONFIGURED}={claude_bin} is not an executable")
    if found is not None:
        return ClaudeCli(found, ON_PATH)
    bundled = bundled_cli()
    if bundled is not None:
        return ClaudeCli(str(bundled), BUNDLED)
    return ClaudeCli(None, f"{claude_bin} is not on PATH and claude-agent-sdk bundles none here")
