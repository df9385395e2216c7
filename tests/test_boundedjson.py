import json

import pytest

from executive import boundedjson
from executive.boundedjson import JsonLimitError


def test_parses_ordinary_json():
    assert boundedjson.loads(b'{"op": "add", "args": {"tags": ["a", "[b"]}}') == {
        "op": "add",
        "args": {"tags": ["a", "[b"]},
    }


def test_refuses_deep_nesting_before_parsing():
    with pytest.raises(JsonLimitError, match="nests 50000 levels"):
        boundedjson.loads("[" * 50_000)


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"text": "[" * 1000 + '\\"' + "{" * 1000})
    assert boundedjson.loads(text, max_depth=1)["text"].startswith("[[[")


def test_refuses_oversized_input():
    with pytest.raises(JsonLimitError, match="limit is 10"):
        boundedjson.loads(b'"' + b"x" * 20 + b'"', max_bytes=10)


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"{", b"nope"])
def test_malformed_input_is_a_value_error_that_names_it(raw):
    with pytest.raises(ValueError, match=r"UTF-8|not JSON"):
        boundedjson.loads(raw)


def test_a_number_python_will_not_convert_is_a_json_limit_error():
    # json.loads raises a plain ValueError here, which read_state did not catch: a STEPS.json
    # holding one failed every iteration.
    with pytest.raises(JsonLimitError, match="a value cannot be read: Exceeds the limit"):
        boundedjson.loads('{"number": ' + "7" * 5000 + "}")
