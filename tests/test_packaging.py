"""What the code imports is declared in pyproject.toml, and what is declared is locked."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from packaging.requirements import Requirement

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# The extras the set-up installs (`make setup`, `make lock`); `claude` is part of `dev`.
LOCKED_EXTRAS = ("dev", "setup")


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> dict[str, Requirement]:
    project = PYPROJECT["project"]
    lines = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        lines += extra
    return {normal(r.name): r for r in map(Requirement, lines)}


def imported_packages() -> dict[str, set[str]]:
    """Every top-level package that a module under src/ imports, stdlib and ours aside, with
    the files that import it."""
    found: dict[str, set[str]] = {}
    for path in (REPO / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "executive":
                    found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_package_the_code_imports_is_declared():
    owners = packages_distributions()
    names = declared()
    missing = {
        package: sorted(files)
        for package, files in imported_packages().items()
        if not any(normal(owner) in names for owner in owners.get(package, [package]))
    }
    assert missing == {}, "imported but not in pyproject.toml's dependencies or extras"


def test_every_declared_package_is_locked_at_a_version_it_allows():
    locked = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not an exact pin"
            locked[normal(name)] = version
    project = PYPROJECT["project"]
    wanted = [*project["dependencies"]]
    for extra in LOCKED_EXTRAS:
        wanted += project["optional-dependencies"][extra]
    for requirement in map(Requirement, wanted):
        version = locked.get(normal(requirement.name))
        assert version is not None, f"{requirement.name} is declared but not locked: make lock"
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements.lock pins {requirement.name}=={version}, outside {requirement}"
        )
    assert locked["torch"].endswith("+cpu")  # a CUDA build would be gigabytes
