"""The real ``executive`` command run inside the test process.

A new interpreter costs ~0.5 s of imports before a command does anything, and the suite runs
~150 commands. Here the same typer app runs in this process (click's ``CliRunner``), with
the environment the subprocess would get, and whatever a command changes process-wide (the
environment, the logging pipeline, the redactor's secrets, the working folder) is put back
afterwards, so one command never leaks into the next test. Commands whose subject is the
process itself (``run``, which ends with ``os._exit``; a timeout; a terminal) keep a real
subprocess: ``run_cli(..., process=True)``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import structlog
from click.testing import Result
from typer.testing import CliRunner

# Commands that must run in a process of their own.
PROCESS_COMMANDS = frozenset({"run"})
_VALUED_ROOT_OPTIONS = frozenset({"--home"})


def command_of(args: tuple[str, ...]) -> str | None:
    """The top-level command in ``args`` (root options and their values skipped)."""
    rest = iter(args)
    for arg in rest:
        if arg in _VALUED_ROOT_OPTIONS:
            next(rest, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextmanager
def _process_state_kept(cwd: Path | None) -> Iterator[None]:
    from executive.memory.store import ortenv
    from executive.redact import redactor

    environ = dict(os.environ)
    folder = Path.cwd()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    structlog_config = structlog.get_config()
    secrets = set(redactor()._secrets)
    showwarning = warnings.showwarning
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(folder)
        telemetry_off = os.environ.get(ortenv.VARIABLE)
        os.environ.clear()
        os.environ.update(environ)
        if "onnxruntime" in sys.modules and telemetry_off is not None:
            # A runtime the command imported stays loaded, its telemetry latched off by this
            # variable: without it, the next import through ortenv in this process would
            # take the runtime for one imported with telemetry on, and refuse it.
            os.environ[ortenv.VARIABLE] = telemetry_off
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        for name, old in levels.items():
            logging.getLogger(name).setLevel(old)
        logging.captureWarnings(False)
        warnings.showwarning = showwarning
        structlog.configure(**structlog_config)
        redactor()._secrets = secrets
        redactor().add(())


def invoke(
    args: tuple[str, ...], env: Mapping[str, str], cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    """``executive *args`` in this process: its exit code, stdout and stderr as a process's."""
    from executive.cli import app

    def run() -> Result:
        with _process_state_kept(cwd):
            return CliRunner().invoke(app, list(args), env=dict(env), catch_exceptions=True)

    if _loop_running():  # an async test: the command's own anyio.run needs a thread of its own
        with ThreadPoolExecutor(1) as pool:
            result = pool.submit(run).result()
    else:
        result = run()
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the interpreter would print for an uncaught exception, and its exit status.
        exc = result.exception
        stderr += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        code = 1
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "executive", *args], code, result.stdout, stderr
    )
