"""ONNX Runtime's telemetry is off wherever we import it: no device id, no event store, no
session file, no uploader (a real interpreter, its HOME and TMPDIR in the test's folder)."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import pytest

from executive.memory.store import ortenv
from tests.conftest import REPO, clean_env

EMBED = """
import os
from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS, Embedder
vector = Embedder(EMBEDDERS[DEFAULT_EMBEDDER]).embed("Pin uv in CI.", "search")
print(len(vector), os.environ.get("ORT_DISABLE_TELEMETRY"))
"""


def test_an_embed_leaves_no_telemetry_file_and_turns_the_uploader_off(tmp_path):
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = clean_env({"HOME": str(home), "TMPDIR": str(tmp)})
    env.pop("ORT_DISABLE_TELEMETRY", None)  # the code must set it, not the test's process
    ran = subprocess.run(
        [sys.executable, "-c", EMBED], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["384", "1"]
    assert list(tmp.iterdir()) == []  # the 1DS session file (.ses) is made at import
    assert not (home / ".cache" / "Microsoft").exists()  # the device id and event store


def test_an_import_that_came_first_with_telemetry_on_is_refused_by_name(monkeypatch):
    # A stand-in for a runtime imported earlier without the variable: a real one would start
    # the very uploader this module keeps off.
    monkeypatch.setitem(sys.modules, "onnxruntime", ModuleType("onnxruntime"))
    monkeypatch.delenv(ortenv.VARIABLE, raising=False)
    with pytest.raises(ortenv.TelemetryOn, match="imported before ORT_DISABLE_TELEMETRY=1"):
        ortenv.onnxruntime()
