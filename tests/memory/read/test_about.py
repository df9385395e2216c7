from __future__ import annotations

from executive.memory.read import about
from executive.memory.read.plan import for_step
from executive.memory.store.base import MemoryRecord


def test_the_paths_a_goal_names_are_found_in_plain_form():
    text = (
        "Fix ./src/weather/parser.py (see README.md and https://example.com/docs/page.html); "
        "bump v1.2.3 e.g. in pyproject.toml, not ../../etc/passwd.txt or user@host.py"
    )
    assert about.paths_in(text) == ("src/weather/parser.py", "README.md", "pyproject.toml")
    assert about.paths_in("nothing here, version 2.0, e.g. foo") == ()


def _record(i: int, files: list[str]) -> MemoryRecord:
    return MemoryRecord(id=f"m{i}", text="x", metadata={"type": "episodic", "files": files})


def test_near_files_share_a_folder_with_a_named_one_most_mentioned_first():
    records = [
        _record(1, ["src/weather/cli.py", "src/weather/units.py"]),
        _record(2, ["src/weather/units.py", "docs/index.md"]),
        _record(3, ["src/weather/parser.py"]),
        MemoryRecord(id="m4", text="x", metadata={"files": "not a list"}),
    ]
    assert about.near(["src/weather/parser.py"], records) == [
        "src/weather/units.py",
        "src/weather/cli.py",
    ]
    assert about.near(["parser.py"], records) == []  # no folder named: nothing is near


def test_a_step_that_names_a_file_asks_about_it():
    request = for_step(
        title="Parse the feed",
        slug="weather",
        app_id="weather",
        step_number=1,
        step_title="Parse the feed",
        vendor="claude",
        description="The parser in src/weather/parser.py drops the city field.",
    )
    assert request.paths == ("src/weather/parser.py",)
    assert request.questions[-1] == (
        "What do we know about src/weather/parser.py: what was changed there, what failed, "
        "and what fixed it?"
    )


def test_a_module_named_the_way_code_names_it_is_the_end_of_a_file():
    text = "Subclass models.base.ModelBase, then call django.db.models.sql.query; self.x.y stays."
    assert about.modules_in(text) == ("models/base.py", "django/db/models/sql/query.py")
    card = MemoryRecord(
        id="c", text="card", app_id="django", metadata={"files": ["django/db/models/base.py"]}
    )
    assert about.naming(card, ("models/base.py",)) and not about.naming(card, ("base.py/x",))
    assert about.files_of(card) == ["django/db/models/base.py"]
    assert about.files_of(MemoryRecord(id="x", text="t", app_id="a", metadata={})) == []
