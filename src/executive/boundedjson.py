"""JSON from untrusted hands, parsed only after its size and nesting are known to be bounded.

``json.loads`` recurses once per nesting level, so 50,000 ``[`` raise RecursionError deep in
the parser, and a gigabyte of text is parsed before anyone looks at it. Both are checked
here first, by a linear scan that never recurses, and refused with a ``ValueError`` that says
which limit was hit. An integer of more than 4,300 digits, which ``json.loads`` refuses with a
plain ``ValueError``, is a :class:`JsonLimitError` too: callers catch that one class.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32
MAX_BYTES = 1_048_576


class JsonLimitError(ValueError):
    """The text is too large, too deep or not JSON; the message says which."""


def loads(raw: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``raw`` as JSON, refusing it before parsing when it is larger or deeper than allowed."""
    if isinstance(raw, bytes):
        if len(raw) > max_bytes:
            raise JsonLimitError(f"JSON is {len(raw)} bytes; the limit is {max_bytes}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonLimitError(f"JSON is not valid UTF-8 (byte {exc.start})") from None
    else:
        text = raw
        if len(text) > max_bytes:
            raise JsonLimitError(f"JSON is {len(text)} characters; the limit is {max_bytes}")
    deepest = depth(text)
    if deepest > max_depth:
        raise JsonLimitError(f"JSON nests {deepest} levels deep; the limit is {max_depth}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonLimitError(f"not JSON: {exc}") from None
    except ValueError as exc:  # a number Python will not convert (over 4,300 digits)
        raise JsonLimitError(f"a value cannot be read: {exc}") from None
    except RecursionError:  # only reachable with a max_depth above the interpreter's limit
        raise JsonLimitError("JSON nests too deeply to parse") from None


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``, ignoring brackets inside strings."""
    level = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            deepest = max(deepest, level)
        elif char in "]}":
            level -= 1
    return deepest
