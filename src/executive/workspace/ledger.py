"""The work ledger: every loop event, append-only, one JSON line each (never edited)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from executive.files import append_jsonl, read_jsonl
from executive.redact import redactor


class WorkLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        record = {
            "ts": datetime.now(UTC).isoformat(),
            "event": event,
            # The last line of defence: fields may carry worker or verifier text.
            **{k: redactor().value(v) for k, v in fields.items() if v is not None},
        }
        append_jsonl(self.path, record)
        return record

    def events(self, *names: str) -> Iterator[dict[str, Any]]:
        for record in read_jsonl(self.path):
            if not names or record.get("event") in names:
                yield record
