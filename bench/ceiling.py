"""How far can the evidence memo already has take the vault's ranking? (issue 31, item 3)

Every rule measured in bench/notes.py moved one to three questions. This asks the question
behind them: is the ranking short of the issue's targets because the rules combine the
evidence badly, or because the evidence itself (e5-small's cosines, BM25 on stems, the note's
mean vector, titles and headings) does not tell the answer from its neighbours?

For every question of the vault benchmark (bench/vault/), memo ranks the whole library once
(search/ranking.py `rank`, as a search does); its fused top 50 are the pool. Three figures:

1. **memo**: memo's own order (the diversity cap as a search applies it);
2. **pool recall**: R@10 / R@20 / R@50 of memo's order, whatever reorders the pool can reach
   no further than R@50;
3. **learned**: a linear ranker over every candidate's evidence (below), fitted on the
   `tune` half of all four sets at once, the pool re-ordered by it, read through the same
   diversity cap, reported on both halves. It learns from the dev half the weights no hand
   rule chose, so its held-back figure is what a combination of this evidence can give on
   questions it has not seen: an estimate of the ceiling, not a rule to ship.

Evidence per candidate (each phrasing's best, for `also`): the vector leg's cosine and its
z; the lexical leg's z and its weight (coverage², · 0.3 across languages) and their product;
the note's mean-vector cosine z; the IDF-weighted share of the question's stems in the chunk's
title (the heading path's first part) and in its own headings; the chunk's length (log words);
whether it is the note's first section; how many of the pool's candidates its note holds and
the best vector z among them; memo's own fused log-score.

    python bench/ceiling.py --vault-ru SCRATCH/ru-drafted --vault-en SCRATCH/en-drafted \\
        --index-dir SCRATCH/indexes        # the libraries bench/vault.py adopted and indexed
    python bench/ceiling.py --smoke        # a tiny set it makes itself: the code path, in seconds
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from judged import smoke_args, smoke_eval  # noqa: E402
from notes import asked_distract, asked_vault, collect  # noqa: E402
from vault import half, rank_of, spans_of  # noqa: E402

from memo.collection.vectors import dequantize_rows  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.confidence import _top_share as held  # noqa: E402
from memo.search.diversity import notes_cap  # noqa: E402
from memo.search.fusion import lex_weight, standardised  # noqa: E402
from memo.search.legs import note_cosines  # noqa: E402
from memo.search.ranking import Ranking  # noqa: E402

K = 10
POOL = 50
NAMES = [
    "cos", "vz", "lz", "lw", "lw*lz", "note z", "title share", "heads share", "log words",
    "first section", "note's pool share", "note's best vz", "memo log-score", "own cos",
    "neighbour cos",
]  # fmt: skip


def _own_and_neighbours(store: Any, ids: list[int]) -> dict[int, tuple[bytes | None, list[bytes]]]:
    """Each chunk's own stored vector and those of the chunks before and after it in its note."""
    out: dict[int, tuple[bytes | None, list[bytes]]] = {}
    if not store.has_vec:
        return out
    for cid in ids:
        got = store.conn.execute("SELECT path, ord FROM chunks WHERE id = ?", (cid,)).fetchone()
        if got is None:
            continue
        near = store.conn.execute(
            "SELECT c.id FROM chunks c WHERE c.path = ? AND c.ord IN (?, ?)",
            (got[0], got[1] - 1, got[1] + 1),
        ).fetchall()
        vec = {
            rid: bytes(e)
            for rid, e in store.conn.execute(
                f"SELECT rowid, embedding FROM chunks_vec WHERE rowid IN"
                f" ({','.join('?' * (1 + len(near)))})",
                (cid, *[n[0] for n in near]),
            ).fetchall()
        }
        out[cid] = (vec.get(cid), [vec[n[0]] for n in near if n[0] in vec])
    return out


