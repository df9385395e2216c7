"""A named pipe a child process writes a line to when it reaches a point, and the test
blocks on: the wait ends when the line arrives, however fast or slow this machine is. The
other way round, a child blocks reading it until the test says a line.

The test holds the pipe open for reading and writing from the start, so a child's
``echo ... > fifo`` never blocks (there is always a reader) and a line written before the
test looks is kept in the pipe, not lost. The timeout is only a hang guard."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import TracebackType


class Fifo:
    def __init__(self, path: Path, owner: tuple[int, int] | None = None) -> None:
        """Make the pipe at ``path`` (for ``owner``, a uid and gid, if another account's
        process writes to it) and open it."""
        self.path = path
        os.mkfifo(path, 0o600)
        if owner is not None:
            os.chown(path, *owner)
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self._pending = b""

    def line(
        self,
        watch: subprocess.Popen | None = None,
        timeout: float = 120,
        log: Callable[[], str] = str,
    ) -> str:
        """The next line written to the pipe. If ``watch`` (the process whose work writes
        it) has ended or ends first, or nothing comes within ``timeout`` seconds, the test
        fails, with what ``log`` returns then (the watched process's last lines, say)."""
        with _Watched(self._fd, watch) as watched:
            while b"\n" not in self._pending:
                ready = dict(watched.poller.poll(0 if watched.ended else timeout * 1000))
                if self._fd in ready:
                    self._pending += os.read(self._fd, 4096)
                    continue
                assert watch is None or not (watched.ended or ready), (
                    f"{watch.args!r} ended (exit {watch.wait()}) before writing to "
                    f"{self.path}\n{log()}"
                )
                raise AssertionError(
                    f"nothing was written to {self.path} within {timeout}s\n{log()}"
                )
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def say(self, line: str) -> None:
        """Write ``line`` for a child that reads the pipe (it waits there until it comes)."""
        os.write(self._fd, line.encode() + b"\n")

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> Fifo:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Watched:
    """A poll over the pipe and, if there is one, the watched process (a pidfd is readable
    once the process has ended; one already waited for has ``ended``)."""

    def __init__(self, fd: int, watch: subprocess.Popen | None) -> None:
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)
        self.ended = False
        self._pidfd: int | None = None
        if watch is not None and watch.returncode is not None:
            self.ended = True  # waited for already: its pid may be another process's now
        elif watch is not None:
            try:
                self._pidfd = os.pidfd_open(watch.pid)
            except ProcessLookupError:
                self.ended = True
            else:
                self.poller.register(self._pidfd, select.POLLIN)

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *_: object) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
