"""Groups of variables declared apart (the shared store, the dashboard, a worker's limits, the
budget): :class:`executive.settings.Settings` inherits each, and the env template gives each a
section. Which of a worker's limits hold on a host is
:mod:`executive.workers.isolation.limits`' to say (``executive doctor`` prints it)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from executive.config.flags import Flag


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
    dashboard_allow_uids: str = Field(
        "",
        validation_alias="EXECUTIVE_DASHBOARD_ALLOW_UIDS",
        description="comma-separated accounts (names or uids) whose connections from this host the dashboard serves besides the daemon's own and root's, e.g. a local Prometheus or reverse proxy; any other account here gets 403, a worker account always",
    )
    dashboard_refresh_seconds: int = Field(
        5,
        ge=1,
        le=3600,
        validation_alias="EXECUTIVE_DASHBOARD_REFRESH_SECONDS",
        description="how often an open dashboard page refreshes itself in place",
    )


class WorkerLimits(BaseSettings):
    worker_max_processes: int = Field(
        512,
        ge=8,
        validation_alias="EXECUTIVE_WORKER_MAX_PROCESSES",
        description="most processes (threads count) a worker's or verifier's tree may have at once",
    )
    worker_file_max_bytes: int = Field(
        1024**3,
        ge=1024 * 1024,
        validation_alias="EXECUTIVE_WORKER_FILE_MAX_BYTES",
        description="largest file a worker may write (a sandbox's /tmp holds this much in all)",
    )
    worker_log_max_bytes: int = Field(
        16 * 1024 * 1024,
        ge=4096,
        validation_alias="EXECUTIVE_WORKER_LOG_MAX_BYTES",
        description="most bytes of a worker's output kept in its run log; past it one marker line, the rest dropped",
    )
    worker_folder_max_files: int = Field(
        100_000,
        ge=100,
        validation_alias="EXECUTIVE_WORKER_FOLDER_MAX_FILES",
        description="most files of a worker's output folder compared before and after its run; past it the run's changes are unknown (its digest says so)",
    )


class Budget(BaseSettings):
    """What the agent may spend on paid runs (claude workers, LLM-engine hooks), in US dollars
    as Claude Code reports them; unset: no cap (:mod:`executive.workspace.spending`)."""

    budget_run_usd: float | None = Field(
        None,
        gt=0,
        validation_alias="EXECUTIVE_BUDGET_RUN_USD",
        description="most one claude worker run may cost: passed to Claude Code as --max-budget-usd, and a run that reports more fails (unset: no cap)",
    )
    budget_bundle_usd: float | None = Field(
        None,
        gt=0,
        validation_alias="EXECUTIVE_BUDGET_BUNDLE_USD",
        description="most one bundle's runs may cost in all: a bundle that reaches it is blocked, its spend in needs-you (unset: no cap)",
    )
    budget_day_usd: float | None = Field(
        None,
        gt=0,
        validation_alias="EXECUTIVE_BUDGET_DAY_USD",
        description="most the agent may spend a day (midnight to midnight in EXECUTIVE_TIMEZONE): once reached, no claude worker or LLM-engine hook starts until the next day; command workers and built-in hooks go on (unset: no cap)",
    )
