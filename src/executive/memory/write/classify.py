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
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from executive import relpath
from executive.memory.taxonomy import (
    AGENT_ID,
    CONTENT_KEY,
    MAX_FILES,
    MAX_SYMBOL_CHARS,
    MAX_SYMBOLS,
    MAX_TAGS,
    OBSERVABLE,
    RESERVED_APP_IDS,
    SKILL_APP_PREFIX,
    SUPPORTED_SCHEMA_MAJOR,
    SYMBOL,
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
from executive.memory.write.envelope import METADATA_FIELDS, TOP_LEVEL_FIELDS, Payload
from executive.memory.write.limits import (
    MAX_COHORT_CHARS,
    MAX_EXECUTIVE_CHARS,
    MAX_ID_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TAG_CHARS,
    MAX_TEXT_CHARS,
    MAX_USER_ID_CHARS,
    RUN_ID,
    SCHEMA_VERSION_PATTERN,
    SOURCE,
    USER_ID,
    field_name,
    show,
    timestamp,
    utf8_problem,
)


class Rejection(NamedTuple):
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class Rejected(ValueError):
    """A payload (or a batch) that may not be written. ``rejections`` names every problem."""

    def __init__(self, rejections: list[Rejection], index: int | None = None) -> None:
        self.rejections = rejections
        self.index = index
        where = f"item {index}: " if index is not None else ""
        super().__init__(where + "; ".join(str(r) for r in rejections))

    def as_list(self) -> list[dict[str, Any]]:
        return [
            {
                "field": r.field,
                "reason": r.reason,
                **({"item": self.index} if self.index is not None else {}),
            }
            for r in self.rejections
        ]


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _enum(
    meta: dict[str, Any], name: str, allowed: type, *, required: bool = True
) -> list[Rejection]:
    value = meta.get(name)
    if value is None:
        return [Rejection(f"metadata.{name}", "is required")] if required else []
    values = [e.value for e in allowed]  # type: ignore[attr-defined]
    if not isinstance(value, str) or value not in values:
        return [Rejection(f"metadata.{name}", f"{show(value)} is not one of {', '.join(values)}")]
    return []


def _string(
    name: str,
    value: Any,
    *,
    limit: int,
    pattern: re.Pattern[str] | None = None,
    what: str = "",
    blank: str = "is required",
) -> list[Rejection]:
    """A required string: non-blank, encodable, at most ``limit`` long, matching whole;
    ``blank`` is the reason a missing or blank one gets."""
    if _blank(value):
        return [Rejection(name, blank)]
    if (problem := utf8_problem(value)) is not None:
        return [Rejection(name, problem)]
    if len(value) > limit:
        return [Rejection(name, f"is {len(value)} characters; at most {limit}")]
    if pattern is not None and not pattern.fullmatch(value):
        return [Rejection(name, f"{show(value)} is not {what}")]
    return []


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
    return _string("text", text, limit=MAX_TEXT_CHARS, blank="must be a non-empty string")


def _user_id(value: Any, installation: str | None) -> list[Rejection]:
    out = _string(
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
    out = _string(name, run_id, limit=MAX_ID_CHARS)
    if out:
        return out
    if not RUN_ID.fullmatch(run_id) or run_id_date(run_id) is None:
        return [
            Rejection(name, "must start with a date, YYYY-MM-DD, then -letters, digits, _ or -")
        ]
    return []


def _app_id(app_id: Any) -> list[Rejection]:
    if _blank(app_id):
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
        out += _enum(meta, name, allowed)
    out += _confidence(meta)
    out += _names(meta)
    out += _worker_vendor(meta)
    out += _source(meta.get("source"))
    out += _harvest_run(meta.get("harvest_run"), raw.get("run_id"))
    out += _enum(meta, "outcome", Outcome, required=False)
    out += _tags(meta.get("tags"))
    for name in ("files", "outdated_files"):
        out += _paths(name, meta.get(name))
    out += _words_list("symbols", meta.get("symbols"), MAX_SYMBOLS, _symbol)
    out += _words_list("observed", meta.get("observed"), len(OBSERVABLE), _observable)
    out += _lifetime(meta)
    return out + _identity(meta, raw)


def _schema_version(version: Any) -> list[Rejection]:
    if _blank(version):
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
        out += _string(
            "metadata.cohort",
            meta["cohort"],
            limit=MAX_COHORT_CHARS,
            pattern=TAG,
            what="a token",
            blank="must be a non-empty string when present",
        )
    if "executive" in meta:
        out += _string(
            "metadata.executive",
            meta["executive"],
            limit=MAX_EXECUTIVE_CHARS,
            pattern=USER_ID,
            what="a name (letters, digits, '.', '_' or '-')",
        )
    return out


def _source(source: Any) -> list[Rejection]:
    return _string(
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
    out = _enum(meta, "worker_vendor", WorkerVendor)
    if actor != Actor.WORKER:
        out.append(Rejection("metadata.worker_vendor", "only allowed when actor is worker"))
    return out


def _harvest_run(harvest_run: Any, run_id: Any) -> list[Rejection]:
    if _blank(harvest_run):
        return [Rejection("metadata.harvest_run", "is required")]
    if run_id_date(harvest_run) is None:
        return [Rejection("metadata.harvest_run", "must start with a date, YYYY-MM-DD")]
    if harvest_run != run_id:
        return [Rejection("metadata.harvest_run", "must equal run_id")]
    return []


def _tags(tags: Any) -> list[Rejection]:
    if tags is None:
        return []
    if not isinstance(tags, list):
        return [Rejection("metadata.tags", "must be a list")]
    if len(tags) > MAX_TAGS:
        # Checked first and alone: a list of a million tags gets one reason, not a million.
        return [Rejection("metadata.tags", f"at most {MAX_TAGS} tags")]
    out = []
    for tag in tags:
        if not isinstance(tag, str) or not TAG.fullmatch(tag):
            out.append(
                Rejection("metadata.tags", f"{show(tag)} is not a kebab-case or SNAKE_CASE token")
            )
        elif len(tag) > MAX_TAG_CHARS:
            out.append(Rejection("metadata.tags", f"a tag is at most {MAX_TAG_CHARS} characters"))
    return out


def _paths(name: str, paths: Any) -> list[Rejection]:
    if paths is None:
        return []
    where = f"metadata.{name}"
    if not isinstance(paths, list):
        return [Rejection(where, "must be a list of relative paths")]
    if len(paths) > MAX_FILES:
        return [Rejection(where, f"at most {MAX_FILES} paths")]
    out = []
    for path in paths:
        problem = relpath.problem(path) if isinstance(path, str) else "is not a string"
        if problem is not None:
            out.append(Rejection(where, f"{show(path)} {problem}"))
    return out


def _symbol(value: Any) -> str | None:
    if not isinstance(value, str) or not SYMBOL.fullmatch(value):
        return "is not a dotted identifier"
    return f"is over {MAX_SYMBOL_CHARS} characters" if len(value) > MAX_SYMBOL_CHARS else None


def _observable(value: Any) -> str | None:
    return None if value in OBSERVABLE else f"is not one of {', '.join(OBSERVABLE)}"


def _words_list(
    name: str, values: Any, limit: int, problem: Callable[[Any], str | None]
) -> list[Rejection]:
    """A metadata list of short words (symbols, what was observed), each checked by ``problem``."""
    if values is None:
        return []
    where = f"metadata.{name}"
    if not isinstance(values, list):
        return [Rejection(where, "must be a list")]
    if len(values) > limit:
        return [Rejection(where, f"at most {limit} entries")]
    return [Rejection(where, f"{show(v)} {why}") for v in values if (why := problem(v))]


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


def validate(raw: Any, index: int | None = None, *, user_id: str | None = None) -> Payload:
    """The payload as a model, or :class:`Rejected` with every problem."""
    rejections = classify(raw, user_id=user_id)
    if rejections:
        raise Rejected(rejections, index)
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
