"""All configuration: the process environment, then ``<home>/.env.executive``.

Variable names are the original system's where it had one (``V3_*``, ``IDLE_SLEEP_SECONDS``,
``WORKER_VENDOR`` ...) and ``EXECUTIVE_*`` for what we add. An empty value (``KEY=``) means
unset for every variable: the original lost a whole harvest to ``V3_MEM0_COHORT=`` being read
as ``""``, and ``env_ignore_empty`` makes that class of bug impossible.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_FILE_NAME = ".env.executive"

# Hook name -> the environment variable that switches it on (original names and order).
HOOK_FLAGS: dict[str, str] = {
    "pre-work-selection": "V3_MEM_HOOK_PRE_WORK",
    "pre-spawn-pack": "V3_MEM_HOOK_PRE_SPAWN",
    "post-run-harvest": "V3_MEM_HOOK_POST_RUN",
    "failure-diagnosis": "V3_MEM_HOOK_FAIL_DIAG",
    "post-retro-harvest": "V3_MEM_HOOK_POST_RETRO",
}


def _parse_flag(value: Any) -> Any:
    # The original compares against the string "true"; anything else was silently off.
    # We accept true/false in any case and refuse the rest, so a typo is an error, not "off".
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ValueError("must be true or false")


Flag = Annotated[bool, BeforeValidator(_parse_flag)]

_IDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Mirrors the worker guard: memory flags and keys, mem0's variables, the daemon's settings.
_EXECUTIVE_TIER = re.compile(r"^(V3_|MEM0_|EXECUTIVE_)|^AGENT_PATH$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def _alias(*names: str) -> Any:
    return AliasChoices(*names) if len(names) > 1 else names[0]


class Settings(BaseSettings):
    """Validated configuration. Build it with :func:`load_settings`."""

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
        validation_alias=_alias("EXECUTIVE_HOME", "AGENT_PATH"),
        description="the agent home, a git repository (default: the current directory)",
    )
    output_root: Path | None = Field(
        None,
        validation_alias="EXECUTIVE_OUTPUT_ROOT",
        description="where workers run, one folder per bundle; never inside the home (default: <home>-outputs beside it)",
    )

    # --- memory: master switch and the five hooks (original names) --------------------------
    # None means unset: hooks treat it as off, the `executive mem` surface as on (as the
    # original's runner and CLI did).
    memory_enabled: Flag | None = Field(
        None,
        validation_alias="V3_MEMORY_ENABLED",
        description="master switch for memory; hooks run only when this is true",
    )
    hook_pre_work: Flag = Field(
        False,
        validation_alias="V3_MEM_HOOK_PRE_WORK",
        description="hook A: memory synthesis before work selection (read, audit only)",
    )
    hook_pre_spawn: Flag = Field(
        False,
        validation_alias="V3_MEM_HOOK_PRE_SPAWN",
        description="hook B: memory pack appended to every worker's CLAUDE.md (read)",
    )
    hook_post_run: Flag = Field(
        False,
        validation_alias="V3_MEM_HOOK_POST_RUN",
        description="hook C: harvest the outcome of a successful run (write)",
    )
    hook_fail_diag: Flag = Field(
        False,
        validation_alias="V3_MEM_HOOK_FAIL_DIAG",
        description="hook D: failure diagnosis from the third failure on (read, may write)",
    )
    hook_post_retro: Flag = Field(
        False,
        validation_alias="V3_MEM_HOOK_POST_RETRO",
        description="hook E: distil a retrospective into memories (write)",
    )

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
    store_backend: Literal["local", "platform"] = Field(
        "local",
        validation_alias="EXECUTIVE_STORE",
        description="memory backend: local (embedded, offline) or platform (mem0 Platform)",
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
        description="the Claude Code CLI used by claude workers",
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
        description="whether a sandboxed worker has the network (claude workers need it); false gives it loopback only",
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

    @field_validator("sandbox_writable", "sandbox_hide")
    @classmethod
    def _absolute_folders(cls, value: str) -> str:
        relative = [p for p in _split(value) if not Path(p).expanduser().is_absolute()]
        if relative:
            raise ValueError(f"must be absolute folders: {', '.join(relative)}")
        return value

    # --- the daemon (ours) ----------------------------------------------------------------
    timezone: str = Field(
        "UTC",
        validation_alias="EXECUTIVE_TIMEZONE",
        description="time zone of the daily snapshot schedule",
    )
    snapshot_time: str = Field(
        "04:00",
        validation_alias="EXECUTIVE_SNAPSHOT_TIME",
        description="time of the daily snapshot, HH:MM",
    )
    snapshot_commit: Flag = Field(
        True,
        validation_alias=_alias("EXECUTIVE_GIT_COMMIT", "EXECUTIVE_SNAPSHOT_COMMIT"),
        description="commit ledgers, retrospectives and snapshots to the home repository after each outcome and snapshot (never pushes)",
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

    # --- the dashboard, /metrics and /healthz (ours) ---------------------------------------
    dashboard: Flag = Field(
        True,
        validation_alias="EXECUTIVE_DASHBOARD",
        description="serve the read-only dashboard, /metrics and /healthz from the daemon",
    )
    dashboard_bind: str = Field(
        "127.0.0.1:8377",
        validation_alias="EXECUTIVE_DASHBOARD_BIND",
        description="HOST:PORT of the dashboard; anything but loopback needs EXECUTIVE_DASHBOARD_TOKEN",
    )
    dashboard_token: SecretStr | None = Field(
        None,
        validation_alias="EXECUTIVE_DASHBOARD_TOKEN",
        description="bearer token every dashboard request must carry (required off loopback)",
    )

    @field_validator("user_id", "cohort")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is not None and not _IDENT.match(value):
            raise ValueError("must be letters, digits, '.', '_' or '-', with no spaces")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("not a known IANA time zone (e.g. UTC, Europe/Berlin)") from exc
        return value

    @field_validator("snapshot_time")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        if not _HHMM.match(value):
            raise ValueError("must be HH:MM on a 24-hour clock")
        return value

    @field_validator("worker_env")
    @classmethod
    def _env_names(cls, value: str) -> str:
        bad = [n for n in _split(value) if not _ENV_NAME.match(n)]
        if bad:
            raise ValueError(f"not variable names: {', '.join(bad)}")
        tier = [n for n in _split(value) if _EXECUTIVE_TIER.match(n)]
        if tier:
            raise ValueError(f"executive-tier variables never reach a worker: {', '.join(tier)}")
        return value

    @field_validator("home", "output_root")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @field_validator("dashboard_bind")
    @classmethod
    def _bind(cls, value: str) -> str:
        dashboard_address(value)  # raises ValueError naming what is wrong
        return value

    @model_validator(mode="after")
    def _dashboard_needs(self) -> Settings:
        # Off loopback the pages (ledgers, packs, memories) would be anyone's to read.
        if self.dashboard and self.dashboard_token is None and not self.dashboard_loopback:
            raise ValueError(
                f"EXECUTIVE_DASHBOARD_BIND={self.dashboard_bind} is not loopback: "
                "set EXECUTIVE_DASHBOARD_TOKEN, bind 127.0.0.1, or EXECUTIVE_DASHBOARD=false"
            )
        return self

    @model_validator(mode="after")
    def _backend_needs(self) -> Settings:
        if self.store_backend == "platform" and self.mem0_api_key is None:
            raise ValueError("EXECUTIVE_STORE=platform needs V3_MEM0_API_KEY")
        out = self.outputs
        if out == self.home or self.home in out.parents:
            raise ValueError("EXECUTIVE_OUTPUT_ROOT must be outside the agent home")
        return self

    # --- derived ----------------------------------------------------------------------------
    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def outputs(self) -> Path:
        """Where workers run: never inside the agent home."""
        if self.output_root is not None:
            return self.output_root
        return self.home.parent / f"{self.home.name}-outputs"

    @property
    def worker_env_names(self) -> list[str]:
        return _split(self.worker_env)

    @property
    def spec_file_list(self) -> list[str]:
        return _split(self.spec_files)

    @property
    def snapshot_hour_minute(self) -> tuple[int, int]:
        hour, minute = self.snapshot_time.split(":")
        return int(hour), int(minute)

    def hook_flag(self, hook: str) -> bool:
        """Whether the per-hook flag is on (the master switch is separate)."""
        field = _FLAG_FIELDS[HOOK_FLAGS[hook]]
        return bool(getattr(self, field))

    @property
    def dashboard_host_port(self) -> tuple[str, int]:
        return dashboard_address(self.dashboard_bind)

    @property
    def dashboard_loopback(self) -> bool:
        host = self.dashboard_host_port[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False  # a name other than localhost may resolve anywhere

    @property
    def hooks_master_on(self) -> bool:
        """The runner's reading of the master switch: unset is off."""
        return self.memory_enabled is True

    @property
    def surface_memory_on(self) -> bool:
        """The `executive mem` surface's reading: only an explicit false disables it."""
        return self.memory_enabled is not False

    def secret_values(self) -> list[str]:
        return [
            s.get_secret_value()
            for s in (self.mem0_api_key, self.qdrant_api_key, self.dashboard_token)
            if s is not None and s.get_secret_value()
        ]


