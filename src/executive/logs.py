"""Structured logs: one JSON object per line on stdout, secrets redacted wherever they appear.

Everything goes through one pipeline: our own structlog loggers and the stdlib loggers of
mem0, httpx, qdrant and APScheduler (through ``ProcessorFormatter``), and Python warnings.
PM2 or journald own the files and their rotation.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from executive import redact as _redact
from executive.redact import REDACTED, secrets_from_environment
from executive.redact import Redactor as _Redactor

__all__ = ["REDACTED", "Redactor", "configure_logging", "get_logger", "redactor"]

# Keys in an event whose value is a secret whatever it holds.
_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|token|secret|password|authorization)$")

_NOISY = {"httpx": logging.WARNING, "httpcore": logging.WARNING, "urllib3": logging.WARNING}


class Redactor(_Redactor):
    """The shared redactor as a structlog processor; keys named like secrets are blanked."""

    def __call__(self, logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
        return {key: self._clean(key, value) for key, value in event.items()}

    def _clean(self, key: Any, value: Any) -> Any:
        if isinstance(key, str) and _SECRET_KEY.search(key) and value not in (None, "", False):
            return REDACTED
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, Mapping):
            return {k: self._clean(k, v) for k, v in value.items()}
        if isinstance(value, list | tuple | set):
            return [self._clean(None, v) for v in value]
        if isinstance(value, BaseException):
            return self.scrub(repr(value))
        return value


_redactor = Redactor()
_redact.use(_redactor)


def redactor() -> Redactor:
    """The process-wide redactor (also used to scrub text that leaves through other doors)."""
    return _redactor


def configure_logging(
    *,
    fmt: str = "auto",
    level: str = "info",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> None:
    """Route every log line of the process through one structlog pipeline.

    ``fmt`` is ``json``, ``console`` or ``auto`` (console when the stream is a terminal).
    """
    out = stream if stream is not None else sys.stdout
    _redactor.add(secrets_from_environment())
    _redactor.add(secrets)
    console = fmt == "console" or (fmt == "auto" and out.isatty())
    renderer: Processor = (
        structlog.dev.ConsoleRenderer(colors=out.isatty())
        if console
        else structlog.processors.JSONRenderer()
    )
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
    ]
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *([] if console else [structlog.processors.dict_tracebacks]),
            _redactor,
            renderer,
        ],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    # Libraries (mem0, APScheduler, qdrant, httpx) speak at warning and above unless the
    # operator asks for debug: at info they are chatty, and mem0 logs memory text there.
    requested = getattr(logging, level.upper())
    root.setLevel(requested if requested == logging.DEBUG else max(requested, logging.WARNING))
    logging.getLogger("executive").setLevel(requested)
    for name, floor in _NOISY.items():
        logging.getLogger(name).setLevel(max(floor, root.level))
    # Off then on: re-hooks warnings even if something restored showwarning meanwhile.
    logging.captureWarnings(False)
    logging.captureWarnings(True)


def get_logger(name: str = "executive") -> structlog.stdlib.BoundLogger:
    return structlog.stdlib.get_logger(name)


bound = structlog.contextvars.bound_contextvars
