"""ISO-8601 times: every time we store, log or ledger is written and parsed here.

Times we write are aware UTC (``datetime.now(UTC).isoformat()``); what others wrote may end in
``Z`` (the Platform, JavaScript) or carry no zone at all (taken as UTC, as the original did).
"""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """Now, as every time we write is written: aware UTC, ISO-8601."""
    return datetime.now(UTC).isoformat()


def parse_instant(value: object) -> datetime | None:
    """``value`` as an aware datetime, or None when it is not an ISO-8601 date-time string."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