def features(r: Ranking) -> tuple[list[Any], np.ndarray, dict]:
    """The pool's keys, one row of evidence per key, and their rows."""
    order, rows = r._ordered(POOL)
    order = order[:POOL]
    qvecs = [lg.qvec for lg in r.phrasings if lg.qvec is not None]
    note_of, cos = note_cosines(r.reader, order, qvecs) if qvecs else ({}, {})
    notes = sorted(cos)
    nz_list, _ = standardised([cos[n] for n in notes])
    nz = dict(zip(notes, nz_list, strict=True))
    per: dict[str, dict[Any, float]] = {n: {} for n in ("cos", "vz", "lz", "lw", "lwlz")}
    title: dict[Any, float] = {}
    heads: dict[Any, float] = {}
    for legs in r.phrasings:
        vz, v_floor = standardised([s for _, s in legs.vec])
        lz, l_floor = standardised(
            [s for _, s in legs.lex], floor=0.0, count=max(1, len(legs.vec) - len(legs.lex))
        )
        vec = {k: (s, vz[i]) for i, (k, s) in enumerate(legs.vec)}
        lex = {k: lz[i] for i, (k, _) in enumerate(legs.lex)}
        w = lex_weight(legs)
        floor_cos = legs.vec[-1][1] if legs.vec else 0.0
        for key in order:
            c, z = vec.get(key, (floor_cos, v_floor))
            lzk = lex.get(key, l_floor)
            for name, value in (("cos", c), ("vz", z), ("lz", lzk), ("lw", w), ("lwlz", w * lzk)):
                per[name][key] = max(per[name].get(key, -1e9), value)
            parts = rows[key].heading.split(" > ")
            # the IDF-weighted share of the question held, as confidence's top_share counts it
            title[key] = max(title.get(key, 0.0), held(legs, parts[0]))
            heads[key] = max(heads.get(key, 0.0), held(legs, " ".join(parts[1:])))
    own: dict[Any, float] = {}
    around: dict[Any, float] = {}
    q = np.asarray(qvecs, dtype=np.float64) if qvecs else None
    by_coll: dict[int, list[int]] = {}
    for ci, cid in order:
        by_coll.setdefault(ci, []).append(cid)
    for ci, ids in by_coll.items():
        got = r.reader.read(ci, lambda store, ids=ids: _own_and_neighbours(store, ids))
        for cid, (mine, near) in got.items():
            if q is None or mine is None:
                continue
            own[(ci, cid)] = float(np.max(q @ dequantize_rows([mine]).T))
            if near:
                around[(ci, cid)] = float(np.max(q @ dequantize_rows(near).T))
    pool_notes: dict[Any, list[Any]] = {}
    for key in order:
        pool_notes.setdefault((key[0], rows[key].path), []).append(key)
    out = []
    for key in order:
        note = (key[0], rows[key].path)
        mine = pool_notes[note]
        out.append(
            [
                per["cos"][key],
                per["vz"][key],
                per["lz"][key],
                per["lw"][key],
                per["lwlz"][key],
                nz.get(note_of.get(key), 0.0),
                title[key],
                heads[key],
                math.log1p(len(rows[key].text.split())),
                float(" > " not in rows[key].heading),
                len(mine) / len(order),
                max(per["vz"][k] for k in mine),
                math.log(r.scores[key]),
                own.get(key, per["cos"][key]),
                around.get(key, 0.0),
            ]
        )
    return order, np.array(out, dtype=np.float64), rows


def _hit_of(r: Ranking, key: Any, rows: dict) -> Any:
    return r._hits([key], rows)[0]


