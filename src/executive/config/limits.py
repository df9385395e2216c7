"""The variables that bound one worker run (its output, processes and files), declared apart.

:class:`executive.settings.Settings` inherits them; the env template lists them in a section
of their own.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from executive.config.flags import Flag


class WorkerLimits(BaseSettings):
    worker_log_max_bytes: int = Field(
        16 * 1024 * 1024,
        ge=4096,
        validation_alias="EXECUTIVE_WORKER_LOG_MAX_BYTES",
        description="most bytes of a worker's (or verifier's) output kept in its run log; past it one marker line, the rest dropped",
    )
    worker_max_processes: int = Field(
        512,
        ge=16,
        validation_alias="EXECUTIVE_WORKER_MAX_PROCESSES",
        description="most processes and threads one worker run may have at once (a cgroup's pids.max, or RLIMIT_NPROC where it binds; doctor says which)",
    )
    worker_max_file_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=1024 * 1024,
        validation_alias="EXECUTIVE_WORKER_MAX_FILE_BYTES",
        description="largest file a worker may write (RLIMIT_FSIZE), and the size of a sandbox's /tmp",
    )
    worker_cgroups: Flag = Field(
        True,
        validation_alias="EXECUTIVE_WORKER_CGROUPS",
        description="give each worker run a cgroup of its own where the host lets the daemon (pids.max, and every process of the run ended with it)",
    )
