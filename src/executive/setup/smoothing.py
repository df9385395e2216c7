"""SmoothQuant (Xiao et al. 2022) for the set-up's int8 model: the fp32 graph rewritten so
that dynamic int8 quantization loses less, with the same function.

Run by :mod:`executive.setup.models` before it quantizes ``model_int8_smooth.onnx``; set-up only (onnx,
onnxruntime, tokenizers), never imported by the daemon or the CLI.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from executive.memory.store.ortenv import onnxruntime

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


def smooth(fp32: Path, tokenizer: Path, out: Path) -> None:
    """The same function, easier to quantize. Dynamic quantization gives each MatMul's input one
    int8 range per call; in MiniLM a few input channels peak at up to 20x the median channel (the
    FFN's input 9-19x, its output 4-20x, the attention's 4-6x), so the other channels get a handful
    of levels. For every MatMul with constant weights ``W``, its input ``X`` is divided per channel
    by ``s`` (a ``Mul`` node, one per input tensor) and the rows of ``W`` multiplied by it:
    ``(X / s) (s W) = X W`` in fp32 (the vectors are unchanged: cosine 1.000000), but ``X / s`` has
    flat channels. ``s_j = max|X_j|^ALPHA / max|W_j|^(1-ALPHA)``, with the activation maxima
    measured on ``_CALIBRATION`` and floored at their median: channels the calibration rarely
    excited are then left alone instead of amplified. Then :func:`constant_reshapes`, which pays for
    the Mul nodes.
    """
    import onnx

    model = onnx.load(str(fp32))
    weights = {w.name: w for w in model.graph.initializer}
    consumers: dict[str, list[Any]] = defaultdict(list)
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            consumers[node.input[0]].append(node)
    peak = _activation_peaks(model, list(consumers), tokenizer)
    inserted = [
        (nodes[0], _smooth_input(model, weights, name, nodes, peak[name]))
        for name, nodes in consumers.items()
    ]
    order = list(model.graph.node)
    for first, mul in inserted:  # just before its first consumer: the graph stays sorted
        order.insert(order.index(first), mul)
    del model.graph.node[:]
    model.graph.node.extend(order)
    constant_reshapes(model)
    onnx.save(model, str(out))


def _activation_peaks(model: Any, names: list[str], tokenizer: Path) -> dict[str, Any]:
    """Each tensor's per-channel maximum of ``|x|`` over the calibration texts, embedded one
    at a time (the ranges a single embed sees)."""
    import onnx
    from tokenizers import Tokenizer

    session = _probe(model, names, onnx.TensorProto.FLOAT, threads=1)
    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(256)
    peak: dict[str, Any] = {}
    for text in _CALIBRATION:
        ids = np.array([tok.encode(text).ids], np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
        for name, value in zip(names, session.run(names, feed), strict=True):
            channel_max = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
            peak[name] = np.maximum(peak[name], channel_max) if name in peak else channel_max
    return peak


def _smooth_input(
    model: Any, weights: dict[str, Any], name: str, nodes: list[Any], peak: Any
) -> Any:
    """The ``Mul`` node that divides input ``name`` by ``s``; the weights of its MatMuls
    (``nodes``) multiplied by ``s`` in place, and the MatMuls fed from the ``Mul``."""
    from onnx import helper, numpy_helper

    arrays = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
    w_max = np.max([np.abs(a).max(axis=1) for a in arrays], axis=0)
    x_max = np.maximum(peak, np.median(peak))
    scale = (x_max**ALPHA / np.maximum(w_max, 1e-5) ** (1 - ALPHA)).astype(np.float32)
    inverse = numpy_helper.from_array((1 / scale).astype(np.float32), f"{name}/smooth_inv")
    model.graph.initializer.append(inverse)
    mul = helper.make_node("Mul", [name, inverse.name], [f"{name}/smoothed"], f"{name}/smooth")
    for node, array in zip(nodes, arrays, strict=True):
        scaled = (array * scale[:, None]).astype(np.float32)
        weights[node.input[1]].CopyFrom(numpy_helper.from_array(scaled, node.input[1]))
        node.input[0] = mul.output[0]
    return mul


def _probe(model: Any, outputs: list[str], dtype: int, *, nodes: Any = (), threads: int = 0) -> Any:
    """A session of ``model`` (with ``nodes`` added) that also outputs ``outputs``, unoptimised
    so the tensors keep their names."""
    import onnx
    from onnx import helper

    ort = onnxruntime()
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.node.extend(nodes)
    for name in outputs:
        probe.graph.output.append(helper.make_tensor_value_info(name, dtype, None))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(
        probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


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
    import onnx
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
    shapes = [
        helper.make_node("Shape", [node.input[0]], [f"constant_reshapes/{index}/input_shape"])
        for index, node in enumerate(reshapes)
    ]
    pairs = zip(reshapes, shapes, strict=True)
    exposed = list(dict.fromkeys(n for r, s in pairs for n in (r.input[1], s.output[0])))
    session = _probe(model, exposed, onnx.TensorProto.INT64, nodes=shapes)
    runs = []
    for batch, length in ((1, 7), (3, 13)):
        ids = np.ones((batch, length), np.int64)
        feed = {"input_ids": ids, "attention_mask": ids, "token_type_ids": ids * 0}
        runs.append(dict(zip(exposed, session.run(exposed, feed), strict=True)))
    made = 0
    for node, shape in zip(reshapes, shapes, strict=True):
        target = _constant_target(
            [run[node.input[1]].tolist() for run in runs],
            [run[shape.output[0]].tolist() for run in runs],
        )
        if target is None:
            continue
        constant = numpy_helper.from_array(
            np.array(target, np.int64), f"{node.name or node.output[0]}/constant_shape"
        )
        model.graph.initializer.append(constant)
        node.input[1] = constant.name
        made += 1
    _drop_unread(model)
    return made


def _constant_target(targets: list[list[int]], inputs: list[list[int]]) -> list[int] | None:
    """The constant a Reshape's target can be, from its values at two input sizes and its
    input's shapes then; None when it cannot be one."""
    if len(targets[0]) != len(targets[1]):
        return None
    target: list[int | None] = []
    for i, values in enumerate(zip(*targets, strict=True)):
        if values[0] == values[1]:
            target.append(values[0])
        elif all(i < len(shape) and shape[i] == v for shape, v in zip(inputs, values, strict=True)):
            target.append(0)
        else:
            target.append(None)
    if target.count(None) > 1 or (None in target and -1 in target):
        return None
    return [-1 if v is None else v for v in target]


def _drop_unread(model: Any) -> None:
    """What computed the targets now feeds nothing: drop it, and the constants only it read."""
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
