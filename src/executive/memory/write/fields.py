"""fields: the rules of one field of a payload, each answering with rejections.

A required string, an enum, a list of tags, of repository paths or of short words: the
shapes :mod:`classify` checks the envelope's fields with. A rejection names the field and
says what is wrong with it in words an operator can act on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from executive import relpath
from executive.memory.taxonomy import (
    MAX_FILES,
    MAX_SYMBOL_CHARS,
    MAX_TAGS,
    OBSERVABLE,
    SYMBOL,
    TAG,
)
from executive.memory.write.limits import MAX_TAG_CHARS, show, utf8_problem


class Rejection(NamedTuple):
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


def is_blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def enum(
    meta: dict[str, Any], name: str, allowed: type, *, required: bool = True
) -> list[Rejection]:
    value = meta.get(name)
    if value is None:
        return [Rejection(f"metadata.{name}", "is required")] if required else []
    values = [e.value for e in allowed]  # type: ignore[attr-defined]
    if not isinstance(value, str) or value not in values:
        return [Rejection(f"metadata.{name}", f"{show(value)} is not one of {', '.join(values)}")]
    return []


def string(
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
    if is_blank(value):
        return [Rejection(name, blank)]
    if (problem := utf8_problem(value)) is not None:
        return [Rejection(name, problem)]
    if len(value) > limit:
        return [Rejection(name, f"is {len(value)} characters; at most {limit}")]
    if pattern is not None and not pattern.fullmatch(value):
        return [Rejection(name, f"{show(value)} is not {what}")]
    return []


def tags(tags: Any) -> list[Rejection]:
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


def paths(name: str, paths: Any) -> list[Rejection]:
    if paths is None:
        return []
    where = f"metadata.{name}"
    if not isinstance(paths, list):
        return [Rejection(where, "must be a list of relative paths")]
    if len(paths) > MAX_FILES:
        return [Rejection(where, f"at most {MAX_FILES} paths")]
    problems = ((p, relpath.problem(p) if isinstance(p, str) else "is not a string") for p in paths)
    return [Rejection(where, f"{show(p)} {why}") for p, why in problems if why is not None]


def symbol(value: Any) -> str | None:
    if not isinstance(value, str) or not SYMBOL.fullmatch(value):
        return "is not a dotted identifier"
    return f"is over {MAX_SYMBOL_CHARS} characters" if len(value) > MAX_SYMBOL_CHARS else None


def observable(value: Any) -> str | None:
    return None if value in OBSERVABLE else f"is not one of {', '.join(OBSERVABLE)}"


def words_list(
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
