"""YAML from untrusted hands, parsed only after its size, nesting and aliases are known safe.

PyYAML's composer recurses once per nesting level, so 600 ``[`` (1.2 KB) raise RecursionError
deep in ``safe_load``; its scanner's cost grows with the square of the flow depth (200,000
``[`` took minutes); an alias repeats a whole subtree without costing a byte ("billion
laughs": nine aliases of nine aliases... expand to 10^8 items for whoever walks the result);
and a few scalars raise plain ``ValueError`` (``2001-13-45``, an integer of 5,000 digits).

So :func:`loads` checks the size first, then walks the parser's events, which PyYAML makes
with an explicit stack and no recursion, stopping at the first collection deeper than allowed
and at the first anchor or alias (refused outright: nothing we read needs them), before the
composer and constructor run. Every failure is a :class:`YamlLimitError` that says which
limit or which line; nothing else escapes.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 16
MAX_BYTES = 65_536


class YamlLimitError(ValueError):
    """The text is too large, too deep, uses an alias, or is not YAML; the message says which."""


def loads(text: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``text`` (one YAML document) as ``yaml.safe_load`` does, within the limits."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise YamlLimitError(f"YAML is {size} bytes; the limit is {max_bytes}")
    check(text, max_depth=max_depth)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YamlLimitError(f"not valid YAML: {exc}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # A scalar the resolver takes for a date or a number that Python then refuses.
        raise YamlLimitError(f"a value cannot be read: {type(exc).__name__}: {exc}") from None


def check(text: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse ``text`` when a collection nests deeper than ``max_depth`` or it has an anchor
    or alias; a syntax error is refused too. Stops at the first problem."""
    depth = 0
    try:
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
    except yaml.YAMLError as exc:
        raise YamlLimitError(f"not valid YAML: {exc}") from None
    except RecursionError:  # not expected from the event parser; refused all the same
        raise YamlLimitError("YAML nests too deeply to parse") from None
