"""Values derived from the settings' fields: parsed lists, the time zone, where outputs go."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from executive.config.rules import dashboard_address, split

if TYPE_CHECKING:
    from executive.settings import Settings


class Derived:
    """Read-only properties of :class:`executive.settings.Settings`."""

    @property
    def tz(self: Settings) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def outputs(self: Settings) -> Path:
        """Where workers run: never inside the agent home."""
        if self.output_root is not None:
            return self.output_root
        return self.home.parent / f"{self.home.name}-outputs"

    @property
    def worker_env_names(self: Settings) -> list[str]:
        return split(self.worker_env)

    @property
    def spec_file_list(self: Settings) -> list[str]:
        return split(self.spec_files)

    @property
    def snapshot_hour_minute(self: Settings) -> tuple[int, int]:
        hour, minute = self.snapshot_time.split(":")
        return int(hour), int(minute)

    @property
    def dashboard_host_port(self: Settings) -> tuple[str, int]:
        return dashboard_address(self.dashboard_bind)

    @property
    def dashboard_loopback(self: Settings) -> bool:
        host = self.dashboard_host_port[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False  # a name other than localhost may resolve anywhere

    @property
    def store_in_home(self: Settings) -> bool:
        """The store lives in the home's folder and admits one process (not a server)."""
        return self.store_backend == "inmemory" or (
            self.store_backend == "local" and self.qdrant_url is None
        )

    def secret_values(self: Settings) -> list[str]:
        return [
            s.get_secret_value()
            for s in (self.mem0_api_key, self.qdrant_api_key, self.dashboard_token)
            if s is not None and s.get_secret_value()
        ]