def dashboard_address(bind: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) split and checked; port 0 picks a free one."""
    host, sep, port = bind.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("must be HOST:PORT, e.g. 127.0.0.1:8377")
    return host, int(port)


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


_FLAG_FIELDS = {
    alias: name
    for name, info in Settings.model_fields.items()
    if isinstance(alias := info.validation_alias, str) and alias.startswith("V3_MEM_HOOK_")
}

_SECRET_FIELDS = {
    name
    for name, info in Settings.model_fields.items()
    if info.annotation
    in (
        SecretStr | None,
        SecretStr,
    )
}


class SettingsError(Exception):
    """Configuration that cannot start the daemon. ``problems`` holds (variable, value, why).

    ``sources`` says where each named variable's value came from, so the operator edits the
    right place: the environment wins over the file, and editing the file would change nothing.
    """

    def __init__(
        self, problems: list[tuple[str, str, str]], sources: Mapping[str, str] | None = None
    ) -> None:
        self.problems = problems
        self.sources = dict(sources or {})
        super().__init__(self.render())

    def render(self) -> str:
        lines = ["invalid configuration:"]
        for variable, value, why in self.problems:
            source = self.sources.get(variable)
            where = f" (from {source})" if source else ""
            lines.append(f"  {variable}={value!r}{where}: {why}")
        return "\n".join(lines)


def value_sources(env_file: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Where each variable with a value gets it: ``environment`` or the env file's path.

    Variables left out take their default. An empty value is unset, as everywhere.
    """
    from dotenv import dotenv_values  # pydantic-settings' own reader of env files

    env = os.environ if environ is None else environ
    in_file = dotenv_values(env_file) if env_file.is_file() else {}
    sources: dict[str, str] = {}
    for name in variable_names():
        if env.get(name):
            sources[name] = "environment"
        elif in_file.get(name):
            sources[name] = str(env_file)
    return sources


