"""JSON and YAML from untrusted hands: bounded before they are parsed."""

import json

import pytest
import yaml

from executive.files import JsonLimitError, YamlLimitError, parse_json, parse_yaml


def laughs(levels: int = 9) -> str:
    """The "billion laughs": each anchor a list of nine aliases of the one before."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_parses_what_safe_load_parses():
    text = "title: T\nsteps:\n  - title: One\n    prompt: '[not {a} list'\ncommand: [sh, -c, x]\n"
    assert parse_yaml(text) == yaml.safe_load(text)


@pytest.mark.parametrize(
    "text",
    [
        "v: " + "[" * 600 + "]" * 600,  # break 1: RecursionError in safe_load
        "v: " + "{a: " * 600 + "1" + "}" * 600,
        "v:\n" + "".join(" " * n + "-\n" for n in range(1, 40)),  # block style, no brackets
        "v: " + "[" * 120_000,  # the scanner's cost grows with the square of this
    ],
    ids=["flow-sequences", "flow-mappings", "block-sequences", "unclosed-120k"],
)
def test_yaml_refuses_deep_nesting_before_composing(text):
    with pytest.raises(YamlLimitError, match="nests deeper than 16 levels"):
        parse_yaml(text, max_bytes=len(text))


def test_yaml_nesting_up_to_the_limit_parses_and_one_more_is_refused():
    assert parse_yaml("[" * 4 + "]" * 4, max_depth=4) == [[[[]]]]
    with pytest.raises(YamlLimitError, match="line 1: YAML nests deeper than 4"):
        parse_yaml("[" * 5 + "]" * 5, max_depth=4)


def test_yaml_brackets_inside_strings_and_block_scalars_do_not_count():
    text = "a: '" + "[" * 100 + "'\nb: |\n  " + "{" * 100 + "\n"
    assert parse_yaml(text, max_depth=1)["a"] == "[" * 100


@pytest.mark.parametrize(
    "text",
    [laughs(), "a: &x 1\n", "a: !!str &x 1\n", "b: *x\n", "base: &b {k: 1}\nc:\n  <<: *b\n"],
    ids=["billion-laughs", "anchor", "tagged-anchor", "alias", "merge-key"],
)
def test_yaml_refuses_anchors_and_aliases(text):
    with pytest.raises(YamlLimitError, match="anchors and aliases"):
        parse_yaml(text)


def test_yaml_refuses_oversized_input_before_parsing():
    with pytest.raises(YamlLimitError, match="is 21 bytes; the limit is 20"):
        parse_yaml("v: " + "é" * 9, max_bytes=20)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("model: 2001-13-45\n", "month must be in 1..12"),  # a date Python refuses
        ("n: " + "9" * 5000 + "\n", "Exceeds the limit"),  # int() digit limit
        ("a: [unclosed\n", "not valid YAML"),
        ("a: 1\n--- \nb: 2\n", "not valid YAML"),  # two documents
        ("a: !!python/object:os.system x\n", "not valid YAML"),
        ("a: \x07\n", "not valid YAML"),  # a control character
    ],
    ids=["bad-date", "huge-int", "unclosed", "two-documents", "python-tag", "control-char"],
)
def test_every_other_failure_is_a_yaml_limit_error_that_says_why(text, words):
    with pytest.raises(YamlLimitError, match=words.replace(".", r"\.")):
        parse_yaml(text)


def test_json_parses_ordinary_json():
    assert parse_json(b'{"op": "add", "args": {"tags": ["a", "[b"]}}') == {
        "op": "add",
        "args": {"tags": ["a", "[b"]},
    }


def test_json_refuses_deep_nesting_before_parsing():
    with pytest.raises(JsonLimitError, match="nests 50000 levels"):
        parse_json("[" * 50_000)


def test_json_brackets_inside_strings_do_not_count():
    text = json.dumps({"text": "[" * 1000 + '\\"' + "{" * 1000})
    assert parse_json(text, max_depth=1)["text"].startswith("[[[")


def test_json_refuses_oversized_input():
    with pytest.raises(JsonLimitError, match="limit is 10"):
        parse_json(b'"' + b"x" * 20 + b'"', max_bytes=10)


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"{", b"nope"])
def test_json_malformed_input_is_a_value_error_that_names_it(raw):
    with pytest.raises(ValueError, match=r"UTF-8|not JSON"):
        parse_json(raw)


def test_a_number_python_will_not_convert_is_a_json_limit_error():
    # json.loads raises a plain ValueError here, which read_state did not catch: a STEPS.json
    # holding one failed every iteration.
    with pytest.raises(JsonLimitError, match="a value cannot be read: Exceeds the limit"):
        parse_json('{"number": ' + "7" * 5000 + "}")
