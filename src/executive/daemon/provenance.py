"""``executive doctor``'s checks of where things come from: the keys of the process
environment (a supervisor's ``env``, a unit's ``Environment=``), and which Claude Code CLI a
claude worker runs. ``doctor.py`` lists them with the others."""

from __future__ import annotations

import os

from executive.daemon.doctor_check import Check
from executive.hooks.llm.preflight import credential_source
from executive.settings import Settings
from executive.workers import claude_cli

CLAUDE_MISSING_FIX = (
    "install Claude Code (npm install -g @anthropic-ai/claude-code, or pip install "
    "'executive[claude]', whose SDK bundles one) or set EXECUTIVE_CLAUDE_BIN to its path, or "
    "set WORKER_VENDOR=command (or `vendor: command` in a bundle's PROMPT.md)"
)


def check_workers(settings: Settings) -> list[Check]:
    """The Claude Code CLI a claude worker runs (the LLM engine runs the same one), and why."""
    if settings.worker_vendor != "claude":
        return [Check("worker vendor", True, f"default vendor {settings.worker_vendor}")]
    cli = claude_cli.resolve(settings.claude_bin)
    # Every bundle that names no vendor would be blocked at its first spawn: a failure.
    found = Check(
        "claude worker CLI",
        cli.path is not None,
        cli.describe() + ("" if cli.path else " (WORKER_VENDOR=claude, the default)"),
        "" if cli.path else CLAUDE_MISSING_FIX,
    )
    return [found, _credentials()]


def _credentials() -> Check:
    """Whether a claude worker would find credentials (the CLI reads them from the daemon's
    environment or its user's login). A warning, not a failure: command bundles run without
    them, and a fresh home has none yet."""
    if (source := credential_source(os.environ)) is not None:
        return Check("claude worker credentials", True, f"from {source}")
    return Check(
        "claude worker credentials",
        False,
        "none for this user: every claude bundle (the default vendor) fails at its first request",
        "export ANTHROPIC_API_KEY for the daemon's user (or CLAUDE_CODE_OAUTH_TOKEN from "
        "`claude setup-token`), or log in once with `claude` as that user; deploy/README.md "
        "says where it goes under systemd or PM2",
        warning=True,
    )
