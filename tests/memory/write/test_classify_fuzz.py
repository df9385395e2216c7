"""Fuzz the write boundary: any payload is accepted, or refused by field; nothing raises past it.

Hypothesis generates JSON-shaped values (with lone surrogates, control characters, huge and
deep values) and spoils valid payloads field by field. The boundary is ``stamp`` then
``classify`` (what ``mem validate`` and ``mem add`` run), ``Harvester.prepare`` (which may
raise only :class:`Rejected`) and the CLI's bounded JSON parser.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from executive import files
from executive.memory.write.classify import Rejected, classify, validate
from executive.memory.write.envelope import METADATA_FIELDS, TOP_LEVEL_FIELDS, Payload, stamp
from executive.memory.write.fields import Rejection
from executive.memory.write.harvester import Harvester
from tests.memory.payloads import DEFAULTS, partial

KINDS = ["episodic", "principle", "semantic", "procedural", "reflective"]

# Text with what breaks naive code: lone surrogates, NUL, newlines, right-to-left marks.
nasty_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\ud800", "\udfff", "\x00", "\n", "\r", "\u202e", "`", "#", "$"]),
    ),
    max_size=40,
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    nasty_text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(nasty_text, inner, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.one_of(st.sampled_from(sorted(TOP_LEVEL_FIELDS)), nasty_text)
meta_names = st.one_of(st.sampled_from(sorted(METADATA_FIELDS)), nasty_text)


@st.composite
def spoiled(draw: st.DrawFn) -> Any:
    """A valid payload of some type with a few fields replaced, dropped or added."""
    payload = partial(draw(st.sampled_from(KINDS)))
    for _ in range(draw(st.integers(0, 4))):
        inside = draw(st.booleans())
        target = (
            payload["metadata"] if inside and isinstance(payload.get("metadata"), dict) else payload
        )
        name = draw(meta_names if inside else field_names)
        if draw(st.booleans()):
            target.pop(name, None)
        else:
            target[name] = draw(json_values)
    return payload


payloads = st.one_of(
    spoiled(), json_values, st.builds(lambda k: partial(k), st.sampled_from(KINDS))
)


def check(rejections: list[Rejection]) -> None:
    for rejection in rejections:
        assert isinstance(rejection.field, str) and rejection.field
        assert isinstance(rejection.reason, str) and rejection.reason
        # Printable anywhere: a log line, JSON on a socket, a terminal.
        str(rejection).encode("utf-8")
        assert len(str(rejection)) < 400


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(payloads)
def test_classify_accepts_or_refuses_by_field_and_never_raises(raw):
    stamped = stamp(raw, DEFAULTS)
    rejections = classify(stamped, user_id=DEFAULTS.user_id)
    check(rejections)
    if not rejections:
        payload = validate(stamped, user_id=DEFAULTS.user_id)
        assert isinstance(payload, Payload)
        json.dumps(payload.as_dict()).encode("utf-8")


@FUZZ
@given(st.lists(payloads, min_size=1, max_size=3))
def test_prepare_raises_only_rejected_naming_each_field(items):
    harvester = Harvester(None, None, DEFAULTS)  # type: ignore[arg-type]  # prepare needs no store
    try:
        prepared = harvester.prepare(items)
    except Rejected as exc:
        assert exc.rejections
        check(exc.rejections)
        json.dumps(exc.as_list())
    else:
        assert len(prepared) == len(items)
        assert all(p.type != "principle" for p in prepared)


@FUZZ
@given(json_values, st.integers(0, 60))
def test_the_cli_parser_parses_or_refuses_with_a_reason(value, nesting):
    text = "[" * nesting + json.dumps(value) + "]" * nesting
    try:
        parsed = files.parse_json(text)
    except files.JsonLimitError as exc:
        assert str(exc)
    else:
        assert nesting <= files.JSON_MAX_DEPTH
        assert parsed is not None or value is None or nesting == 0


@pytest.mark.parametrize("depth", [33, 50_000])
def test_deep_brackets_are_refused_before_parsing(depth):
    with pytest.raises(files.JsonLimitError, match="levels deep"):
        files.parse_json("[" * depth + "]" * depth)
