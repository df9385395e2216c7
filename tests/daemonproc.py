"""A real daemon process for tests: start it, read its JSON lines, signal it."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.conftest import EXECUTIVE, clean_env


class Daemon:
    def __init__(
        self,
        home: Path,
        env: Mapping[str, str] | None = None,
        *args: str,
        prefix: Sequence[str] = (),
    ) -> None:
        """``prefix``: a command the daemon is started under (it must exec the rest)."""
        self.home = home
        self.proc = subprocess.Popen(
            [*prefix, *EXECUTIVE, "--home", str(home), "run", *args],
            env=clean_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.records: list[dict] = []
        self._queue: queue.Queue[dict] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.stderr = ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = {"event": "<not json>", "line": line}
            self.records.append(record)
            self._queue.put(record)

    def wait_for(self, event: str, timeout: float = 60, **match: object) -> dict:
        deadline = time.monotonic() + timeout
        for record in list(self.records):
            if record.get("event") == event and all(record.get(k) == v for k, v in match.items()):
                return record
        while time.monotonic() < deadline:
            try:
                record = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self._queue.empty():
                    self._reader.join(2)
                    if self._queue.empty():
                        break
                continue
            if record.get("event") == event and all(record.get(k) == v for k, v in match.items()):
                return record
        raise AssertionError(
            f"no {event} {match or ''} within {timeout}s; exit={self.proc.poll()}\n"
            + "".join(self.lines[-30:])
            + self._stderr_now()
        )

    def tail(self, count: int = 20) -> str:
        """Its last ``count`` lines so far, for a failure's message."""
        return "".join(self.lines[-count:])

    def signal(self, signum: signal.Signals) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 60) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def _stderr_now(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return "\nstderr:\n" + self.proc.stderr.read()
