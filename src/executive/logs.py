"""Structured logs: one JSON object per line on stdout, secrets redacted wherever they appear.

Everything goes through one pipeline: our own structlog loggers and the stdlib loggers of
mem0, httpx, qdrant and APScheduler (through ``ProcessorFormatter``), and Python warnings.
A foreign line's ``event`` is always ``foreign.log`` (the library's own sentence goes in
``message``, its logger in ``logger``): a library's text changes with its version and may
quote anything, so searches and alerts key on stable names. The redaction is
:mod:`executive.redact`'s process-wide redactor, the last step before rendering. PM2 or journald own the files and their rotation.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from executive import redact

FOREIGN_EVENT = "foreign.log"

_NOISY = {"httpx": logging.WARNING, "httpcore": logging.WARNING, "urllib3": logging.WARNING}


def configure_logging(
    *,
    fmt: str = "auto",
    level: str = "info",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> None:
    """Route every log line of the process through one structlog pipeline; ``fmt`` is
    ``json``, ``console`` or ``auto`` (console when the stream is a terminal)."""
    out = stream if stream is not None else sys.stdout
    redact.learn(secrets=secrets)
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
        foreign_pre_chain=[*shared, _foreign_event],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *([] if console else [structlog.processors.dict_tracebacks]),
            redact.redactor(),
            renderer,
        ],
    )
    _route_stdlib(logging.StreamHandler(out), formatter, level)


def _foreign_event(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """A stdlib record (psycopg, mem0, APScheduler, warnings): a stable event name, the
    library's sentence as ``message``."""
    event_dict["message"] = event_dict.get("event")
    event_dict["event"] = FOREIGN_EVENT
    return event_dict


def _route_stdlib(handler: logging.Handler, formatter: logging.Formatter, level: str) -> None:
    """Every stdlib logger (and Python's warnings) into ``handler``, at the levels asked for."""
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
