"""systemd's notify protocol (sd_notify), in the dozen lines it takes.

A no-op when ``NOTIFY_SOCKET`` is not set, so the same daemon runs under PM2, systemd or a
terminal.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

from executive.logs import get_logger

log = get_logger(__name__)


class Notifier:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        # A leading '@' names a socket in the abstract namespace.
        self._address = "\0" + address[1:] if address.startswith("@") else address
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        ours = not pid or pid == str(os.getpid())
        self.watchdog_seconds = int(usec) / 1_000_000 if usec.isdigit() and ours else None
        self._stopping_sent = False

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    def send(self, *states: str) -> bool:
        if not self._address:
            return False
        message = "\n".join(states).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self._address)
                sock.sendall(message)
        except OSError as exc:
            # systemd may be gone (stop in progress); the daemon goes on regardless.
            log.warning("notify.failed", states=list(states), error=str(exc))
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        """Tell systemd the stop has begun; said once, however many paths reach it."""
        if self._stopping_sent:
            return False
        self._stopping_sent = True
        return self.send("STOPPING=1")
