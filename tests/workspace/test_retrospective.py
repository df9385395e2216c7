from __future__ import annotations

from executive.workspace.retrospective import Lesson, Retrospective, parse_lessons


def test_render_then_parse_gives_the_lessons_back():
    retro = Retrospective(
        date="2026-12-02",
        period="p",
        summary="s",
        lessons=[
            Lesson("pattern", "flaky", "It fails (runs a, b)."),
            Lesson("rule", "_global", "Always retry."),
        ],
    )
    text = retro.render()
    for heading in ("## Outcomes", "## Failures by root signal", "## Slow steps", "## Lessons"):
        assert heading in text
    assert parse_lessons(text) == retro.lessons


def test_only_lesson_lines_of_the_lessons_section_count():
    text = "## Outcomes\n- [fact] (x) not a lesson here\n## Lessons\n- [fact] (x) one\n  continued\n- prose line\n- [idea] (x) unknown kind\n- [steps] two\n"
    assert parse_lessons(text) == [
        Lesson("fact", "x", "one continued"),
        Lesson("steps", "_global", "two"),
    ]
