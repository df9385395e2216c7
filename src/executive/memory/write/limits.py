"""The envelope's limits: lengths, full-match patterns, real timestamps, encodable strings.

Kept apart from ``classify`` so the numbers are in one place (the README quotes them) and so
the helpers that show a hostile value in a reason are shared: a reason never carries more
than a short, escaped excerpt of what it refuses.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from executive.dates import parse_instant

# About a page of prose: a memory is one fact or lesson, not a document. The pack cuts
# longer texts anyway; the limit keeps a single write from costing seconds of embedding.
MAX_TEXT_CHARS = 4000
MAX_SOURCE_CHARS = 300
MAX_ID_CHARS = 128
MAX_USER_ID_CHARS = 64
MAX_TAG_CHARS = 64
MAX_COHORT_CHARS = 64
MAX_EXECUTIVE_CHARS = 64
MAX_SHOWN = 40

# ``re.fullmatch`` everywhere: ``$`` matches before a trailing newline.
USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
RUN_ID = re.compile(r"\d{4}-\d{2}-\d{2}(?:-[A-Za-z0-9][A-Za-z0-9_-]*)?")
SCHEMA_VERSION_PATTERN = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}")
# A repository-relative path as a person would write it: printable, no control characters.
SOURCE = re.compile(r"[^\x00-\x1f\x7f]+")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})?")


def show(value: Any) -> str:
    """A short, escaped excerpt of ``value`` for a reason; never the whole of a huge value.

    Only scalars are shown: ``repr`` of a 50,000-deep list would itself recurse too deeply.
    """
    if isinstance(value, str):
        text = value if len(value) <= MAX_SHOWN else value[:MAX_SHOWN] + "…"
        return ascii(text)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return f"a {type(value).__name__}"


def utf8_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as UTF-8 (a lone surrogate), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid UTF-8 (lone surrogate at character {exc.start})"
    return None


def timestamp(value: str) -> datetime | None:
    """``value`` as a real ISO datetime (at least ``YYYY-MM-DDTHH:MM:SS``), or None."""
    return parse_instant(value) if TIMESTAMP.fullmatch(value) else None


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def field_name(name: Any) -> str:
    """A field name fit to print: a plain name as is, any other quoted, escaped and short."""
    if isinstance(name, str) and _PLAIN_NAME.fullmatch(name):
        return name
    return show(name) if isinstance(name, str) else f"<{show(name)}>"
