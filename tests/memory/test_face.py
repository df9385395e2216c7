"""The memory rooms' faces: each name a face lists is the object its ``TYPE_CHECKING`` import
names (so type checkers, import-linter and the running code agree), and a face loads only
what is asked of it."""

from __future__ import annotations

import importlib

import pytest

from executive.memory.face import static_imports
from tests.conftest import loaded_by

FACES = ["executive.memory.read", "executive.memory.write", "executive.memory.durability"]


@pytest.mark.parametrize("package", FACES)
def test_a_face_names_what_its_static_imports_name(package: str) -> None:
    face = importlib.import_module(package)
    static = static_imports(package)
    assert sorted(static) == sorted(face.__all__)
    for name, (module, attribute) in static.items():
        assert getattr(face, name) is getattr(importlib.import_module(module), attribute), name


def test_a_name_no_face_has_is_an_attribute_error() -> None:
    face = importlib.import_module("executive.memory.write")
    with pytest.raises(AttributeError, match="has no attribute 'harvest'"):
        face.harvest  # noqa: B018


def test_one_module_of_a_room_loads_without_the_rest_of_it() -> None:
    loaded = [m for m in loaded_by("executive.memory.write.ledger") if m.startswith("executive.")]
    assert "executive.memory.write.ledger" in loaded
    assert "executive.memory.write.harvester" not in loaded
    assert not [m for m in loaded if m.startswith("executive.memory.read")]
