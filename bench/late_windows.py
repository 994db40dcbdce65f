"""Sentence windows by late chunking: measured, not kept (docs/design.md, "Sentence windows").

A chunk's windows (collection/windows.py) are embedded one by one, each its own pass through
the model: the vector stage runs 2.3x as long as for the chunks alone. Late chunking would make
them free: the chunk's own pass already computes a state for every token, and a window's
vector can be the mean of the states of its tokens (with the `passage:` prefix, the heading
path and the special tokens: `head`, as a window is read on its own; or its sentences' tokens
alone: `span`). Each token then reads the whole chunk, not only its window.

This copies an index folder, rewrites every window vector of the copy from its chunk's token
states (memo's built ONNX model, which has a `last_hidden_state` output), and ranks the same
questions with bench/notes.py over the original and the copy: the `memo` row of each.

    python bench/late_windows.py --index-dir DIR/indexes --vault-ru DIR/ru-drafted \\
        --vault-en DIR/en-drafted [--pool head|span]
    python bench/late_windows.py --smoke
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from judged import smoke_args, smoke_eval  # noqa: E402

from memo.collection import store, windows  # noqa: E402
from memo.collection.chunker import passage_text  # noqa: E402
from memo.collection.vectors import dequantize_rows, quantize  # noqa: E402
from memo.embed.default_backend import DefaultEmbedder  # noqa: E402

PREFIX = "passage: "


class TokenStates:
    """Every token's last hidden state of one passage, from memo's built ONNX model."""

    def __init__(self) -> None:
        engine = DefaultEmbedder(None)._engine()  # the built model, never a fallback
        engine._load()
        self.engine = engine

    def __call__(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]] | None:
        """(states (n, dim), each token's character offsets), None beyond one model window."""
        enc = self.engine._tokenizer.encode(text)
        if len(enc.ids) > self.engine.max_tokens:
            return None
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self.engine._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        return self.engine._session.run(["last_hidden_state"], feed)[0][0], enc.offsets


def late_vectors(
    states: np.ndarray, offsets: list[tuple[int, int]], text_at: int, spans: list, pool: str
) -> np.ndarray:
    """Unit vectors of a chunk's windows pooled from its token states; `text_at` is where the
    chunk's text starts in the passage the model read."""
    special = [i for i, (s, e) in enumerate(offsets) if s == e]
    head = [i for i, (s, e) in enumerate(offsets) if s != e and s < text_at]
    out = []
    for a, b in spans:
        a, b = a + text_at, b + text_at
        span = [i for i, (s, e) in enumerate(offsets) if s != e and s < b and e > a]
        v = states[special + head + span if pool == "head" else span].mean(axis=0)
        out.append(v / np.linalg.norm(v))
    return np.array(out, dtype=np.float32).reshape(len(spans), -1)


def rewrite(folder: Path, pool: str) -> str:
    """Every window vector of the indexes under `folder` pooled from its chunk's states."""
    states: TokenStates | None = None
    chunks = wins = kept = 0
    cosines: list[float] = []
    t = time.perf_counter()
    for db in sorted(folder.glob("*/index.db")):
        conn = store.connect(db)
        rows = conn.execute("SELECT id, heading, text, wins FROM chunks WHERE wins > 0")
        for cid, heading, packed, count in rows.fetchall():
            text = store.unpack_text(packed)
            states = states or TokenStates()
            got = states(PREFIX + passage_text(heading, text))
            if got is None:  # longer than the model reads at once: its windows stay
                kept += count
                continue
            at = len(PREFIX) + (len(heading) + 2 if heading else 0)
            new = late_vectors(*got, at, windows.spans(text), pool)
            old = store.window_codes(conn, cid, count)
            if old:
                cosines += list((dequantize_rows(old) * new).sum(axis=1))
            codes = quantize(new)
            with conn:
                for k in range(count):
                    rid = windows.rowid(cid, k)
                    conn.execute("DELETE FROM windows_vec WHERE rowid = ?", (rid,))
                    conn.execute(
                        "INSERT INTO windows_vec(rowid, embedding) VALUES (?, vec_int8(?))",
                        (rid, codes[k].tobytes()),
                    )
            chunks, wins = chunks + 1, wins + count
        conn.close()
    cos = "-"
    if cosines:
        cos = f"median {np.median(cosines):.3f}, p10 {np.percentile(cosines, 10):.3f}"
    return (
        f"# {pool}: {wins} windows of {chunks} chunks pooled in {time.perf_counter() - t:.0f} s "
        f"({kept} left as they were); cosine to the windows embedded alone: {cos}"
    )


def ranked(index_dir: Path, sets: list[str]) -> str:
    """bench/notes.py's `memo` row for these indexes."""
    done = subprocess.run(
        [sys.executable, str(HERE / "notes.py"), "--index-dir", str(index_dir), *sets,
         "--held-back", "--rules", "-"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return next(x for x in done.stdout.splitlines() if x.startswith("memo: "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-dir", type=Path, help="the indexes bench/vault.py made")
    ap.add_argument("--vault-ru", type=Path)
    ap.add_argument("--vault-en", type=Path)
    ap.add_argument("--distract", type=Path)
    ap.add_argument("--pool", choices=("head", "span"), default="head")
    smoke_args(ap)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="memo-late-"))
    if args.smoke:
        args.distract = smoke_eval(scratch) / "xquad-dev-distract"
        args.index_dir = scratch / "indexes"
    sets = [
        x
        for flag, value in (
            ("--vault-ru", args.vault_ru),
            ("--vault-en", args.vault_en),
            ("--distract", args.distract),
        )  # fmt: skip
        if value
        for x in (flag, str(value))
    ]
    if args.index_dir is None or not sets:
        ap.error("give --index-dir and at least one set (or --smoke)")
    if args.smoke:  # its notes are too short for windows: pool one made chunk's
        text = " ".join(f"Sentence number {i} says a thing." for i in range(6))
        heading = "A note > A section"
        got = TokenStates()(PREFIX + passage_text(heading, text))
        assert got is not None
        vecs = late_vectors(*got, len(PREFIX) + len(heading) + 2, windows.spans(text), "head")
        assert vecs.shape == (len(windows.windows(heading, text)), 384), vecs.shape
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    print("as indexed:", ranked(args.index_dir, sets))  # indexes the smoke set, too
    late = scratch / "late"
    shutil.copytree(args.index_dir, late)
    print(rewrite(late, args.pool))
    print("late windows:", ranked(late, sets))
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
