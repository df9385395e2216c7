"""The variables of a store shared by several executives (Postgres), declared apart.

:class:`executive.settings.Settings` inherits them; the env template lists them in a section
of their own.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings


class SharedStore(BaseSettings):
    store_url: SecretStr | None = Field(
        None,
        validation_alias="EXECUTIVE_STORE_URL",
        description="with EXECUTIVE_STORE=postgres: the database, postgresql://USER:PASSWORD@HOST:5432/DB?sslmode=verify-full (a secret: never logged)",
    )
    store_pool_size: int = Field(
        4,
        ge=1,
        le=32,
        validation_alias="EXECUTIVE_STORE_POOL_SIZE",
        description="with EXECUTIVE_STORE=postgres: most connections this process holds",
    )
    executive_name: str | None = Field(
        None,
        max_length=64,
        validation_alias="EXECUTIVE_NAME",
        description="this executive's name, recorded on every memory it writes (default: the home folder's name)",
    )
    peer_homes: str = Field(
        "",
        validation_alias="EXECUTIVE_PEER_HOMES",
        description="comma-separated homes of the other executives sharing this store: rebuild replays, and drift compares with, the union of every home's harvest ledgers",
    )
