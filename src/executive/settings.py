"""All configuration: the process environment, then ``<home>/.env.executive``.

Variable names are the original system's where it had one (``V3_*``, ``IDLE_SLEEP_SECONDS``,
``WORKER_VENDOR`` ...) and ``EXECUTIVE_*`` for what we add. An empty value (``KEY=``) means
unset for every variable: the original lost a whole harvest to ``V3_MEM0_COHORT=`` being read
as ``""``, and ``env_ignore_empty`` makes that class of bug impossible.

Here the variables are declared; how they are read and checked is in :mod:`executive.config`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from executive.config.derived import Derived
from executive.config.flags import Flag, MemoryGates, MemorySwitches
from executive.config.rules import Rules
from executive.config.sections import Budget, Dashboard, SharedStore, WorkerLimits
from executive.config.sources import SettingsError as SettingsError  # importable from here
from executive.config.sources import Sources, alias


class Settings(
    MemoryGates,
    Derived,
    Rules,
    Sources,
    SharedStore,
    Dashboard,
    WorkerLimits,
    Budget,
    MemorySwitches,
):
    """Validated configuration. Build it with :func:`load_settings`; the bases hold the rest."""

    model_config = SettingsConfigDict(
        env_ignore_empty=True,
        extra="ignore",
        populate_by_name=True,
        case_sensitive=True,
        frozen=True,
    )

    # --- where the agent lives ------------------------------------------------------------
    home: Path = Field(
        default_factory=Path.cwd,
        validation_alias=alias("EXECUTIVE_HOME", "AGENT_PATH"),
        description="the agent home, a git repository (default: the current directory)",
    )
    output_root: Path | None = Field(
        None,
        validation_alias="EXECUTIVE_OUTPUT_ROOT",
        description="where workers run, one folder per bundle; never inside the home (default: <home>-outputs beside it)",
    )

    # --- memory (its master switch and the hooks' flags: MemorySwitches, in config/flags.py) ---
    mem0_api_key: SecretStr | None = Field(
        None,
        validation_alias="V3_MEM0_API_KEY",
        description="mem0 Platform API key (only with EXECUTIVE_STORE=platform); never reaches a worker",
    )
    user_id: str | None = Field(
        None,
        validation_alias="V3_MEM0_USER_ID",
        description="this installation's identity in the store; never commit it",
    )
    top_k: int = Field(
        10, ge=1, le=100, validation_alias="V3_MEM0_TOP_K", description="results per memory search"
    )
    confidence_floor: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        validation_alias="V3_MEM0_CONFIDENCE_FLOOR",
        description="memories whose stored confidence is below this never reach a pack",
    )
    env: Literal["test", "dev", "prod"] = Field(
        "prod",
        validation_alias="V3_MEM0_ENV",
        description="env stamped on writes and filtered on reads: test, dev or prod",
    )
    cohort: str | None = Field(
        None,
        validation_alias="V3_MEM0_COHORT",
        description="optional sub-isolation tag for parallel test runs; leave empty in production",
    )

    # --- memory: where it is kept (ours) --------------------------------------------------
    store_backend: Literal["local", "platform", "inmemory", "postgres"] = Field(
        "local",
        validation_alias="EXECUTIVE_STORE",
        description=(
            "memory backend: local (embedded, offline), postgres (Postgres + pgvector, shareable"
            " by several executives), platform (mem0 Platform), or inmemory (a journaled fake"
            " with a word-hashing embedder: for tests and trials)"
        ),
    )
    qdrant_url: str | None = Field(
        None,
        validation_alias="EXECUTIVE_QDRANT_URL",
        description="use a Qdrant server at this URL instead of the embedded folder",
    )
    qdrant_api_key: SecretStr | None = Field(
        None,
        validation_alias="EXECUTIVE_QDRANT_API_KEY",
        description="API key for that Qdrant server",
    )
    embedder: Literal["minilm-int8-smooth", "minilm-int8", "minilm-fp32"] = Field(
        "minilm-int8-smooth",
        validation_alias="EXECUTIVE_EMBEDDER",
        description="embedding model on ONNX Runtime; changing it needs `executive mem rebuild`",
    )
    embed_threads: int = Field(
        1,
        ge=1,
        le=64,
        validation_alias="EXECUTIVE_EMBED_THREADS",
        description="ONNX Runtime threads per embed: more speed up batches on an idle host",
    )
    models_dir: Path | None = Field(
        None,
        validation_alias="EXECUTIVE_MODELS_DIR",
        description="where set-up put the ONNX models (default: inside the venv)",
    )
    mem0_host: str = Field(
        "https://api.mem0.ai",
        validation_alias="EXECUTIVE_MEM0_HOST",
        description="mem0 Platform address",
    )
    platform_poll_seconds: float = Field(
        1.5,
        gt=0,
        validation_alias="EXECUTIVE_PLATFORM_POLL_SECONDS",
        description="how often a Platform write's event is polled",
    )
    platform_poll_timeout_seconds: float = Field(
        60.0,
        gt=0,
        validation_alias="EXECUTIVE_PLATFORM_POLL_TIMEOUT_SECONDS",
        description="how long a Platform write may stay unconfirmed before it is left pending",
    )
    replay_interval_seconds: float = Field(
        300.0,
        gt=0,
        validation_alias="EXECUTIVE_REPLAY_INTERVAL_SECONDS",
        description="how often unconfirmed writes are replayed from the ledger",
    )
    store_timeout_seconds: float = Field(
        30.0,
        gt=0,
        validation_alias="EXECUTIVE_STORE_TIMEOUT_SECONDS",
        description="time limit of one store call",
    )

    # --- hooks (ours) ---------------------------------------------------------------------
    skill_engine: Literal["builtin", "claude"] = Field(
        "builtin",
        validation_alias="EXECUTIVE_SKILL_ENGINE",
        description="who carries out the hooks: builtin (deterministic, no LLM) or claude",
    )
    skill_engine_fallback: Flag = Field(
        True,
        validation_alias="EXECUTIVE_SKILL_ENGINE_FALLBACK",
        description="when the claude engine cannot run, fall back to builtin for that run",
    )
    hook_timeout_seconds: float = Field(
        120.0,
        gt=0,
        validation_alias="EXECUTIVE_HOOK_TIMEOUT_SECONDS",
        description="time limit of one hook run",
    )
    model: str | None = Field(
        None,
        validation_alias="MODEL",
        description="model for the claude skill engine and claude workers (default: the CLI's own)",
    )

    # --- the loop (original names) --------------------------------------------------------
    idle_sleep_seconds: float = Field(
        30.0,
        gt=0,
        validation_alias="IDLE_SLEEP_SECONDS",
        description="pause between iterations when there is no work",
    )
    unhealthy_sleep_seconds: float = Field(
        60.0,
        gt=0,
        validation_alias="UNHEALTHY_SLEEP_SECONDS",
        description="pause after a failed health check",
    )
    unhealthy_after_failures: int = Field(
        3,
        ge=1,
        validation_alias="EXECUTIVE_UNHEALTHY_AFTER_FAILURES",
        description="failed iterations in a row after which /healthz and status report unhealthy",
    )
    worker_vendor: Literal["claude", "command"] = Field(
        "claude",
        validation_alias="WORKER_VENDOR",
        description="default worker vendor for bundles that name none: claude or command",
    )
    worker_timeout_ms: int = Field(
        2_700_000,
        gt=0,
        validation_alias="WORKER_TIMEOUT_MS",
        description="wall-clock limit of one worker run",
    )
    max_turns_per_step: int = Field(
        50,
        ge=1,
        validation_alias="MAX_TURNS_PER_STEP",
        description="max turns of a claude worker when the bundle sets none",
    )
    breakdown_threshold_turns: int = Field(
        100,
        ge=1,
        validation_alias="BREAKDOWN_THRESHOLD_TURNS",
        description="a step estimated above this many turns is flagged for a human to split",
    )
    max_retries: int = Field(
        10,
        ge=1,
        validation_alias="MAX_RETRIES",
        description="failed attempts before a bundle is blocked",
    )
    retry_backoff_seconds: float = Field(
        30.0,
        ge=0,
        validation_alias="EXECUTIVE_RETRY_BACKOFF_SECONDS",
        description="wait after a bundle's first failed attempt, doubled after each further failure (0: retry at once); other bundles run meanwhile",
    )
    retry_backoff_max_seconds: float = Field(
        1800.0,
        ge=0,
        validation_alias="EXECUTIVE_RETRY_BACKOFF_MAX_SECONDS",
        description="the longest wait between failed attempts of a bundle",
    )

    spec_files: str = Field(
        "",
        validation_alias="EXECUTIVE_SPEC_FILES",
        description="comma-separated home-relative files whose numbered rules become principles, beside constitution.md",
    )

    # --- the loop (ours) ------------------------------------------------------------------
    claude_bin: str = Field(
        "claude",
        validation_alias="EXECUTIVE_CLAUDE_BIN",
        description="the Claude Code CLI that claude workers and the LLM engine run; left at claude: claude on PATH, else the one claude-agent-sdk bundles (`executive doctor` names which)",
    )
    worker_env: str = Field(
        "",
        validation_alias="EXECUTIVE_WORKER_ENV",
        description="comma-separated extra variables workers may see (never V3_*, MEM0_* or store keys)",
    )
    retro_interval_days: int = Field(
        7,
        ge=1,
        validation_alias="EXECUTIVE_RETRO_INTERVAL_DAYS",
        description="write a retrospective at least this often",
    )
    retro_after_outcomes: int = Field(
        10,
        ge=1,
        validation_alias="EXECUTIVE_RETRO_AFTER_OUTCOMES",
        description="or as soon as this many new outcomes are in the ledger",
    )
    # --- bundle intake (issue 17): what one bundle may make the loop read ---------------------
    bundle_prompt_max_bytes: int = Field(
        262_144,
        ge=1024,
        validation_alias="EXECUTIVE_BUNDLE_PROMPT_MAX_BYTES",
        description="largest PROMPT.md a bundle may have; a larger one is quarantined",
    )

    # --- worker isolation (ours; see README "Security") ------------------------------------
    worker_isolation: Literal["auto", "sandbox", "user", "none"] = Field(
        "auto",
        validation_alias="EXECUTIVE_WORKER_ISOLATION",
        description="how workers and verifiers are isolated: sandbox (bubblewrap), user (a separate account), none (unsafe), or auto (the first that works)",
    )
    worker_network: Flag = Field(
        True,
        validation_alias="EXECUTIVE_WORKER_NETWORK",
        description="whether a sandboxed worker reaches the network (claude workers need it): only through the daemon's egress proxy, to EXECUTIVE_WORKER_ALLOW_HOSTS; false: none at all",
    )
    worker_allow_hosts: str = Field(
        "api.anthropic.com",
        validation_alias="EXECUTIVE_WORKER_ALLOW_HOSTS",
        description="comma-separated hosts a sandboxed worker may reach through the egress proxy: name, *.domain or IP, optional :port (default ports 443 and 80), e.g. api.anthropic.com,pypi.org,files.pythonhosted.org; a name reaches public addresses only, an IP entry is reached whatever it is",
    )
    worker_user: str = Field(
        "nobody",
        validation_alias="EXECUTIVE_WORKER_USER",
        description="the unprivileged account workers run as in user mode (the daemon must be root)",
    )
    sandbox_writable: str = Field(
        "",
        validation_alias="EXECUTIVE_SANDBOX_WRITABLE",
        description="comma-separated absolute folders a sandboxed worker may also write (e.g. ~/.claude for claude workers)",
    )
    sandbox_hide: str = Field(
        "",
        validation_alias="EXECUTIVE_SANDBOX_HIDE",
        description="comma-separated absolute folders hidden from sandboxed workers besides the home (e.g. ~/.ssh)",
    )

    # --- the daemon (ours) ----------------------------------------------------------------
    timezone: str = Field(
        "UTC",
        validation_alias="EXECUTIVE_TIMEZONE",
        description="the operator's time zone: of the daily snapshot schedule, and of the day EXECUTIVE_BUDGET_DAY_USD counts",
    )
    snapshot_time: str = Field(
        "04:00",
        validation_alias="EXECUTIVE_SNAPSHOT_TIME",
        description="time of the daily snapshot, HH:MM",
    )
    snapshot_commit: Flag = Field(
        True,
        validation_alias=alias("EXECUTIVE_GIT_COMMIT", "EXECUTIVE_SNAPSHOT_COMMIT"),
        description="commit ledgers, retrospectives, snapshots and the workspace (bundles, needs-you.md) to the home repository after each outcome and snapshot (never pushes)",
    )
    # --- retention (the daily prune; 0 keeps everything) ------------------------------------
    retain_worker_logs_days: int = Field(
        30,
        ge=0,
        validation_alias="EXECUTIVE_RETAIN_WORKER_LOGS_DAYS",
        description="delete worker logs (ledgers/worker-logs/<day>) older than this many days",
    )
    retain_snapshots_days: int = Field(
        90,
        ge=0,
        validation_alias="EXECUTIVE_RETAIN_SNAPSHOTS_DAYS",
        description="delete snapshot files older than this many days (never the newest; git keeps committed ones)",
    )
    retain_outputs_days: int = Field(
        14,
        ge=0,
        validation_alias="EXECUTIVE_RETAIN_OUTPUTS_DAYS",
        description="delete output folders of finished bundles untouched for this many days",
    )
    shutdown_grace_seconds: float = Field(
        30.0,
        ge=0,
        validation_alias="EXECUTIVE_SHUTDOWN_GRACE_SECONDS",
        description="on SIGTERM/SIGINT, how long the running iteration may take to finish",
    )
    log_format: Literal["auto", "json", "console"] = Field(
        "auto",
        validation_alias="EXECUTIVE_LOG_FORMAT",
        description="json, console, or auto (console on a terminal)",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", validation_alias="EXECUTIVE_LOG_LEVEL", description="debug, info, warning or error"
    )


# The loading functions, under the names the rest of the code imports from here.
load_settings = Settings.load
value_sources = Settings.value_sources
variable_names = Settings.variable_names
