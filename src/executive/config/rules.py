"""The rules a setting's value must keep, beyond its type: checked once, when settings load.

Each rule raises ``ValueError`` saying what is wrong; :mod:`executive.config.sources` turns it
into one line naming the variable, its value and where that value came from.
"""

from __future__ import annotations

import ipaddress
import pwd
import re
from pathlib import Path
from typing import TYPE_CHECKING, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings

from executive import hosts

_IDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Mirrors the worker guard: memory flags and keys, mem0's variables, the daemon's settings.
_EXECUTIVE_TIER = re.compile(r"^(V3_|MEM0_|EXECUTIVE_)|^AGENT_PATH$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def split(value: str) -> list[str]:
    """The items of a comma-separated setting, blanks dropped."""
    return [part.strip() for part in value.split(",") if part.strip()]


def account_uids(value: str) -> frozenset[int]:
    """The uids of a comma-separated list of account names and uids."""
    found, unknown = set(), []
    for item in split(value):
        if item.isdigit():
            found.add(int(item))
            continue
        try:
            found.add(pwd.getpwnam(item).pw_uid)
        except KeyError:
            unknown.append(item)
    if unknown:
        raise ValueError(f"no such account on this host: {', '.join(unknown)}")
    return frozenset(found)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def dashboard_address(bind: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) split and checked; port 0 picks a free one."""
    host, sep, port = bind.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("must be HOST:PORT, e.g. 127.0.0.1:8377")
    return host, int(port)


class Rules(BaseSettings):
    """The validators of :class:`executive.settings.Settings`, which declares the fields
    (hence ``check_fields=False``)."""

    if TYPE_CHECKING:  # what the checks read: fields and values Settings declares
        home: Path
        store_backend: str
        store_url: SecretStr | None
        mem0_api_key: SecretStr | None
        outputs: Path

    @field_validator("sandbox_writable", "sandbox_hide", "peer_homes", check_fields=False)
    @classmethod
    def _absolute_folders(cls, value: str) -> str:
        relative = [p for p in split(value) if not Path(p).expanduser().is_absolute()]
        if relative:
            raise ValueError(f"must be absolute folders: {', '.join(relative)}")
        return value

    @field_validator("worker_allow_hosts", check_fields=False)
    @classmethod
    def _hosts(cls, value: str) -> str:
        hosts.parse(value)  # raises ValueError naming each entry that is not a host
        return value

    @field_validator("store_url", check_fields=False)
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(
            ("postgresql://", "postgres://")
        ):
            raise ValueError("must be a postgresql:// URL")
        return value

    @field_validator("user_id", "cohort", "executive_name", check_fields=False)
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is not None and not _IDENT.match(value):
            raise ValueError("must be letters, digits, '.', '_' or '-', with no spaces")
        return value

    @field_validator("timezone", check_fields=False)
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("not a known IANA time zone (e.g. UTC, Europe/Berlin)") from exc
        return value

    @field_validator("snapshot_time", check_fields=False)
    @classmethod
    def _hhmm(cls, value: str) -> str:
        if not _HHMM.match(value):
            raise ValueError("must be HH:MM on a 24-hour clock")
        return value

    @field_validator("worker_env", check_fields=False)
    @classmethod
    def _env_names(cls, value: str) -> str:
        bad = [n for n in split(value) if not _ENV_NAME.match(n)]
        if bad:
            raise ValueError(f"not variable names: {', '.join(bad)}")
        tier = [n for n in split(value) if _EXECUTIVE_TIER.match(n)]
        if tier:
            raise ValueError(f"executive-tier variables never reach a worker: {', '.join(tier)}")
        return value

    @field_validator("home", "output_root", check_fields=False)
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @field_validator("dashboard_allow_uids", check_fields=False)
    @classmethod
    def _accounts(cls, value: str) -> str:
        account_uids(value)  # raises ValueError naming each account this host lacks
        return value

    @field_validator("dashboard_bind", check_fields=False)
    @classmethod
    def _bind(cls, value: str, info: ValidationInfo) -> str:
        host, _ = dashboard_address(value)  # raises ValueError naming what is wrong
        # Off loopback the pages (ledgers, packs, memories) would be anyone's to read. The
        # flag and the token are validated before this field (absent if they were bad).
        tokenless = "dashboard_token" in info.data and info.data["dashboard_token"] is None
        if info.data.get("dashboard", True) and tokenless and not is_loopback(host):
            raise ValueError(
                "is not loopback: set EXECUTIVE_DASHBOARD_TOKEN, bind 127.0.0.1, or "
                "EXECUTIVE_DASHBOARD=false"
            )
        return value

    @model_validator(mode="after")
    def _backend_needs(self) -> Self:
        if self.store_backend == "platform" and self.mem0_api_key is None:
            raise ValueError("EXECUTIVE_STORE=platform needs V3_MEM0_API_KEY")
        if self.store_backend == "postgres" and self.store_url is None:
            raise ValueError("EXECUTIVE_STORE=postgres needs EXECUTIVE_STORE_URL")
        out = self.outputs
        if out == self.home or self.home in out.parents:
            raise ValueError("EXECUTIVE_OUTPUT_ROOT must be outside the agent home")
        return self
