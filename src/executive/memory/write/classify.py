"""classify: everything that is wrong with a payload, as (field, reason) pairs.

Every rule of the original validator, plus what its docs promised and its code did not
(unknown fields are rejected), plus the taxonomy's confidence range per type, plus limits:
lengths, full-match patterns (a ``$`` anchor would let a trailing newline through), real
timestamps, this installation's ``user_id`` and strings that encode as UTF-8. Nothing is
sent to a store until a payload (and every payload of its batch) has no rejection, and no
input, however built, raises out of ``classify``: a rejection names the field instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from executive.memory.taxonomy import (
    AGENT_ID,
    CONTENT_KEY,
    MAX_SYMBOLS,
    OBSERVABLE,
    RESERVED_APP_IDS,
    SKILL_APP_PREFIX,
    SUPPORTED_SCHEMA_MAJOR,
    TAG,
    TYPE_RULES,
    Actor,
    Category,
    Env,
    Importance,
    MemoryType,
    Outcome,
    Trigger,
    WorkerVendor,
    run_id_date,
    valid_app_id,
)
from executive.memory.write import fields
from executive.memory.write.envelope import METADATA_FIELDS, TOP_LEVEL_FIELDS, Payload
from executive.memory.write.fields import Rejection
from executive.memory.write.limits import (
    MAX_COHORT_CHARS,
    MAX_EXECUTIVE_CHARS,
    MAX_ID_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TEXT_CHARS,
    MAX_USER_ID_CHARS,
    RUN_ID,
    SCHEMA_VERSION_PATTERN,
    SOURCE,
    USER_ID,
    field_name,
    show,
    timestamp,
)


class Rejected(ValueError):
    """A payload (or a batch) that may not be written. ``rejections`` names every problem."""

    def __init__(self, rejections: list[Rejection]) -> None:
        self.rejections = rejections
        super().__init__("; ".join(str(r) for r in rejections))

    def as_list(self) -> list[dict[str, Any]]:
        return [r._asdict() for r in self.rejections]


def classify(raw: Any, *, user_id: str | None = None) -> list[Rejection]:
    """Every rejection of a (stamped) payload; an empty list means it may be written.

    ``user_id``, when given, is this installation's: a payload for another is refused (it
    would be stored and then invisible to every read of this one).
    """
    if not isinstance(raw, dict):
        return [Rejection("payload", "must be a JSON object")]
    out: list[Rejection] = []
    out += [Rejection(field_name(k), "unknown field") for k in _unknown(raw, TOP_LEVEL_FIELDS)]
    out += _text(raw.get("text"))
    out += _user_id(raw.get("user_id"), user_id)
    if raw.get("agent_id") != AGENT_ID:
        out.append(Rejection("agent_id", f"must be {AGENT_ID!r}"))
    out += _app_id(raw.get("app_id"))
    out += _run_id("run_id", raw.get("run_id"))
    if not isinstance(raw.get("immutable"), bool):
        out.append(Rejection("immutable", "must be true or false"))
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        out.append(Rejection("metadata", "must be an object"))
        return out
    out += _metadata(meta, raw)
    return out


def _unknown(mapping: dict[Any, Any], known: frozenset[str]) -> list[Any]:
    return sorted((k for k in mapping if k not in known), key=repr)


def _text(text: Any) -> list[Rejection]:
    return fields.string("text", text, limit=MAX_TEXT_CHARS, blank="must be a non-empty string")


def _user_id(value: Any, installation: str | None) -> list[Rejection]:
    out = fields.string(
        "user_id",
        value,
        limit=MAX_USER_ID_CHARS,
        pattern=USER_ID,
        what="a user id slug",
        blank="must be set (V3_MEM0_USER_ID)",
    )
    if not out and installation is not None and value != installation:
        out.append(Rejection("user_id", "belongs to another installation (V3_MEM0_USER_ID)"))
    return out


def _run_id(name: str, run_id: Any) -> list[Rejection]:
    # Length and encoding first; the pattern's reason below says what is wanted.
    out = fields.string(name, run_id, limit=MAX_ID_CHARS)
    if out:
        return out
    if not RUN_ID.fullmatch(run_id) or run_id_date(run_id) is None:
        return [
            Rejection(name, "must start with a date, YYYY-MM-DD, then -letters, digits, _ or -")
        ]
    return []


def _app_id(app_id: Any) -> list[Rejection]:
    if fields.is_blank(app_id):
        return [Rejection("app_id", "is required")]
    if len(app_id) > MAX_ID_CHARS:
        return [Rejection("app_id", f"is {len(app_id)} characters; at most {MAX_ID_CHARS}")]
    if valid_app_id(app_id):
        return []
    if app_id.startswith("_"):
        allowed = ", ".join(sorted(RESERVED_APP_IDS)) + f", {SKILL_APP_PREFIX}<slug>"
        return [Rejection("app_id", f"{show(app_id)} is not a reserved id ({allowed})")]
    return [Rejection("app_id", f"{show(app_id)} is not a lowercase-kebab bundle slug")]


_REQUIRED_ENUMS = (
    ("env", Env),
    ("type", MemoryType),
    ("category", Category),
    ("importance", Importance),
    ("trigger", Trigger),
    ("actor", Actor),
)


def _metadata(meta: dict[str, Any], raw: dict[str, Any]) -> list[Rejection]:
    out = [
        Rejection(f"metadata.{field_name(k)}", "unknown field")
        for k in _unknown(meta, METADATA_FIELDS)
    ]
    out += _schema_version(meta.get("schema_version"))
    for name, allowed in _REQUIRED_ENUMS:
        out += fields.enum(meta, name, allowed)
    out += _confidence(meta)
    out += _names(meta)
    out += _worker_vendor(meta)
    out += _source(meta.get("source"))
    out += _harvest_run(meta.get("harvest_run"), raw.get("run_id"))
    out += fields.enum(meta, "outcome", Outcome, required=False)
    out += fields.tags(meta.get("tags"))
    for name in ("files", "outdated_files"):
        out += fields.paths(name, meta.get(name))
    out += fields.words_list("symbols", meta.get("symbols"), MAX_SYMBOLS, fields.symbol)
    out += fields.words_list("observed", meta.get("observed"), len(OBSERVABLE), fields.observable)
    out += _lifetime(meta)
    return out + _identity(meta, raw)


def _schema_version(version: Any) -> list[Rejection]:
    if fields.is_blank(version):
        return [Rejection("metadata.schema_version", "is required")]
    if not SCHEMA_VERSION_PATTERN.fullmatch(version):
        return [Rejection("metadata.schema_version", f"{show(version)} is not MAJOR.MINOR.PATCH")]
    if version.split(".")[0] != SUPPORTED_SCHEMA_MAJOR:
        return [
            Rejection("metadata.schema_version", f"major version must be {SUPPORTED_SCHEMA_MAJOR}")
        ]
    return []


def _names(meta: dict[str, Any]) -> list[Rejection]:
    """The cohort and the executive that wrote it, when present."""
    out: list[Rejection] = []
    if "cohort" in meta:
        out += fields.string(
            "metadata.cohort",
            meta["cohort"],
            limit=MAX_COHORT_CHARS,
            pattern=TAG,
            what="a token",
            blank="must be a non-empty string when present",
        )
    if "executive" in meta:
        out += fields.string(
            "metadata.executive",
            meta["executive"],
            limit=MAX_EXECUTIVE_CHARS,
            pattern=USER_ID,
            what="a name (letters, digits, '.', '_' or '-')",
        )
    return out


def _source(source: Any) -> list[Rejection]:
    return fields.string(
        "metadata.source",
        source,
        limit=MAX_SOURCE_CHARS,
        pattern=SOURCE,
        what="a path without control characters",
        blank="must name the repository path the fact came from",
    )


def _lifetime(meta: dict[str, Any]) -> list[Rejection]:
    """The run that outdated it and when it expires, when present."""
    out: list[Rejection] = []
    if "outdated_by" in meta:
        out += _run_id("metadata.outdated_by", meta["outdated_by"])
    expires = meta.get("expires_at")
    if expires is not None and (not isinstance(expires, str) or timestamp(expires) is None):
        out.append(
            Rejection(
                "metadata.expires_at",
                "must be a real ISO datetime, YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM]",
            )
        )
    return out


def _identity(meta: dict[str, Any], raw: dict[str, Any]) -> list[Rejection]:
    """The content key, and immutability where it must hold."""
    out: list[Rejection] = []
    key = meta.get("key")
    if not isinstance(key, str) or not CONTENT_KEY.fullmatch(key):
        out.append(Rejection("metadata.key", "must be a 32-hex-digit content key"))
    if "immutable" in meta and meta["immutable"] is not raw.get("immutable"):
        out.append(Rejection("metadata.immutable", "must equal the top-level immutable"))
    if meta.get("type") == MemoryType.PRINCIPLE and raw.get("immutable") is not True:
        out.append(Rejection("immutable", "a principle is always immutable"))
    return out


def _confidence(meta: dict[str, Any]) -> list[Rejection]:
    value = meta.get("confidence")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return [Rejection("metadata.confidence", "must be a number")]
    if not 0.0 <= value <= 1.0:
        return [Rejection("metadata.confidence", "must be between 0 and 1")]
    kind = meta.get("type")
    rule = TYPE_RULES.get(kind) if isinstance(kind, str) else None
    if rule is not None and not rule.confidence_min <= value <= rule.confidence_max:
        span = (
            f"{rule.confidence_min}"
            if rule.confidence_min == rule.confidence_max
            else f"{rule.confidence_min}-{rule.confidence_max}"
        )
        return [Rejection("metadata.confidence", f"a {kind} memory has confidence {span}")]
    return []


def _worker_vendor(meta: dict[str, Any]) -> list[Rejection]:
    vendor, actor = meta.get("worker_vendor"), meta.get("actor")
    if vendor is None:
        if actor == Actor.WORKER:
            return [Rejection("metadata.worker_vendor", "is required when actor is worker")]
        return []
    out = fields.enum(meta, "worker_vendor", WorkerVendor)
    if actor != Actor.WORKER:
        out.append(Rejection("metadata.worker_vendor", "only allowed when actor is worker"))
    return out


def _harvest_run(harvest_run: Any, run_id: Any) -> list[Rejection]:
    if fields.is_blank(harvest_run):
        return [Rejection("metadata.harvest_run", "is required")]
    if run_id_date(harvest_run) is None:
        return [Rejection("metadata.harvest_run", "must start with a date, YYYY-MM-DD")]
    if harvest_run != run_id:
        return [Rejection("metadata.harvest_run", "must equal run_id")]
    return []


def change_rejections(
    stored: dict[str, Any], text: str | None, metadata: dict[str, Any] | None
) -> list[Rejection]:
    """What is wrong with an update: the new text, and each metadata field it sets.

    ``stored`` is the memory's metadata now; the merged result is checked, and only the
    fields the update touches are reported (an older memory's other fields stand as they are).
    """
    out = _text(text) if text is not None else []
    if metadata is not None:
        if not isinstance(metadata, dict):
            return [*out, Rejection("metadata", "must be an object")]
        merged = {k: v for k, v in stored.items() if k != "app_id"} | metadata
        raw = {"run_id": merged.get("harvest_run"), "immutable": merged.get("immutable")}
        touched = {f"metadata.{field_name(k)}" for k in metadata}
        out += [r for r in _metadata(merged, raw) if r.field in touched]
    return out


def validate(raw: Any, *, user_id: str | None = None) -> Payload:
    """The payload as a model, or :class:`Rejected` with every problem."""
    rejections = classify(raw, user_id=user_id)
    if rejections:
        raise Rejected(rejections)
    return Payload.model_validate(raw)


def validate_batch(items: Sequence[Any], *, user_id: str | None = None) -> list[Payload]:
    """All or nothing: one bad item rejects the batch, with every item's problems."""
    problems: list[Rejection] = []
    payloads: list[Payload] = []
    for index, item in enumerate(items):
        rejections = classify(item, user_id=user_id)
        if rejections:
            problems += [Rejection(f"[{index}].{r.field}", r.reason) for r in rejections]
        else:
            payloads.append(Payload.model_validate(item))
    if problems:
        raise Rejected(problems)
    return payloads
