from __future__ import annotations

import pytest

from executive.workspace.bundle import BundleError, load


def write(tmp_path, text: str, name: str = "my-goal"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "PROMPT.md").write_text(text)
    return folder


def test_a_full_bundle_parses(tmp_path):
    bundle = load(
        write(
            tmp_path,
            "---\ntitle: Build it\npriority: P1\nvendor: command\ncommand: sh run.sh {output_dir}\n"
            "verifiers:\n  - builtin: output_exists\n    path: a.txt\n  - run: test -s a.txt\n"
            "  - builtin: git_status_clean\nsteps:\n  - title: One\n    estimated_seconds: 5\n  - title: Two\n"
            "max_attempts: 3\ntimeout_seconds: 30\n---\nThe goal.\n",
        )
    )
    assert bundle.slug == "my-goal" and bundle.app_id == "my-goal"
    assert bundle.spec.command == ["sh", "run.sh", "{output_dir}"]
    assert [v.label for v in bundle.spec.verifiers] == [
        "output_exists:a.txt",
        "test -s a.txt",
        "git_status_clean",
    ]
    assert [s.title for s in bundle.steps] == ["One", "Two"]
    assert bundle.goal == "The goal."


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("no frontmatter", "no YAML frontmatter"),
        ("---\ntitle: [unclosed\n---\nx", "not valid YAML"),
        ("---\n- a list\n---\nx", "must be a YAML mapping"),
        ("---\ntitle: T\npriority: P9\n---\nx", "priority"),
        ("---\ntitle: T\nvendor: command\n---\nx", "needs a command"),
        (
            "---\ntitle: T\nverifers: []\ncommand: x\n---\nx",
            "verifers: Extra inputs are not permitted",
        ),
        ("---\ntitle: T\ncommand: run {secret}\n---\nx", "unknown placeholder {secret}"),
        ("---\ntitle: T\ncommand: x\napp_id: Not_A_Slug\n---\nx", "app_id"),
        ("---\npriority: P1\ncommand: x\n---\nx", "title"),
    ],
)
def test_a_malformed_bundle_names_the_file_and_the_error(tmp_path, text, words):
    folder = write(tmp_path, text)
    with pytest.raises(BundleError) as caught:
        load(folder)
    assert str(folder / "PROMPT.md") in str(caught.value)
    assert words in str(caught.value)


def test_the_default_vendor_needs_a_command_when_it_is_command(tmp_path):
    folder = write(tmp_path, "---\ntitle: T\n---\nx")
    assert load(folder, default_vendor="claude").vendor("claude") == "claude"
    with pytest.raises(BundleError, match="needs a command"):
        load(folder, default_vendor="command")


# Break 1 of issue 30 and its relatives: every one of these used to escape as something other
# than a BundleError (RecursionError, ValueError) and fail the whole iteration.
HOSTILE = [
    ("deep", "---\ntitle: T\ncommand: x\nsteps: " + "[" * 600 + "]" * 600 + "\n---\nx", "nests"),
    ("laughs", "---\ntitle: &t T\ncommand: x\nmodel: *t\n---\nx", "anchors and aliases"),
    ("bad-date", "---\ntitle: T\ncommand: x\nmodel: 2001-13-45\n---\nx", "month must be"),
    ("huge-int", "---\ntitle: T\ncommand: x\nmax_attempts: " + "9" * 5000 + "\n---\nx", "digits"),
    ("oversized", "---\ntitle: T\ncommand: x\nmodel: " + "m" * 70_000 + "\n---\nx", "65536"),
]


@pytest.mark.parametrize(("text", "words"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_frontmatter_is_a_bundle_error_that_says_why(tmp_path, text, words):
    folder = write(tmp_path, text)
    with pytest.raises(BundleError) as caught:
        load(folder)
    assert str(folder / "PROMPT.md") in str(caught.value)
    assert "the frontmatter is refused" in str(caught.value) and words in str(caught.value)


def test_a_valid_bundle_is_well_inside_the_depth_limit(tmp_path):
    # verifiers -> a verifier -> its fields: three levels, against a limit of eight.
    nested = (
        "---\ntitle: T\ncommand: [sh, x]\nverifiers:\n  - {run: 'echo [[[[[[[[[[', name: n}\n---\nx"
    )
    assert load(write(tmp_path, nested)).spec.verifiers[0].label == "n"
