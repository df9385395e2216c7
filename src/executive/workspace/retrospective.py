"""The retrospective document: a fixed, sectioned markdown format, written and read back.

The loop writes one in the idle branch (``learning/retrospectives/retro-YYYY-MM-DD.md``);
Hook E reads its ``## Lessons`` section, where every lesson is one line:

    - [pattern|fact|steps|rule] (<bundle slug or _global>) <the lesson, with identifiers>

A person may add lessons in the same form; free prose elsewhere is for people (the LLM
engine can distil it, the built-in one reads only the lesson lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

LESSON_KINDS = ("pattern", "fact", "steps", "rule")
_LESSON = re.compile(r"^- \[(?P<kind>[a-z]+)\]\s+(?:\((?P<scope>[^)]+)\)\s+)?(?P<text>.+)$")


@dataclass(frozen=True)
class Lesson:
    kind: str  # pattern | fact | steps | rule
    scope: str  # a bundle slug or _global
    text: str

    def line(self) -> str:
        return f"- [{self.kind}] ({self.scope}) {self.text}"


@dataclass
class Retrospective:
    date: str
    period: str
    summary: str
    outcomes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    slow_steps: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # what the passing runs changed
    lessons: list[Lesson] = field(default_factory=list)

    def render(self) -> str:
        def section(title: str, lines: list[str], empty: str) -> list[str]:
            return [f"## {title}", "", *(lines or [f"_{empty}_"]), ""]

        lessons = [lesson.line() for lesson in self.lessons]
        parts = [
            f"# Retrospective {self.date}",
            "",
            f"Period: {self.period} · {self.summary}",
            "",
            *section("Outcomes", self.outcomes, "No outcomes in this period."),
            *section("Failures by root signal", self.failures, "No failures."),
            *section("Slow steps", self.slow_steps, "No step took more than twice its estimate."),
            *section("What the runs changed", self.changes, "No run's record named a file."),
            *section("Lessons", lessons, "No lessons this time."),
        ]
        return "\n".join(parts).rstrip() + "\n"


def parse_lessons(markdown: str) -> list[Lesson]:
    """The lesson lines of a retrospective's ``## Lessons`` section, in order."""
    lessons: list[Lesson] = []
    in_lessons = False
    for raw in markdown.splitlines():
        if raw.startswith("## "):
            in_lessons = raw[3:].strip().lower() == "lessons"
            continue
        if not in_lessons:
            continue
        match = _LESSON.match(raw.strip())
        if match and match.group("kind") in LESSON_KINDS:
            scope = (match.group("scope") or "_global").strip()
            lessons.append(Lesson(match.group("kind"), scope, match.group("text").strip()))
        elif raw.startswith("  ") and lessons and raw.strip():
            lessons[-1] = replace(lessons[-1], text=f"{lessons[-1].text} {raw.strip()}")
    return lessons