def fit(
    groups: list[tuple[np.ndarray, np.ndarray]], l2: float = 1e-3, steps: int = 2000
) -> np.ndarray:
    """A listwise linear ranker (numpy only): over each question's pool, the softmax of the
    scores x·w, fitted to put its mass on the right candidates (-log of their share, the
    loss of ListNet with one relevant group), with a little L2. Questions whose pool holds
    no right candidate teach nothing and are left out. x is standardised by the caller."""
    groups = [(x, y) for x, y in groups if y.any()]
    w = np.zeros(groups[0][0].shape[1])
    m = v = np.zeros_like(w)
    for step in range(1, steps + 1):  # Adam
        g = l2 * w
        for x, y in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            q = p * y / (p * y).sum()  # the softmax within the right candidates
            g = g + x.T @ (p - q) / len(groups)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault-ru", type=Path)
    ap.add_argument("--vault-en", type=Path)
    ap.add_argument("--index-dir", type=Path, default=None)
    smoke_args(ap)
    args = ap.parse_args()
    smoke = args.smoke
    if smoke:  # the code path over a tiny distract-shaped set; its halves are its own
        folder = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-ceiling-smoke-")))
        args.index_dir = folder / "indexes"
        folder = folder / "xquad-dev-distract"
    if args.index_dir:
        os.environ["MEMO_INDEX_DIR"] = str(args.index_dir)
    settings = Settings.from_env()
    emb = embedder_for(settings, "serve")
    t = time.perf_counter()
    sets: list[tuple[str, list]] = []
    if smoke:
        lib = Library(folder / "ru", emb, settings)
        lib.index()
        for sub, label, qs in asked_distract(folder):
            if sub == "ru":
                sets.append((label, collect(lib, qs)))
    for lang, root in (("ru", args.vault_ru), ("en", args.vault_en)):
        if root:
            lib = Library(root, emb, settings)
            lib.index()
            for label, qs in asked_vault(lang):
                sets.append((label, collect(lib, [q for q in qs if "path" in q])))
    print(f"# ranked in {time.perf_counter() - t:.0f} s; load {os.getloadavg()[0]:.2f}")
    data = []  # (set, id, half, keys, x, y, ranking, rows)
    for label, items in sets:
        for q, r in items:
            keys, x, rows = features(r)
            spans = spans_of(q)
            y = np.array([rank_of([_hit_of(r, k, rows)], spans, 1) == 1 for k in keys], float)
            data.append((label, q["id"], half(q["id"]), keys, x, y, r, rows))
    tune = [d for d in data if d[2] == "tune"]
    xs = np.vstack([d[4] for d in tune])
    mu, sd = xs.mean(axis=0), xs.std(axis=0) + 1e-9
    w = fit([((d[4] - mu) / sd, d[5]) for d in tune])
    print("weights (standardised features):")
    print("  " + ", ".join(f"{n} {v:+.2f}" for n, v in zip(NAMES, w, strict=True)))
    print()
    print(
        "| set | half | n | memo R@1 / R@5 / MRR | pool R@10 / R@20 / R@50"
        " | learned R@1 / R@5 / MRR |"
    )
    print("|---|---|---|---|---|---|")
    for label in dict.fromkeys(d[0] for d in data):
        for part in ("tune", "held-back"):
            rows_ = [d for d in data if d[0] == label and d[2] == part]
            if not rows_:
                continue
            memo_r, learned_r, pool = [], [], []
            for _, _, _, keys, x, y, r, rows in rows_:
                memo_r.append(_rank(r, keys, rows, y, None))
                s = ((x - mu) / sd) @ w
                learned_r.append(_rank(r, keys, rows, y, s))
                first = [i for i in range(len(y)) if y[i]]
                pool.append(first[0] + 1 if first else None)
            print(
                f"| {label} | {part} | {len(rows_)} | {_fmt(memo_r)} |"
                f" {_at(pool, 10):.3f} / {_at(pool, 20):.3f} / {_at(pool, 50):.3f} |"
                f" {_fmt(learned_r)} |"
            )


def _rank(r: Ranking, keys: list, rows: dict, y: np.ndarray, s: np.ndarray | None) -> int | None:
    """The first right hit's rank among k hits read through the diversity cap, in memo's
    order or in the order of scores `s`."""
    if s is None:
        scores = r.scores
    else:
        scores = {k: math.exp(float(v)) for k, v in zip(keys, s, strict=True)}
    again = Ranking(r.reader, r.legs, scores, phrasings=r.phrasings, _rows=rows)
    hits = again.hits(K, notes_cap(K))
    right = {(_hit_of(r, k, rows).path, rows[k].line) for k, yy in zip(keys, y, strict=True) if yy}
    for i, h in enumerate(hits, start=1):
        if (h.path, h.line) in right:
            return i
    return None


def _at(ranks: list, k: int) -> float:
    return sum(x is not None and x <= k for x in ranks) / max(1, len(ranks))


def _fmt(ranks: list) -> str:
    mrr = sum(1 / x for x in ranks if x) / max(1, len(ranks))
    return f"{_at(ranks, 1):.3f} / {_at(ranks, 5):.3f} / {mrr:.3f}"


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