def env_file_for(home: Path) -> Path:
    return home / ENV_FILE_NAME


def resolve_home(home: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The agent home: an explicit argument, then EXECUTIVE_HOME / AGENT_PATH, then the cwd."""
    env = os.environ if environ is None else environ
    if home is None:
        chosen = env.get("EXECUTIVE_HOME") or env.get("AGENT_PATH")
        home = Path(chosen) if chosen else Path.cwd()
    return home.expanduser().resolve()


def load_settings(home: Path | None = None, **overrides: Any) -> Settings:
    """Read the environment and ``<home>/.env.executive``; the process environment wins.

    Raises :class:`SettingsError` naming every bad variable, its value and why.
    """
    root = resolve_home(home)
    env_file = env_file_for(root)
    try:
        return Settings(
            _env_file=env_file if env_file.is_file() else None,
            home=root,
            **overrides,
        )
    except ValidationError as exc:
        raise SettingsError(_problems(exc), value_sources(env_file)) from None


def _problems(exc: ValidationError) -> list[tuple[str, str, str]]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"]]
        variable = _variable_name(loc[0]) if loc else "configuration"
        field = _field_for_variable(variable)
        value = err.get("input")
        shown = "***" if field in _SECRET_FIELDS else _short(value)
        reason = err["msg"].removeprefix("Value error, ")
        if not loc:
            # Model-level rules name their variables in the message itself.
            variable, shown = "configuration", ""
        problems.append((variable, shown, reason))
    return problems


def _variable_name(loc: str) -> str:
    info = Settings.model_fields.get(loc)
    if info is None:
        return loc
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return str(alias or loc)


def _field_for_variable(variable: str) -> str | None:
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        names = alias.choices if isinstance(alias, AliasChoices) else [alias]
        if variable in names or variable == name:
            return name
    return None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def variable_names() -> list[str]:
    """Every environment variable the daemon reads, in declaration order."""
    names: list[str] = []
    for info in Settings.model_fields.values():
        alias = info.validation_alias
        names.extend(
            str(a) for a in (alias.choices if isinstance(alias, AliasChoices) else [alias])
        )
    return names
