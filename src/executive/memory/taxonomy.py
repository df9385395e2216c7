"""What a memory is: five types with confidence ranges, the enums of the envelope, scope ids.

Schema history (``SCHEMA_VERSION``): 1.0.0 is the original's taxonomy. 1.1.0 (minor: new
optional field and enum value) adds the content ``key`` and the worker vendor ``command``.
1.2.0 (minor: new optional fields) adds ``files``, the repository-relative paths a memory is
about, and ``outdated_files``/``outdated_by``: which of them a later run changed, and which
run. A memory without them stays valid. 1.3.0 (minor: new optional fields) adds
``symbols``, the functions and classes it is about (``Mixin.get_response``), and
``observed``: what of it the daemon saw itself (``files`` changed on disk, ``verifiers``
passed), the rest being the worker's report.
"""

from __future__ import annotations

import re
import secrets
import string
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum

SCHEMA_VERSION = "1.3.0"
SUPPORTED_SCHEMA_MAJOR = "1"

AGENT_ID = "executive"
GLOBAL_APP = "_global"
EXECUTIVE_APP = "_executive"
SKILL_APP_PREFIX = "_skill-"
RESERVED_APP_IDS = frozenset({GLOBAL_APP, EXECUTIVE_APP})

MAX_TAGS = 8
MAX_FILES = 20
MAX_SYMBOLS = 12
MAX_SYMBOL_CHARS = 120
# A function or class as a memory names it: dotted identifiers.
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# What the daemon can see of a run itself, apart from what the worker's record says.
OBSERVABLE = ("files", "verifiers")


class MemoryType(StrEnum):
    PRINCIPLE = "principle"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    EPISODIC = "episodic"
    REFLECTIVE = "reflective"


@dataclass(frozen=True)
class TypeRule:
    confidence_min: float
    confidence_max: float
    # Lower comes first in a pack: principle > procedural > reflective > semantic > episodic.
    priority: int


TYPE_RULES: dict[MemoryType, TypeRule] = {
    MemoryType.PRINCIPLE: TypeRule(1.0, 1.0, 0),
    MemoryType.PROCEDURAL: TypeRule(0.6, 0.9, 1),
    MemoryType.REFLECTIVE: TypeRule(0.7, 0.95, 2),
    MemoryType.SEMANTIC: TypeRule(0.7, 0.95, 3),
    MemoryType.EPISODIC: TypeRule(1.0, 1.0, 4),
}


class Env(StrEnum):
    TEST = "test"
    DEV = "dev"
    PROD = "prod"


class Category(StrEnum):
    TECHNICAL = "technical"
    FUNCTIONAL = "functional"
    PROJECT = "project"


class Importance(StrEnum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Trigger(StrEnum):
    POST_RUN = "post-run"
    FAILURE_DIAGNOSIS = "failure-diagnosis"
    POST_RETRO = "post-retro"
    SPEC_MERGE = "spec-merge"
    MANUAL_HARVEST = "manual-harvest"
    PRACTICE_LOOP = "practice-loop"


class Actor(StrEnum):
    """Who produced the fact (not who wrote it down: that is always the harvester)."""

    EXECUTIVE = "executive"
    WORKER = "worker"
    HUMAN = "human"


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"


class WorkerVendor(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    KIMI = "kimi"
    KIMI_CLI = "kimi-cli"
    KIMI_WIRE = "kimi-wire"
    COMMAND = "command"


ACTOR_FOR_TRIGGER: dict[Trigger, Actor] = {
    Trigger.POST_RUN: Actor.WORKER,
    Trigger.FAILURE_DIAGNOSIS: Actor.WORKER,
    Trigger.POST_RETRO: Actor.HUMAN,
    Trigger.SPEC_MERGE: Actor.HUMAN,
    Trigger.MANUAL_HARVEST: Actor.HUMAN,
    Trigger.PRACTICE_LOOP: Actor.EXECUTIVE,
}

# Whole-string patterns, used with ``fullmatch``: a ``$`` anchor lets a trailing newline in.
BUNDLE_SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
RUN_ID_PREFIX = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
CONTENT_KEY = re.compile(r"[0-9a-f]{32}")

_SLUG_RUN = re.compile(r"[^a-z0-9]+")
_NONCE_ALPHABET = string.digits + string.ascii_lowercase


def slugify(text: str, limit: int = 60) -> str:
    """Lower-case, every run of other characters to '-', trimmed, at most 60 chars."""
    slug = _SLUG_RUN.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return slug or "untitled"


def valid_app_id(app_id: str) -> bool:
    # A skill's id is its prefix and a slug; no slug starts with the prefix's "_".
    slug = app_id.removeprefix(SKILL_APP_PREFIX)
    return app_id in RESERVED_APP_IDS or bool(BUNDLE_SLUG.fullmatch(slug))


def run_id_date(run_id: str) -> date | None:
    """The date a run id starts with, or None when it does not start with a real date."""
    match = RUN_ID_PREFIX.match(run_id)
    if not match:
        return None
    try:
        return date(*(int(part) for part in match.groups()))
    except ValueError:
        return None


def today() -> str:
    return datetime.now(UTC).date().isoformat()


def nonce(length: int = 6) -> str:
    return "".join(secrets.choice(_NONCE_ALPHABET) for _ in range(length))


def harvest_run_id(slug: str, *, on: str | None = None, suffix: str | None = None) -> str:
    """``YYYY-MM-DD-<slug>-<nonce>``: the run id a write hook stamps on what it harvests."""
    return f"{on or today()}-{slug}-{suffix or nonce()}"
