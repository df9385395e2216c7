"""Can the LLM engine run here, and what the Claude CLI may see. Never imports the SDK.

Three things must hold: ``claude-agent-sdk`` is installed (the ``claude`` extra), a Claude
Code CLI exists (the one a claude worker runs, :mod:`executive.workers.claude_cli`), and the
daemon's user has credentials, looked for where the CLI looks, without running it: an API
key or token variable, a cloud provider switch, or the login file ``claude`` writes
(``~/.claude/.credentials.json``; on macOS the login lives in the keychain, so
``~/.claude.json`` naming an account counts). What is found is named, never shown. A key
the CLI then rejects is caught at run time (``authentication_failed``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from executive.settings import Settings
from executive.workers import claude_cli
from executive.workers.claude_cli import sdk_dir
from executive.workers.environment import EXECUTIVE_TIER

SDK_MISSING = "claude-agent-sdk is not installed: pip install 'executive[claude]'"
_API_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_PROVIDER_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


@dataclass(frozen=True)
class Readiness:
    sdk: bool
    cli: str | None  # the CLI the engine will run
    credential: str | None  # where the credentials come from (a name, never a value)

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def problem(self) -> str | None:
        if not self.sdk:
            return SDK_MISSING
        if self.cli is None:
            return "no Claude Code CLI: none configured, none on PATH, none bundled with the SDK"
        if self.credential is None:
            return "no Claude credentials for this user (no ANTHROPIC_API_KEY, token or login)"
        return None

    @property
    def fix(self) -> str:
        if not self.sdk:
            return "pip install 'executive[claude]', or set EXECUTIVE_SKILL_ENGINE=builtin"
        if self.cli is None:
            return "install Claude Code (npm install -g @anthropic-ai/claude-code) or set EXECUTIVE_CLAUDE_BIN"
        if self.credential is None:
            return (
                "export ANTHROPIC_API_KEY for the daemon's user (or CLAUDE_CODE_OAUTH_TOKEN "
                "from `claude setup-token`), or log in once with `claude` as that user"
            )
        return ""

    def describe(self) -> str:
        return self.problem or f"CLI {self.cli}; credentials from {self.credential}"


def credential_source(environ: Mapping[str, str]) -> str | None:
    for name in _API_VARS:
        if environ.get(name):
            return name
    for name in _PROVIDER_VARS:
        if environ.get(name, "").strip().lower() in ("1", "true", "yes"):
            return f"{name} (the provider's own credentials)"
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    config = Path(environ["CLAUDE_CONFIG_DIR"]) if environ.get("CLAUDE_CONFIG_DIR") else None
    login = (config or home / ".claude") / ".credentials.json"
    if login.is_file():
        return f"a Claude login ({login})"
    state = home / ".claude.json"
    if sys.platform == "darwin" and state.is_file():
        try:
            if '"oauthAccount"' in state.read_text(errors="replace"):
                return "a Claude login (macOS keychain)"
        except OSError:
            return None
    return None


def readiness(settings: Settings, environ: Mapping[str, str] | None = None) -> Readiness:
    env = os.environ if environ is None else environ
    if sdk_dir() is None:
        return Readiness(sdk=False, cli=None, credential=None)
    # The same CLI a claude worker runs (workers/claude_cli.py says which, and why).
    cli = claude_cli.resolve(settings.claude_bin).path
    return Readiness(sdk=True, cli=cli, credential=credential_source(env))


def cli_env(environ: Mapping[str, str], secrets: Iterable[str]) -> dict[str, str]:
    """Overrides for ``ClaudeAgentOptions.env``: every executive-tier variable (and any holding
    a secret's value) emptied. The SDK starts the CLI with the parent's whole environment under
    ``options.env``, so nothing can be removed, only overridden; our settings read an empty
    value as unset, so the agent's ``executive mem`` commands read the home's
    ``.env.executive`` (or reach the daemon over its socket), and no key is passed on."""
    values = {s for s in secrets if s}
    return {
        name: ""
        for name, value in environ.items()
        if EXECUTIVE_TIER.match(name) or (value and value in values)
    }
