import pytest
import yaml

from executive import boundedyaml
from executive.boundedyaml import YamlLimitError


def laughs(levels: int = 9) -> str:
    """The "billion laughs": each anchor a list of nine aliases of the one before."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_parses_what_safe_load_parses():
    text = "title: T\nsteps:\n  - title: One\n    prompt: '[not {a} list'\ncommand: [sh, -c, x]\n"
    assert boundedyaml.loads(text) == yaml.safe_load(text)


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
def test_refuses_deep_nesting_before_composing(text):
    with pytest.raises(YamlLimitError, match="nests deeper than 16 levels"):
        boundedyaml.loads(text, max_bytes=len(text))


def test_nesting_up_to_the_limit_parses_and_one_more_is_refused():
    assert boundedyaml.loads("[" * 4 + "]" * 4, max_depth=4) == [[[[]]]]
    with pytest.raises(YamlLimitError, match="line 1: YAML nests deeper than 4"):
        boundedyaml.loads("[" * 5 + "]" * 5, max_depth=4)


def test_brackets_inside_strings_and_block_scalars_do_not_count():
    text = "a: '" + "[" * 100 + "'\nb: |\n  " + "{" * 100 + "\n"
    assert boundedyaml.loads(text, max_depth=1)["a"] == "[" * 100


@pytest.mark.parametrize(
    "text",
    [laughs(), "a: &x 1\n", "a: !!str &x 1\n", "b: *x\n", "base: &b {k: 1}\nc:\n  <<: *b\n"],
    ids=["billion-laughs", "anchor", "tagged-anchor", "alias", "merge-key"],
)
def test_refuses_anchors_and_aliases(text):
    with pytest.raises(YamlLimitError, match="anchors and aliases"):
        boundedyaml.loads(text)


def test_refuses_oversized_input_before_parsing():
    with pytest.raises(YamlLimitError, match="is 21 bytes; the limit is 20"):
        boundedyaml.loads("v: " + "é" * 9, max_bytes=20)


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
        boundedyaml.loads(text)
