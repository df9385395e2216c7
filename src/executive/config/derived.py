"""Values derived from the settings' fields: parsed lists, the time zone, where outputs go."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from pydantic import SecretStr

from executive import hosts
from executive.config.rules import account_uids, dashboard_address, split


class Derived:
    """Read-only properties of :class:`executive.settings.Settings`."""

    if TYPE_CHECKING:  # fields Settings declares; read here, never declared twice
        home: Path
        output_root: Path | None
        timezone: str
        worker_env: str
        worker_allow_hosts: str
        spec_files: str
        snapshot_time: str
        dashboard_bind: str
        dashboard_token: SecretStr | None
        dashboard_allow_uids: str
        store_backend: str
        store_url: SecretStr | None
        executive_name: str | None
        peer_homes: str
        qdrant_api_key: SecretStr | None
        mem0_api_key: SecretStr | None

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def outputs(self) -> Path:
        """Where workers run: never inside the agent home."""
        return self.output_root or self.home.parent / f"{self.home.name}-outputs"

    @property
    def worker_env_names(self) -> list[str]:
        return split(self.worker_env)

    @property
    def worker_allow_list(self) -> list[hosts.Entry]:
        return hosts.parse(self.worker_allow_hosts)

    @property
    def spec_file_list(self) -> list[str]:
        return split(self.spec_files)

    @property
    def snapshot_hour_minute(self) -> tuple[int, int]:
        hour, minute = self.snapshot_time.split(":")
        return int(hour), int(minute)

    @property
    def dashboard_allowed_uids(self) -> frozenset[int]:
        return account_uids(self.dashboard_allow_uids)

    @property
    def dashboard_host_port(self) -> tuple[str, int]:
        return dashboard_address(self.dashboard_bind)

    @property
    def store_in_home(self) -> bool:
        """The store lives in the home's folder and admits one process (not a server)."""
        return self.store_backend == "inmemory" or (
            self.store_backend == "local" and self.qdrant_url is None
        )

    @property
    def executive(self) -> str:
        """The name stamped on this executive's memories: set, or the home folder's name."""
        return default_executive_name(self.home, self.executive_name)

    @property
    def peer_home_list(self) -> list[Path]:
        return [Path(p).expanduser().resolve() for p in split(self.peer_homes)]

    def secret_values(self) -> list[str]:
        values = [
            s.get_secret_value()
            for s in (self.mem0_api_key, self.qdrant_api_key, self.dashboard_token, self.store_url)
            if s is not None and s.get_secret_value()
        ]
        if self.store_url is not None:
            # The password alone, too: an error message may quote it without the URL.
            values += url_passwords(self.store_url.get_secret_value())
        return values


def url_passwords(url: str) -> list[str]:
    """The password of a libpq URL, as written and decoded (the URL form percent-encodes)."""
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += parse_qs(parts.query).get("password", [])
    return [v for p in found for v in dict.fromkeys((p, unquote(p)))]


def default_executive_name(home: Path, configured: str | None = None) -> str:
    """EXECUTIVE_NAME when set, else the home folder's name made a valid name (not the host's:
    two executives on one machine differ by home, and a container's changes on every start)."""
    if configured:
        return configured
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", home.name).strip("-._")
    return name[:64] or "executive"
