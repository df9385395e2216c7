"""The validated memory: a payload with its four scope ids and a versioned metadata envelope.

``stamp`` fills defaults into a partial payload (explicit values win); ``classify`` (in its
own module) says what is wrong with it; the models here hold only what passed.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from executive.memory.taxonomy import (
    ACTOR_FOR_TRIGGER,
    AGENT_ID,
    SCHEMA_VERSION,
    Actor,
    Category,
    Env,
    Importance,
    MemoryType,
    Outcome,
    Trigger,
    WorkerVendor,
)


class Envelope(BaseModel):
    """Metadata every memory carries (schema ``SCHEMA_VERSION``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=True)

    schema_version: str
    env: Env
    type: MemoryType
    category: Category
    importance: Importance
    confidence: float = Field(ge=0.0, le=1.0)
    trigger: Trigger
    actor: Actor
    source: str
    harvest_run: str
    key: str
    immutable: bool = False
    worker_vendor: WorkerVendor | None = None
    cohort: str | None = None
    outcome: Outcome | None = None
    tags: list[str] | None = None
    expires_at: str | None = None
    # Which executive wrote it (EXECUTIVE_NAME): several may share one store. Not part of the
    # content key, so two executives writing the same lesson write the same key.
    executive: str | None = None
    # The files it is about (relative to the project), and those of them a later run of the
    # project changed, with that run: the memory may be outdated (1.2.0).
    files: list[str] | None = None
    outdated_files: list[str] | None = None
    outdated_by: str | None = None
    # The functions and classes it is about, and what of it the daemon saw itself (1.3.0).
    symbols: list[str] | None = None
    observed: list[str] | None = None


METADATA_FIELDS = frozenset(Envelope.model_fields)


class Payload(BaseModel):
    """A memory as the harvester writes it: text, four scope ids, the envelope."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    user_id: str
    agent_id: str = AGENT_ID
    app_id: str
    run_id: str
    immutable: bool = False
    metadata: Envelope

    @property
    def key(self) -> str:
        return self.metadata.key

    @property
    def type(self) -> str:
        return str(self.metadata.type)

    def flat_metadata(self) -> dict[str, Any]:
        """Metadata as stored: the envelope plus ``app_id`` (mem0 OSS has no app_id field)."""
        meta = self.metadata.model_dump(exclude_none=True)
        meta["app_id"] = self.app_id
        meta["immutable"] = self.immutable
        return meta

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


TOP_LEVEL_FIELDS = frozenset(Payload.model_fields)


@dataclass(frozen=True)
class Defaults:
    """Installation-wide values the stamper fills in (from settings)."""

    user_id: str | None
    env: str = "prod"
    cohort: str | None = None
    executive: str | None = None


_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The text as the content key sees it: NFKC, case-folded, single-spaced, no end dots."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip().rstrip(".!;: ")


def content_key(
    *, user_id: str, env: str, cohort: str | None, app_id: str, type: str, text: str
) -> str:
    """A stable id for "this fact, in this scope": the same write twice has the same key."""
    parts = [user_id, env, cohort or "", app_id, type, normalise(text)]
    # surrogatepass: a lone surrogate must not raise here, before classify can name its field.
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def stamp(raw: Any, defaults: Defaults) -> Any:
    """Fill defaults into a partial payload; explicit values win. Non-objects pass through.

    The result still has to pass ``classify``: stamping never hides a missing field the
    caller owes (type, category, importance, confidence, trigger, source, text, app_id).
    ``metadata.key`` is the exception to "explicit values win": it is always computed.
    """
    if not isinstance(raw, dict):
        return raw
    payload = dict(raw)
    meta_in = payload.get("metadata")
    if not isinstance(meta_in, dict):
        return payload  # classify reports it; stamping into a non-object would hide it
    meta = dict(meta_in)

    payload.setdefault("user_id", defaults.user_id or "")
    payload.setdefault("agent_id", AGENT_ID)
    trigger = meta.get("trigger")
    if "immutable" not in payload:
        payload["immutable"] = trigger == Trigger.SPEC_MERGE
    meta.setdefault("schema_version", SCHEMA_VERSION)
    meta.setdefault("env", defaults.env)
    # An empty cohort is unset: the field is left out, never written as "".
    if "cohort" not in meta and defaults.cohort:
        meta["cohort"] = defaults.cohort
    if "executive" not in meta and defaults.executive:
        meta["executive"] = defaults.executive
    if "actor" not in meta and isinstance(trigger, str) and trigger in ACTOR_FOR_TRIGGER:
        meta["actor"] = ACTOR_FOR_TRIGGER[trigger].value
    if "harvest_run" not in meta and isinstance(payload.get("run_id"), str):
        meta["harvest_run"] = payload["run_id"]
    meta.setdefault("immutable", payload["immutable"])
    # The key is computed here and never taken from a payload: a payload that could choose
    # its key could name a principle's and pass as a duplicate of it (or replace it).
    meta.pop("key", None)
    if all(
        isinstance(v, str) for v in (payload.get("text"), payload.get("app_id"), meta.get("type"))
    ):
        meta["key"] = content_key(
            user_id=str(payload["user_id"]),
            env=str(meta["env"]),
            cohort=meta.get("cohort") if isinstance(meta.get("cohort"), str) else None,
            app_id=payload["app_id"],
            type=meta["type"],
            text=payload["text"],
        )
    payload["metadata"] = meta
    return payload
