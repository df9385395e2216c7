"""What one iteration tells the supervisor about when to run the next."""

from __future__ import annotations

import enum


class Pace(enum.Enum):
    BUSY = "busy"  # work was done: go on at once
    IDLE = "idle"  # nothing to do: sleep IDLE_SLEEP_SECONDS
    UNHEALTHY = "unhealthy"  # health check failed: sleep UNHEALTHY_SLEEP_SECONDS
    FAILED = "failed"  # the iteration raised: pause IDLE_SLEEP_SECONDS, then go on
