"""The set-up: the packaged model exported and quantized, without torch when only a quantized
file is missing, and the same file the installed one is."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

from executive.memory.store.embedder import EMBEDDERS, OnnxEncoder, encoder, model_file
from executive.setup import models
from tests.conftest import clean_env
from tests.memory.store.test_embedder import TEXTS

SET_UP = [sys.executable, "-X", "importtime", "-m", "executive.setup.models"]


def test_set_up_adds_a_missing_model_without_torch_and_makes_the_same_file(tmp_path):
    """The set-up adding a missing smoothed model (~10 s of smoothing and quantizing)."""
    target = tmp_path / "models"
    installed = model_file(EMBEDDERS["minilm-fp32"]).parent
    folder = target / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    for name in (models.FP32, models.INT8, *models._FILES):
        (folder / name).symlink_to(installed / name)
    # Its output to a file: -X importtime writes more than a pipe holds before it is read.
    with (target / "stderr.txt").open("w") as stderr:
        process = subprocess.run(
            [*SET_UP, "--models-dir", str(target)],
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            timeout=300,
            check=False,
        )
    stderr = (target / "stderr.txt").read_text()
    assert process.returncode == 0, stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if "|" in line}
    assert "onnxruntime.quantization" in imported
    assert not {m for m in imported if m.split(".")[0] in ("torch", "transformers")}
    assert (folder / models.INT8).is_symlink()  # present, so left alone
    assert not list(folder.glob(".*partial"))
    # The smoothing kept the fp32 function: (X / s)(s W) = X W (measured min 0.999999); what
    # the quantizer then loses is its own.
    kept = re.search(r"checked: the smoothed fp32 min cosine to fp32 ([0-9.]+)", stderr)
    assert kept and float(kept[1]) > 0.99999, stderr[-2000:]
    import onnx  # 0.8 s to import: only the process that runs this test pays it

    plain = [n.op_type for n in onnx.load(str(folder / models.INT8)).graph.node]
    smoothed = [n.op_type for n in onnx.load(str(folder / models.SMOOTH)).graph.node]
    assert smoothed.count("Mul") > plain.count("Mul")  # the smoothing
    # The Reshapes got constant targets: the shape arithmetic that computed them is gone.
    assert smoothed.count("Shape") < plain.count("Shape") / 4
    assert len(smoothed) < len(plain)
    # The recipe is deterministic: the same vectors as the installed file of the same name.
    made = OnnxEncoder(folder / models.SMOOTH).encode(TEXTS)
    assert np.array_equal(made, encoder(model_file(EMBEDDERS["minilm-int8-smooth"])).encode(TEXTS))
    again = subprocess.run(
        [SET_UP[0], "-m", "executive.setup.models", "--models-dir", str(target)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0 and "in place" in again.stderr
