"""What a hook run returns: a value, never an exception."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from executive.untrusted import ending

TAIL_CHARS = 400


class Writes(BaseModel):
    model_config = ConfigDict(frozen=True)

    attempted: int = 0
    succeeded: int = 0
    skipped: int = 0  # already known (same key or a near-duplicate): a success, not a write
    failed: int = 0


class HookResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    hook: str
    ran: bool
    skipped: bool = False
    reason: str | None = None
    final_text: str = ""
    memory_pack: str | None = None
    tool_calls: list[str] = Field(default_factory=list)
    writes: Writes = Writes()
    duration_ms: int = 0
    error: str | None = None
    engine: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def outcome(self) -> str:
        """``skipped``, ``ok`` or ``failed``. All writes failing is a failure, never ok."""
        if self.skipped:
            return "skipped"
        if self.error is not None or self.writes.failed:
            return "failed"
        return "ok"

    @property
    def histogram(self) -> dict[str, int]:
        return dict(Counter(self.tool_calls))

    @property
    def tail(self) -> str:
        return ending(self.final_text, TAIL_CHARS)
