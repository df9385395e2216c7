"""Backfill runs against a memory-on home with a real runtime, like the hooks' tests."""

from tests.hooks.conftest import agent_home, env, logs, runtime, settings

__all__ = ["agent_home", "env", "logs", "runtime", "settings"]
