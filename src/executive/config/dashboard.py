"""The variables of the daemon's dashboard, /metrics and /healthz, declared apart.

:class:`executive.settings.Settings` inherits them; the env template lists them in a section
of their own.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from executive.config.flags import Flag


class Dashboard(BaseSettings):
    dashboard: Flag = Field(
        True,
        validation_alias="EXECUTIVE_DASHBOARD",
        description="serve the read-only dashboard, /metrics and /healthz from the daemon",
    )
    dashboard_token: SecretStr | None = Field(
        None,
        validation_alias="EXECUTIVE_DASHBOARD_TOKEN",
        description="bearer token every dashboard request must carry (required off loopback)",
    )
    # After the flag and the token: its rule (off loopback, a token) reads them, and is then
    # reported with every other bad value at once, by name.
    dashboard_bind: str = Field(
        "127.0.0.1:8377",
        validation_alias="EXECUTIVE_DASHBOARD_BIND",
        description="HOST:PORT of the dashboard; anything but loopback needs EXECUTIVE_DASHBOARD_TOKEN",
    )
    dashboard_refresh_seconds: int = Field(
        5,
        ge=1,
        le=3600,
        validation_alias="EXECUTIVE_DASHBOARD_REFRESH_SECONDS",
        description="how often an open dashboard page refreshes itself in place",
    )
