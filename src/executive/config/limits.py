"""The variables that bound one worker's tree (processes, file size, its log), declared apart.

:class:`executive.settings.Settings` inherits them; the env template lists them in a section
of their own. Which of them hold on a host is :mod:`executive.workers.limits`' to say
(``executive doctor`` prints it).
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings


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
