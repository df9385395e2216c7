"""The work ledger: every loop event, append-only, one JSON line each (never edited)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from executive.dates import now_iso
from executive.files import JsonlTail, append_jsonl, read_jsonl
from executive.redact import redactor
from executive.untrusted import one_line

# Fields that retrospectives and needs-you quote inside one markdown line: a newline in a
# title or a reason must not start a heading there.
ONE_LINE = frozenset({"title", "step_title", "step_titles", "reason", "signal"})


def _one_line(value: Any) -> Any:
    if isinstance(value, list):
        return [_one_line(v) for v in value]
    return one_line(value) if isinstance(value, str) else value


class WorkLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        # The last line of defence: fields may carry worker or verifier text.
        scrubbed = {k: redactor().value(v) for k, v in fields.items() if v is not None}
        record: dict[str, Any] = {"ts": now_iso(), "event": event}
        record |= {k: _one_line(v) if k in ONE_LINE else v for k, v in scrubbed.items()}
        append_jsonl(self.path, record)
        return record

    def events(self, *names: str) -> Iterator[dict[str, Any]]:
        for record in read_jsonl(self.path):
            if not names or record.get("event") in names:
                yield record


class LedgerFold:
    """A summary of the work ledger kept current by reading only what was appended since: the
    loop asks on every tick (is a retrospective due?), and reading a ledger of months each time
    would grow with its age. A subclass says how to start over (``reset``) and what one event
    changes (``add``); ``refresh`` feeds it the new events, and starts it over when the ledger
    was truncated or replaced."""

    def __init__(self, ledger: WorkLedger) -> None:
        self._tail = JsonlTail(ledger.path)
        self.reset()

    def refresh(self) -> None:
        start_over, records = self._tail.read()
        if start_over:
            self.reset()
        for record in records:
            self.add(record)

    def reset(self) -> None:
        raise NotImplementedError

    def add(self, event: dict[str, Any]) -> None:
        raise NotImplementedError
