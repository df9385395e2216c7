"""JSON and YAML from untrusted hands, parsed only once their size and nesting are known bounded.

``json.loads`` recurses once per nesting level, so 50,000 ``[`` raise RecursionError deep in
the parser, and a gigabyte of text is parsed before anyone looks at it. PyYAML's composer
recurses the same way (600 ``[``, 1.2 KB), its scanner's cost grows with the square of the
flow depth (200,000 ``[`` took minutes), an alias repeats a whole subtree without costing a
byte ("billion laughs": nine aliases of nine aliases... expand to 10^8 items for whoever walks
the result), and a few scalars raise plain ``ValueError`` (``2001-13-45``, an integer of 5,000
digits). So the size is checked first, then the nesting by a walk that never recurses (a
linear scan of the JSON; PyYAML's event parser, which stops at the first anchor or alias too:
nothing we read needs them), before the parser proper runs. Every failure is a
:class:`JsonLimitError` or a :class:`YamlLimitError` that says which limit or which line:
callers catch that one class.
"""

from __future__ import annotations

import json
from typing import Any

JSON_MAX_DEPTH = 32
JSON_MAX_BYTES = 1_048_576
YAML_MAX_DEPTH = 16
YAML_MAX_BYTES = 65_536


class JsonLimitError(ValueError):
    """The text is too large, too deep or not JSON; the message says which."""


class YamlLimitError(ValueError):
    """The text is too large, too deep, uses an alias, or is not YAML; the message says which."""


def parse_json(
    raw: str | bytes, *, max_bytes: int = JSON_MAX_BYTES, max_depth: int = JSON_MAX_DEPTH
) -> Any:
    """Parse ``raw`` as JSON, refusing it before parsing when it is larger or deeper than allowed."""
    if len(raw) > max_bytes:
        unit = "bytes" if isinstance(raw, bytes) else "characters"
        raise JsonLimitError(f"JSON is {len(raw)} {unit}; the limit is {max_bytes}")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise JsonLimitError(f"JSON is not valid UTF-8 (byte {exc.start})") from None
    deepest = _json_depth(text)
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


def parse_yaml(
    text: str, *, max_bytes: int = YAML_MAX_BYTES, max_depth: int = YAML_MAX_DEPTH
) -> Any:
    """Parse ``text`` (one YAML document) as ``yaml.safe_load`` does, within the limits."""
    import yaml

    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YamlLimitError(f"YAML is {size} bytes; the limit is {max_bytes}")
    try:
        _check_yaml(text, max_depth)
        return yaml.safe_load(text)
    except YamlLimitError:
        raise
    except yaml.YAMLError as exc:
        raise YamlLimitError(f"not valid YAML: {exc}") from None
    except RecursionError:  # not expected from the event parser; refused all the same
        raise YamlLimitError("YAML nests too deeply to parse") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # A scalar the resolver takes for a date or a number that Python then refuses.
        raise YamlLimitError(f"a value cannot be read: {type(exc).__name__}: {exc}") from None


def _json_depth(text: str) -> int:
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


def _check_yaml(text: str, max_depth: int) -> None:
    """Refuse ``text`` at its first collection deeper than ``max_depth`` or its first anchor or
    alias, walking the parser's events (an explicit stack in PyYAML, no recursion)."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent) or (
            isinstance(event, yaml.NodeEvent) and event.anchor is not None
        ):
            raise YamlLimitError(
                f"line {line}: YAML anchors and aliases (&name, *name) are not accepted"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlLimitError(
                    f"line {line}: YAML nests deeper than {max_depth} levels; "
                    f"the limit is {max_depth}"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
