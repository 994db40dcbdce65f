"""The note-level rules bench/notes.py scores (kept apart so a rule is quick to edit).

The rules that add an RRF-shaped bonus to memo's fused score (title_rule, note_vec_rule,
note_sum_rule, both, consts, lexshare_rule, the fused-source prf) were measured when memo fused
by RRF (until d6f07b7: `rrf_rule` reproduces it); over the standardised scores (exp of a
z-sum) such a bonus is too small to move anything, so read them as history, or rebuild them on
`rrf_rule`'s scores. The z rules (zship_rule, znote_rule, zphrasings_rule) are the current form.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memo.collection.lexical import terms as stems
from memo.collection.markdown import _WIKILINK
from memo.collection.store import unpack_text
from memo.collection.vectors import dequantize_rows
from memo.search.ranking import Ranking

# (collection folder, chunk id) -> note key; note key -> data
CHUNK_NOTE: dict[tuple[str, int], tuple[str, str]] = {}
NOTES: dict[tuple[str, str], dict[str, Any]] = {}
QVEC: dict[str, np.ndarray] = {}
CHUNK: dict[tuple[str, int], Any] = {}
ORD0: dict[tuple[str, int], bool] = {}
LEX: dict[str, Any] = {}  # folder-free per-library lexical tables, built on first use
LIB: list[Any] = []


def prepare(lib: Any) -> None:
    LIB.append(lib)
    for coll in lib.collections():
        folder = str(coll.folder)

        def read(store: Any) -> tuple[list, dict]:
            rows = store.conn.execute(
                "SELECT id, path, heading, line, ord, text FROM chunks"
            ).fetchall()
            vec = {}
            if store.has_vec:
                vec = dict(store.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall())
            return rows, vec

        (rows, vec), _ = coll.read(read)
        by_note: dict[str, list] = defaultdict(list)
        for cid, path, heading, line, ord_, text in rows:
            by_note[path].append((ord_, cid, heading, line))
            CHUNK_NOTE[(folder, cid)] = (folder, path)
            text = unpack_text(text)
            CHUNK[(folder, cid)] = (path, heading, text, vec.get(cid))
            ORD0[(folder, cid)] = ord_ == 0
        for path, chunks in by_note.items():
            chunks.sort()
            ids = [c[1] for c in chunks if c[1] in vec]
            mean = None
            if ids:
                m = dequantize_rows([bytes(vec[i]) for i in ids]).astype(np.float64)
                mean = m.mean(axis=0)
                mean /= np.linalg.norm(mean) or 1.0
            heads = [c[2] for c in chunks]
            title = _title(heads)
            NOTES[(folder, path)] = {
                "mean": mean,
                "title": title,
                "title_stems": set(stems(title + " " + path.rsplit("/", 1)[-1][:-3])),
                "head_stems": set(stems(" ".join(heads))),
                "n": len(chunks),
            }


def _title(heads: list[str]) -> str:
    firsts = [h.split(" > ")[0] for h in heads if h]
    return max(set(firsts), key=firsts.count) if firsts else ""


def note_of(r: Ranking, key: tuple[int, int]) -> tuple[str, str]:
    return CHUNK_NOTE[(str(r.scope.parts[key[0]][0].folder), key[1])]


def qvec(query: str) -> np.ndarray | None:
    if query not in QVEC:
        v, _ = LIB[0]._vectors.get(query)
        QVEC[query] = None if v is None else np.asarray(v, dtype=np.float64)
    return QVEC[query]


def _queries(r: Ranking) -> list[str]:
    return [lg.query for lg in r.phrasings] if hasattr(r.phrasings[0], "query") else []


def rrf_notes(values: dict, k: float) -> dict:
    order = sorted(values, key=lambda n: -values[n])
    return {n: 1.0 / (k + i) for i, n in enumerate(order, start=1)}


def note_cosines(r: Ranking, notes: Any) -> dict:
    """Each note's mean vector's cosine to the question, the best over its phrasings."""
    best: dict = {}
    for q in QUERIES[id(r)]:
        v = qvec(q)
        if v is None:
            continue
        for n in notes:
            m = NOTES[n]["mean"]
            if m is not None:
                best[n] = max(best.get(n, -1.0), float(m @ v))
    return best


def note_vec_rule(w: float, k: float = 10, top: int = 0) -> Any:
    def f(r: Ranking) -> dict:
        best = note_cosines(r, {note_of(r, key) for key in r.scores})
        bonus = rrf_notes(best, k)
        if top:
            keep = sorted(bonus, key=lambda n: -bonus[n])[:top]
            bonus = {n: bonus[n] for n in keep}
        return {key: s + w * bonus.get(note_of(r, key), 0.0) for key, s in r.scores.items()}

    return f


def title_rule(w: float, k: float = 10, field: str = "title_stems", scaled: bool = False) -> Any:
    """The title leg: notes ranked by the IDF-weighted share of the question's stems their
    title, aliases and file name hold (equal shares share a rank); each chunk gains
    w / (k + its note's rank), the best over phrasings; `scaled`: w scaled like the lexical
    leg (coverage², the cross-lingual factor)."""
    from memo.search.fusion import COVERAGE_POWER, CROSS_LINGUAL_FACTOR

    def f(r: Ranking) -> dict:
        notes = {note_of(r, key) for key in r.scores}
        bonus: dict = {}
        for legs in r.phrasings:
            total = sum(legs.idf)
            if not legs.terms or total <= 0:
                continue
            share = {}
            for n in notes:
                held = NOTES[n][field]
                s = sum(wt for t, wt in zip(legs.terms, legs.idf, strict=True) if t in held)
                if s > 0:
                    share[n] = s / total
            wp = w
            if scaled:
                wp *= legs.coverage**COVERAGE_POWER
                wp *= CROSS_LINGUAL_FACTOR if legs.cross_lingual else 1.0
            at = {v: i for i, v in enumerate(sorted(set(share.values()), reverse=True), start=1)}
            for n, s in share.items():
                bonus[n] = max(bonus.get(n, 0.0), wp / (k + at[s]))
        return {key: s + bonus.get(note_of(r, key), 0.0) for key, s in r.scores.items()}

    return f


def note_sum_rule(w: float, top: int = 3) -> Any:
    """Note score: the sum of its best `top` chunks' fused scores; added, weighted."""

    def f(r: Ranking) -> dict:
        per: dict = defaultdict(list)
        for key, s in r.scores.items():
            per[note_of(r, key)].append(s)
        agg = {n: sum(sorted(v, reverse=True)[:top]) for n, v in per.items()}
        bonus = rrf_notes(agg, 10)
        return {key: s + w * bonus[note_of(r, key)] for key, s in r.scores.items()}

    return f


def both(*fs: Any) -> Any:
    def f(r: Ranking) -> dict:
        base = r.scores
        out = dict(base)
        for g in fs:
            got = g(r)
            for key in out:
                out[key] += got[key] - base[key]
        return out

    return f


QUERIES: dict[int, list[str]] = {}


def _lex_tables(notitle: bool | str) -> dict[str, Any]:
    """Per chunk: term counts and length, with or without the title heading its path
    ("first": kept in the note's first chunk only)."""
    key = f"nt{notitle}"
    if key in LEX:
        return LEX[key]
    from collections import Counter

    from memo.collection.chunker import passage_text

    tf, length = {}, {}
    for ck, (_path, heading, text, _v) in CHUNK.items():
        note = CHUNK_NOTE[ck]
        if notitle and heading and not (notitle == "first" and ORD0.get(ck)):
            parts = heading.split(" > ")
            if parts[0] == NOTES[note]["title"]:
                parts = parts[1:]
            heading = " > ".join(parts)
        ts = stems(passage_text(heading, text))
        tf[ck], length[ck] = Counter(ts), len(ts)
    LEX[key] = {"tf": tf, "len": length}
    return LEX[key]


def _vec_table() -> dict[str, Any]:
    if "vec" in LEX:
        return LEX["vec"]
    keys = [ck for ck, c in CHUNK.items() if c[3] is not None]
    mat = dequantize_rows([bytes(CHUNK[ck][3]) for ck in keys]).astype(np.float64)
    means = np.array([NOTES[CHUNK_NOTE[ck]]["mean"] for ck in keys])
    LEX["vec"] = {
        "keys": keys,
        "mat": mat,
        "means": means,
        "at": {k: i for i, k in enumerate(keys)},
    }
    return LEX["vec"]


def relexed(r: Ranking, legs: Any, notitle: bool) -> Any:
    """The lexical leg recomputed over every chunk of the scope's collections."""
    from dataclasses import replace

    from memo.search.bm25 import K1, B

    t = _lex_tables(notitle)
    folders = [str(c.folder) for c, _ in r.scope.parts]
    at = {f: i for i, f in enumerate(folders)}
    keys = [ck for ck in t["tf"] if ck[0] in at]
    avg = sum(t["len"][k] for k in keys) / max(1, len(keys))
    idf = dict(zip(legs.terms, legs.idf, strict=True))
    scored = []
    for ck in keys:
        c = t["tf"][ck]
        s = 0.0
        for term in legs.terms:
            f = c.get(term)
            if f:
                s += idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * t["len"][ck] / avg))
        if s > 0:
            scored.append(((at[ck[0]], ck[1]), s))
    scored.sort(key=lambda x: -x[1])
    return replace(legs, lex=scored[:100])


def _scope_rows(r: Ranking, t: dict[str, Any]) -> tuple[dict[str, int], list[int]]:
    """The scope's collection folders -> their position, and the rows of _vec_table that
    belong to the scope."""
    at = {str(c.folder): i for i, (c, _) in enumerate(r.scope.parts)}
    return at, [i for i, ck in enumerate(t["keys"]) if ck[0] in at]


def _leg(t: dict[str, Any], at: dict[str, int], idx: list[int], sims: np.ndarray) -> list:
    """A vector leg from scores of the rows `idx` of _vec_table: the best 100, as
    ((collection position, chunk id), score)."""
    order = np.argsort(-sims)[:100]
    keys = [t["keys"][idx[j]] for j in order]
    return [((at[k[0]], k[1]), float(sims[j])) for k, j in zip(keys, order, strict=True)]


def _fused_with(r: Ranking, at: dict[str, int], idx: list[int], sims: Any) -> dict:
    """r's phrasings fused again, each one's vector leg rebuilt from `sims(legs, query
    vector)`: scores of the rows `idx` of _vec_table (None: that phrasing's legs as they are)."""
    from dataclasses import replace

    from memo.search.fusion import fuse, fuse_phrasings

    t = _vec_table()
    every = []
    for legs, q in zip(r.phrasings, QUERIES[id(r)], strict=True):
        v = qvec(q)
        got = None if v is None else sims(legs, v)
        every.append(legs if got is None else replace(legs, vec=_leg(t, at, idx, got)))
    return fuse(every[0], "hybrid") if len(every) == 1 else fuse_phrasings(every, "hybrid")


def revec(r: Ranking, legs: Any, q: str, beta: float, short: int) -> Any:
    """The vector leg over chunk vectors mixed with their note's mean (beta), for chunks of
    at most `short` words (0: all)."""
    from dataclasses import replace

    v = qvec(q)
    if v is None:
        return legs
    t = _vec_table()
    at, idx = _scope_rows(r, t)
    mat, means = t["mat"][idx], t["means"][idx]
    if short:
        words = np.array([len(CHUNK[t["keys"][i]][2].split()) for i in idx])
        b = np.where(words <= short, beta, 0.0)[:, None]
    else:
        b = beta
    mixed = mat + b * means
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    return replace(legs, vec=_leg(t, at, idx, mixed @ v))


def legs_rule(
    relex: bool = False,
    notitle: bool | str = False,
    beta: float = 0.0,
    short: int = 0,
    title_w: float = 0.0,
    title_k: float = 10,
    field: str = "title_stems",
) -> Any:
    from memo.search.fusion import fuse, fuse_phrasings

    def f(r: Ranking) -> dict:
        every = []
        for legs, q in zip(r.phrasings, QUERIES[id(r)], strict=True):
            if (relex or notitle) and legs.terms:
                legs = relexed(r, legs, notitle)
            if beta:
                legs = revec(r, legs, q, beta, short)
            every.append(legs)
        scores = fuse(every[0], "hybrid") if len(every) == 1 else fuse_phrasings(every, "hybrid")
        if title_w:
            tmp = Ranking(r.reader, every[0], scores, phrasings=every, _rows=r._rows)
            scores = title_rule(title_w, title_k, field)(tmp)
        # rows for new candidates are read lazily by Ranking.hits
        return scores

    return f


def _lexwin_table() -> dict[str, Any]:
    """Per chunk: each sentence window's term counts and length (collection/windows.py's
    windows, each read with the chunk's heading path, as the chunk's lexical text is); a
    chunk without windows is its own one window."""
    if "win" in LEX:
        return LEX["win"]
    from collections import Counter

    from memo.collection import windows

    wins: dict[tuple[str, int], list[tuple[Counter, int]]] = {}
    for ck, (_path, heading, text, _v) in CHUNK.items():
        head = stems(heading)
        parts = [text[a:b] for a, b in windows.spans(text)] or [text]
        wins[ck] = [(Counter(head + stems(w)), len(head) + len(stems(w))) for w in parts]
    LEX["win"] = wins
    return wins


def lexwin_rule(mode: str = "max", c: float = 1.0) -> Any:
    """The lexical leg with proximity: a chunk's words counted in its best three-sentence
    window (BM25 over the scope's windows, the question's IDF as the leg has it). `max`: the
    window's score alone; `sum`: the chunk's own BM25 plus c times its best window's."""
    from dataclasses import replace

    from memo.search.bm25 import K1, B
    from memo.search.fusion import fuse, fuse_phrasings

    def bm25(counts: Any, n: int, avg: float, terms: list[str], idf: dict) -> float:
        s = 0.0
        for term in terms:
            f = counts.get(term)
            if f:
                s += idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * n / avg))
        return s

    def f(r: Ranking) -> dict:
        wins, whole = _lexwin_table(), _lex_tables(False)
        at = {str(c.folder): i for i, (c, _) in enumerate(r.scope.parts)}
        keys = [ck for ck in wins if ck[0] in at]
        wavg = sum(n for ck in keys for _, n in wins[ck]) / max(1, sum(len(wins[k]) for k in keys))
        cavg = sum(whole["len"][k] for k in keys) / max(1, len(keys))
        every = []
        for legs in r.phrasings:
            if not legs.terms:
                every.append(legs)
                continue
            idf = dict(zip(legs.terms, legs.idf, strict=True))
            scored = []
            for ck in keys:
                best = max(bm25(cnt, n, wavg, legs.terms, idf) for cnt, n in wins[ck])
                if mode == "sum":
                    own = bm25(whole["tf"][ck], whole["len"][ck], cavg, legs.terms, idf)
                    best = own + c * best
                if best > 0:
                    scored.append(((at[ck[0]], ck[1]), best))
            scored.sort(key=lambda x: -x[1])
            every.append(replace(legs, lex=scored[:100]))
        return fuse(every[0], "hybrid") if len(every) == 1 else fuse_phrasings(every, "hybrid")

    return f


RULES: dict[str, Any] = {
    "lexwin max": lexwin_rule("max"),
    "lexwin sum": lexwin_rule("sum", 1.0),
    "lexwin sum0.5": lexwin_rule("sum", 0.5),
    "refuse (same)": legs_rule(),
    "relex (same)": legs_rule(relex=True),
    "notitle": legs_rule(notitle=True),
    "notitle+title0.3": legs_rule(notitle=True, title_w=0.3),
    "notitle+title0.5": legs_rule(notitle=True, title_w=0.5),
    "notitle+title0.2": legs_rule(notitle=True, title_w=0.2),
    "first": legs_rule(notitle="first"),
    "first+title0.2": legs_rule(notitle="first", title_w=0.2),
    "first+title0.3": legs_rule(notitle="first", title_w=0.3),
    "title0.2": legs_rule(title_w=0.2),
    "notitle+title0.3k5": legs_rule(notitle=True, title_w=0.3, title_k=5),
    "notitle+title0.3k20": legs_rule(notitle=True, title_w=0.3, title_k=20),
    "notitle+heads0.3": legs_rule(notitle=True, title_w=0.3, field="head_stems"),
    "title0.3": legs_rule(title_w=0.3),
    "mix0.3": legs_rule(beta=0.3),
    "mix0.5": legs_rule(beta=0.5),
    "mix1 short30": legs_rule(beta=1.0, short=30),
    "mix0.5 short30": legs_rule(beta=0.5, short=30),
    "nvec w0.5": note_vec_rule(0.5),
    "nvec w1": note_vec_rule(1.0),
    "nvec w0.5 k30": note_vec_rule(0.5, 30),
    "title w0.5": title_rule(0.5),
    "title w1": title_rule(1.0),
    "heads w0.5": title_rule(0.5, field="head_stems"),
    "nsum w0.5": note_sum_rule(0.5),
    "nsum w1": note_sum_rule(1.0),
    "nvec0.5+title0.5": both(note_vec_rule(0.5), title_rule(0.5)),
}


def consts(inner: Any = None, **values: float) -> Any:
    """The fusion refused with some of search/fusion.py's constants changed."""
    import memo.search.fusion as fusion

    def f(r: Ranking) -> dict:
        old = {k: getattr(fusion, k) for k in values}
        for k, v in values.items():
            setattr(fusion, k, v)
        try:
            if inner is not None:
                return inner(r)
            every = r.phrasings
            if len(every) == 1:
                return fusion.fuse(every[0], "hybrid")
            return fusion.fuse_phrasings(every, "hybrid")
        finally:
            for k, v in old.items():
                setattr(fusion, k, v)

    return f


def lexshare_rule(power: float = 1.0) -> Any:
    """The lexical leg weighed by how much of the question its own best chunk holds (the
    IDF-weighted share of the question's stems in it, to `power`): BM25's first hit that holds
    one word of five is the paraphrase case, where the words are not the evidence."""
    import memo.search.fusion as fusion

    plain = fusion.lex_weight

    def f(r: Ranking) -> dict:
        tf = _lex_tables(False)["tf"]
        folders = [str(c.folder) for c, _ in r.scope.parts]

        def weight(legs: Any) -> float:
            w = plain(legs)
            total = sum(legs.idf)
            if not legs.lex or total <= 0:
                return w
            ci, cid = legs.lex[0][0]
            held = tf.get((folders[ci], cid), {})
            share = sum(x for t, x in zip(legs.terms, legs.idf, strict=True) if t in held)
            return w * (share / total) ** power

        fusion.lex_weight = weight
        try:
            every = r.phrasings
            if len(every) == 1:
                return fusion.fuse(every[0], "hybrid")
            return fusion.fuse_phrasings(every, "hybrid")
        finally:
            fusion.lex_weight = plain

    return f


RULES.update(
    {
        "lexshare1": lexshare_rule(1.0),
        "lexshare2": lexshare_rule(2.0),
        "lexshare0.5": lexshare_rule(0.5),
        "lexw1.0": consts(LEX_WEIGHT=1.0),
        "lexw1.2": consts(LEX_WEIGHT=1.2),
        "lexw0.6": consts(LEX_WEIGHT=0.6),
        "lexw0.4": consts(LEX_WEIGHT=0.4),
        "xl0.2": consts(CROSS_LINGUAL_FACTOR=0.2),
        "xl0.1": consts(CROSS_LINGUAL_FACTOR=0.1),
    }
)


def rrf_rule(lex_w: float = 0.8, margin: float = 5.0, k: int = 10) -> Any:
    """The fusion before standardised scores (search/fusion.py until d6f07b7), the baseline the
    z rules were measured against: weighted RRF with k 10, the vector leg 1, the lexical leg
    lex_w · coverage² (· 0.3 across languages) · (1 + margin · BM25's relative margin of its
    first over its second); a pending chunk's lexical rank stands in for its vector rank."""
    from memo.search.fusion import COVERAGE_POWER, CROSS_LINGUAL_FACTOR, rrf

    def one(legs: Any) -> dict:
        if not legs.vec:
            return rrf([(legs.lex, 1.0)], k=k)
        w = lex_w * legs.coverage**COVERAGE_POWER
        stand_in = legs.coverage**COVERAGE_POWER
        if legs.cross_lingual:
            w, stand_in = w * CROSS_LINGUAL_FACTOR, stand_in * CROSS_LINGUAL_FACTOR
        if len(legs.lex) >= 2:
            top, second = legs.lex[0][1], legs.lex[1][1]
            w *= 1 + margin * max(top - second, 0.0) / max(top, 1e-9)
        scores = rrf([(legs.vec, 1.0), (legs.lex, w)], k=k)
        for key, s in rrf([(legs.lex, stand_in)], k=k).items():
            if key in legs.pending:
                scores[key] += s
        return scores

    def f(r: Ranking) -> dict:
        out: dict = {}
        for legs in r.phrasings:
            for key, s in one(legs).items():
                out[key] = max(out.get(key, 0.0), s)
        return out

    return f


RULES.update(
    {
        "rrf": rrf_rule(),  # the rule before: `memo` until d6f07b7
        "rrf margin0": rrf_rule(margin=0.0),
        "rrf margin2": rrf_rule(margin=2.0),
    }
)


def _parents() -> dict[tuple[str, int], tuple[str, int]]:
    """Each chunk's parent: the first chunk of the nearest section above it in its note."""
    if "parents" in LEX:
        return LEX["parents"]
    first: dict[tuple[tuple[str, str], str], tuple[str, int]] = {}
    order = sorted(CHUNK, key=lambda ck: (CHUNK_NOTE[ck], CHUNK[ck][1] == "", ck[1]))
    for ck in order:
        first.setdefault((CHUNK_NOTE[ck], CHUNK[ck][1]), ck)
    out = {}
    for ck in CHUNK:
        parts = CHUNK[ck][1].split(" > ")
        for n in range(len(parts) - 1, 0, -1):
            p = first.get((CHUNK_NOTE[ck], " > ".join(parts[:n])))
            if p and p != ck:
                out[ck] = p
                break
    LEX["parents"] = out
    return out


def parent_rule(beta: float, short: int) -> Any:
    """The vector leg with each short chunk's vector mixed with its parent section's first
    chunk (a stand-in for embedding a short section with its parent's lead)."""

    def f(r: Ranking) -> dict:
        t = _vec_table()
        par = _parents()
        if "pmat" not in LEX:
            mat = t["mat"].copy()
            for i, ck in enumerate(t["keys"]):
                p = par.get(ck)
                if p in t["at"] and len(CHUNK[ck][2].split()) <= short:
                    mat[i] = mat[i] + beta * t["mat"][t["at"][p]]
            mat /= np.linalg.norm(mat, axis=1, keepdims=True)
            LEX["pmat"] = mat
        at, idx = _scope_rows(r, t)
        return _fused_with(r, at, idx, lambda legs, v: LEX["pmat"][idx] @ v)

    return f


RULES.update(
    {
        "parent0.5 short30": parent_rule(0.5, 30),
        "title0.2 scaled": title_rule(0.2, scaled=True),
        "title0.3 scaled": title_rule(0.3, scaled=True),
    }
)


def hub_rule(
    gamma: float, k: int = 10, per: str = "coll", centered: bool = False, cross: bool = False
) -> Any:
    """CSLS (docs/design.md, "Hubness"): the vector leg over every chunk of the scope by
    cos(q, c) - gamma * r(c), r(c) the mean cosine of c to its k nearest chunks of the same
    collection (`per` "coll") or library ("lib"); `centered`: each collection's mean r taken
    off; `cross`: only for a phrasing whose answer is in another alphabet (gamma 0 elsewhere)."""

    def r_of(mat: np.ndarray) -> np.ndarray:
        s = mat @ mat.T
        np.fill_diagonal(s, -1.0)
        kk = min(k, max(1, len(mat) - 1))
        return (-np.sort(-s, axis=1)[:, :kk]).mean(axis=1)

    def f(r: Ranking) -> dict:
        t = _vec_table()
        at, idx = _scope_rows(r, t)
        mat = t["mat"][idx] / np.linalg.norm(t["mat"][idx], axis=1, keepdims=True)
        key = f"hub{k}{per}{centered}{min(at)}"
        if key not in LEX:
            coll = np.array([at[t["keys"][i][0]] for i in idx])
            hub = np.zeros(len(idx)) if per == "coll" else r_of(mat)
            for c in set(coll.tolist()) if per == "coll" else ():
                m = coll == c
                hub[m] = r_of(mat[m])
                hub[m] -= hub[m].mean() if centered else 0.0
            LEX[key] = hub
        hub = LEX[key]

        def sims(legs: Any, v: np.ndarray) -> np.ndarray | None:
            if not legs.vec:
                return None
            g = 0.0 if cross and not legs.cross_lingual else gamma
            return mat @ v - g * hub

        return _fused_with(r, at, idx, sims)

    return f


RULES.update(
    {
        "raw": hub_rule(0.0),  # the same leg without the correction: the baseline
        "hub0.5 k10 coll": hub_rule(0.5),
        "hub0.5 k5 coll": hub_rule(0.5, 5),
        "hub0.5 k10 lib": hub_rule(0.5, per="lib"),
        "hub0.5 k10 coll centered": hub_rule(0.5, centered=True),
        "hub cross uncentered": hub_rule(0.5, cross=True),
        "hub cross centered": hub_rule(0.5, centered=True, cross=True),
    }
)


# --- sentence windows (docs/design.md "Sentence windows"): a chunk's vector score is the best
# of its own and its windows'; sizes and strides compared, `shipped` is collection/windows.py ---
_SENT_END = __import__("re").compile(r"(?<=[.!?…])\s+|\n+")
WINVEC: dict[str, np.ndarray] = {}


def _windows(heading: str, text: str, size: int, stride: int = 1) -> list[str]:
    from memo.collection.chunker import passage_text

    sents = [s.strip() for s in _SENT_END.split(text) if s and s.strip()]
    sents = [s for s in sents if len(s.split()) >= 2 or len(sents) == 1]
    if len(sents) <= size:
        return []
    starts = list(range(0, len(sents) - size + 1, stride))
    if starts[-1] != len(sents) - size:
        starts.append(len(sents) - size)
    return [passage_text(heading, " ".join(sents[i : i + size])) for i in starts]


def _embed_windows(texts: list[str]) -> None:
    todo = [t for t in dict.fromkeys(texts) if t not in WINVEC]
    if todo:
        emb = LIB[0]._vectors.embedder if hasattr(LIB[0]._vectors, "embedder") else LIB[0].embedder
        for t, v in zip(todo, emb.embed_passages(todo), strict=True):
            WINVEC[t] = np.asarray(v, dtype=np.float64)


def _shipped(heading: str, text: str) -> list[str]:
    """The windows memo's index stores (collection/windows.py)."""
    from memo.collection.windows import windows

    return windows(heading, text)


def _win_table(size: int, stride: int = 1, head: str = "path") -> dict[str, Any]:
    """Every chunk's sentence windows (int8 round trip, as an index would store them):
    the window matrix and, per window, its chunk's row in _vec_table. `head`: what heads each
    window: its chunk's heading path (`path`, as the index has it), the path without the
    note's title (`section`: the chunk's own headings), or nothing (`none`)."""
    key = f"win{size},{stride},{head}"
    if key in LEX:
        return LEX[key]
    from memo.collection.vectors import dequantize, quantize

    t = _vec_table()
    owner, texts = [], []
    for i, ck in enumerate(t["keys"]):
        _path, heading, text, _v = CHUNK[ck]
        if head != "path":
            heading = " > ".join(heading.split(" > ")[1:]) if head == "section" else ""
        for w in _windows(heading, text, size, stride) if size else _shipped(heading, text):
            owner.append(i)
            texts.append(w)
    _embed_windows(texts)
    dim = t["mat"].shape[1]
    vecs = np.array([WINVEC[w] for w in texts]) if texts else np.zeros((0, dim))
    mat = dequantize(quantize(vecs)).astype(np.float64)
    LEX[key] = {"owner": np.array(owner, dtype=np.int64), "mat": mat}
    shown = f"{size}, stride {stride}" if size else "collection/windows.py"
    print(f"# {len(texts)} windows ({shown}) for {len(t['keys'])} chunks", file=sys.stderr)
    return LEX[key]


def _chunk_best(
    t: dict[str, Any], w: dict[str, Any], v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of _vec_table: its chunk's own cosine to v, the best of it and its windows'
    (w: a window table, `owner` its chunk's row), and every window's cosine."""
    base = t["mat"] @ v
    wins = w["mat"] @ v
    best = base.copy()
    if len(w["owner"]):
        np.maximum.at(best, w["owner"], wins)
    return base, best, wins


def _best_of_windows(score: Any, size: int = 0, stride: int = 1, head: str = "path") -> Any:
    """The vector leg over every chunk of the scope by `score(base, best, idx)`: base each
    chunk's own cosine, best the best of it and its windows' (_win_table(size, stride)), idx
    the scope's rows of _vec_table."""

    def f(r: Ranking) -> dict:
        t = _vec_table()
        w = _win_table(size, stride, head)
        at, idx = _scope_rows(r, t)

        def sims(legs: Any, v: np.ndarray) -> np.ndarray | None:
            if not legs.vec:
                return None
            base, best, _ = _chunk_best(t, w, v)
            return score(base, best, idx)[idx]

        return _fused_with(r, at, idx, sims)

    return f


def sentall_rule(size: int = 2, mode: str = "max", stride: int = 1) -> Any:
    """A chunk scoring the best of its own vector and its windows' (mode max) or their mean
    (mode mean)."""
    if mode == "max":
        return _best_of_windows(lambda base, best, idx: best, size, stride)
    return _best_of_windows(lambda base, best, idx: 0.5 * (base + best), size, stride)


RULES.update(
    {
        "all1": sentall_rule(1),
        "all2": sentall_rule(2),
        "all3": sentall_rule(3),
        "all2 mean": sentall_rule(2, "mean"),
        "all2 s2": sentall_rule(2, stride=2),
        "shipped": sentall_rule(0),
        "all3 s2": sentall_rule(3, stride=2),
        "all3 s3": sentall_rule(3, stride=3),
        "all4 s2": sentall_rule(4, stride=2),
    }
)


def _expected_max(n: int, draws: int = 20000) -> float:
    """E[max of n standard normal draws] (0 for one), by simulation with a fixed seed."""
    rng = np.random.default_rng(0)
    return float(rng.standard_normal((draws, n)).max(axis=1).mean()) if n > 1 else 0.0


def lottery_rule(c: float = 1.0) -> Any:
    """The shipped windows with each chunk's best taken down by what chance alone gives the
    best of its 1 + m vectors: c * sigma * E[max of 1 + m normals], sigma the spread of the
    scope's chunk cosines for this question."""
    emax = [_expected_max(n) for n in range(1, 300)]
    pens: list[np.ndarray] = []

    def score(base: np.ndarray, best: np.ndarray, idx: list[int]) -> np.ndarray:
        if not pens:  # each chunk's own count of windows, once
            counts = np.bincount(_win_table(0)["owner"], minlength=len(_vec_table()["keys"]))
            pens.append(np.array([emax[min(c_, 298)] for c_ in counts + 1]))
        return best - c * float(np.std(base[idx])) * pens[0]

    return _best_of_windows(score)


RULES.update({"lottery1": lottery_rule(1.0), "lottery0.5": lottery_rule(0.5)})


# --- pseudo-relevance feedback (Rocchio on the vector leg): the question's vector moved toward
# the vectors of the first hits, every chunk and window scored again with it ---


def _stored_windows() -> dict[str, Any]:
    """The windows' vectors as the indexes store them (windows_vec, rowid chunk id × 256 + k):
    the window matrix and, per window, its chunk's row in _vec_table."""
    if "stored_win" in LEX:
        return LEX["stored_win"]
    t = _vec_table()
    owner, codes = [], []
    for lib in LIB:
        for coll in lib.collections():
            folder = str(coll.folder)

            def read(store: Any) -> list:
                from memo.collection.store import has_windows

                if not has_windows(store.conn):
                    return []
                return store.conn.execute("SELECT rowid, embedding FROM windows_vec").fetchall()

            rows, _ = coll.read(read)
            for rowid, code in rows:
                i = t["at"].get((folder, rowid // 256))
                if i is not None:
                    owner.append(i)
                    codes.append(bytes(code))
    dim = t["mat"].shape[1]
    mat = dequantize_rows(codes).astype(np.float64) if codes else np.zeros((0, dim))
    LEX["stored_win"] = {"owner": np.array(owner, dtype=np.int64), "mat": mat}
    print(f"# {len(codes)} stored windows for {len(t['keys'])} chunks", file=sys.stderr)
    return LEX["stored_win"]


def prf_rule(alpha: float, m: int = 3, source: str = "vec", part: str = "best") -> Any:
    """Rocchio: q' = q + alpha * mean of the first m hits' vectors (normalised), where the
    first hits are the vector leg's own (`vec`) or the fused ranking's (`fused`), and a hit's
    vector is its chunk's (`chunk`) or its window nearest q (`best`); then the vector leg over
    every chunk of the scope again (the best of each chunk's own cosine and its windows')."""

    def f(r: Ranking) -> dict:
        t = _vec_table()
        w = _stored_windows()
        at, idx = _scope_rows(r, t)
        folders = [str(c.folder) for c, _ in r.scope.parts]
        fused_top = r.ranked[:m]

        def sims(legs: Any, v: np.ndarray) -> np.ndarray | None:
            if not legs.vec:
                return None
            base, best, wins = _chunk_best(t, w, v)
            tops = legs.vec_ranked[:m] if source == "vec" else fused_top
            rows = [t["at"].get((folders[ci], cid)) for ci, cid in tops]
            vecs = []
            for i in rows:
                if i is None:
                    continue
                if part == "chunk":
                    vecs.append(t["mat"][i])
                else:
                    mine = np.flatnonzero(w["owner"] == i)
                    cands = [(base[i], t["mat"][i])] + [(wins[j], w["mat"][j]) for j in mine]
                    vecs.append(max(cands, key=lambda x: x[0])[1])
            if not vecs:
                return best[idx]
            q2 = v + alpha * np.mean(vecs, axis=0)
            q2 /= np.linalg.norm(q2)
            return _chunk_best(t, w, q2)[1][idx]

        return _fused_with(r, at, idx, sims)

    return f


RULES.update(
    {
        "prf0": prf_rule(0.0),  # the leg recomputed, nothing moved: must equal memo
        "prf.3": prf_rule(0.3),
        "prf.5": prf_rule(0.5),
        "prf1": prf_rule(1.0),
        "prf.5 m1": prf_rule(0.5, 1),
        "prf.5 m5": prf_rule(0.5, 5),
        "prf.5 fused": prf_rule(0.5, 3, "fused"),
        "prf.3 fused": prf_rule(0.3, 3, "fused"),
        "prf.5 chunk": prf_rule(0.5, 3, "vec", "chunk"),
    }
)


# --- the heading path's own vector: "Title (aliases) > Section > Sub" embedded alone, the
# place a note says what a section is for, undiluted by the section's text ---


def _heading_table() -> dict[str, Any]:
    """Per row of _vec_table, the vector of its chunk's heading path alone (int8 round trip)."""
    if "heads" in LEX:
        return LEX["heads"]
    from memo.collection.vectors import dequantize, quantize

    t = _vec_table()
    heads = [CHUNK[ck][1] or CHUNK[ck][0].rsplit("/", 1)[-1][:-3] for ck in t["keys"]]
    _embed_windows(heads)
    mat = dequantize(quantize(np.array([WINVEC[h] for h in heads]))).astype(np.float64)
    LEX["heads"] = {"mat": mat}
    print(f"# {len(set(heads))} heading paths for {len(heads)} chunks", file=sys.stderr)
    return LEX["heads"]


def heading_rule(how: str = "max", w: float = 0.5, k: float = 10) -> Any:
    """`max`: a chunk scores the best of its own, its windows' and its heading path's cosine;
    `leg`: the heading paths' cosines ranked as a third RRF leg of weight w (chunks under one
    heading path share a rank); `add`: best + w * heading cosine."""
    from dataclasses import replace

    from memo.search.fusion import fuse, rrf

    def f(r: Ranking) -> dict:
        t = _vec_table()
        w_ = _stored_windows()
        h = _heading_table()
        at, idx = _scope_rows(r, t)
        every, extra = [], []
        for legs, q in zip(r.phrasings, QUERIES[id(r)], strict=True):
            v = qvec(q)
            if v is None or not legs.vec:
                every.append(legs)
                extra.append({})
                continue
            best = _chunk_best(t, w_, v)[1]
            hs = h["mat"] @ v
            if how == "max":
                got = np.maximum(best, hs)
            elif how == "add":
                got = best + w * hs
            else:
                got = best
            every.append(replace(legs, vec=_leg(t, at, idx, got[idx])))
            if how == "leg":
                extra.append(rrf([(_leg(t, at, idx, np.round(hs[idx], 6)), w)], k=int(k)))
            else:
                extra.append({})
        scores_each = [fuse(lg, "hybrid") for lg in every]
        out: dict = {}
        for s, e in zip(scores_each, extra, strict=True):
            for key in set(s) | set(e):
                val = s.get(key, 0.0) + e.get(key, 0.0)
                if val > out.get(key, 0.0):
                    out[key] = val
        return out

    return f


RULES.update(
    {
        "hp0": heading_rule("none"),  # recomputed, nothing added
        "hp max": heading_rule("max"),
        "hp leg.3": heading_rule("leg", 0.3),
        "hp leg.5": heading_rule("leg", 0.5),
        "hp leg1": heading_rule("leg", 1.0),
        "hp add.3": heading_rule("add", 0.3),
        "hp add.5": heading_rule("add", 0.5),
    }
)


# --- score fusion (CombSUM of z-scores) instead of RRF: each leg's scores standardised over its
# own 100 candidates, so how far the first stands out counts, not only the order ---


def zfuse_rule(
    scale: float = 1.0, floor: str = "last", lexw: str = "memo", shape: str = "exp"
) -> Any:
    """Per phrasing: z(vec) + w * z(lex), w = scale * memo's lexical weight (`lexw` "memo"; when
    measured, before d6f07b7's successor: coverage², the cross-lingual factor, the margin boost
    of the RRF rule; "xl": scale * coverage² and the cross-lingual factor; "plain": scale *
    coverage² only); a chunk
    missing from a leg gets that leg's last z (`last`) or 0 below it (`min`: z of the last - 1).
    The best over phrasings, as exp(s) (`shape` exp: the diversity cap's ratio 0.9 is a
    difference of 0.105 in s) or s + 100 (`shift`: every ratio near 1)."""
    from memo.search.fusion import COVERAGE_POWER, CROSS_LINGUAL_FACTOR, lex_weight

    def z(leg: list) -> tuple[dict, float]:
        if not leg:
            return {}, 0.0
        vals = np.array([s for _, s in leg], dtype=np.float64)
        sd = float(vals.std()) or 1.0
        zs = (vals - vals.mean()) / sd
        last = float(zs[-1]) if floor == "last" else float(zs[-1]) - 1.0
        return {k: float(x) for (k, _), x in zip(leg, zs, strict=True)}, last

    def f(r: Ranking) -> dict:
        out: dict = {}
        for legs in r.phrasings:
            zv, lv = z(legs.vec)
            zl, ll = z(legs.lex)
            w = scale * legs.coverage**COVERAGE_POWER
            if lexw == "memo":
                w = scale * lex_weight(legs)
            elif lexw == "xl" and legs.cross_lingual:
                w *= CROSS_LINGUAL_FACTOR
            for key in set(zv) | set(zl):
                s = zv.get(key, lv) + w * zl.get(key, ll)
                s = float(np.exp(s)) if shape == "exp" else s + 100.0
                if s > out.get(key, 0.0):
                    out[key] = s
        return out

    return f


RULES.update(
    {
        "z1": zfuse_rule(1.0),
        "z1 shift": zfuse_rule(1.0, shape="shift"),
        "z1 xl": zfuse_rule(1.0, lexw="xl"),
        "z.8 xl": zfuse_rule(0.8, lexw="xl"),
        "z.8 plain": zfuse_rule(0.8, lexw="plain"),
        "z.5": zfuse_rule(0.5),
        "z1.5": zfuse_rule(1.5),
        "z1 min": zfuse_rule(1.0, "min"),
        "z1 plain": zfuse_rule(1.0, lexw="plain"),
        "z.7 plain": zfuse_rule(0.7, lexw="plain"),
    }
)


def zship_rule(
    lex_w: float = 1.0, xl: bool = True, lex_floor: str = "zero", clip: bool = False
) -> Any:
    """The form that would ship: z(vec) over the vector leg (a chunk below it: its last z),
    z(lex) over the lexical leg with a BM25 of 0 among its values (a chunk outside it: z(0),
    `lex_floor` zero; or its last z: `last`), s = z(vec) + lex_w · coverage² (· 0.3 across
    languages) · z(lex), the best of the phrasings' exp(s)."""
    from memo.search.fusion import COVERAGE_POWER, CROSS_LINGUAL_FACTOR

    def std(values: list[float]) -> tuple[float, float]:
        a = np.array(values, dtype=np.float64)
        return float(a.mean()), float(a.std())

    def f(r: Ranking) -> dict:
        out: dict = {}
        for legs in r.phrasings:
            if not legs.vec:
                continue
            vm, vs = std([s for _, s in legs.vec])
            vs = vs or 1.0
            zv = {k: (s - vm) / vs for k, s in legs.vec}
            vlast = (legs.vec[-1][1] - vm) / vs
            pad = {"zero": 1, "last": 0, "pad": max(1, 100 - len(legs.lex))}[lex_floor]
            lvals = [s for _, s in legs.lex] + [0.0] * pad
            zl: dict = {}
            lfloor = 0.0
            if legs.lex:
                lm, ls = std(lvals)
                ls = ls or 1.0
                zl = {k: (s - lm) / ls for k, s in legs.lex}
                if clip and zv:  # no leg stands further out than the other's best
                    top = max(zv.values())
                    zl = {k: min(x, top) for k, x in zl.items()}
                lfloor = (lvals[-1] - lm) / ls
            w = lex_w * legs.coverage**COVERAGE_POWER
            if xl and legs.cross_lingual:
                w *= CROSS_LINGUAL_FACTOR
            for key in set(zv) | set(zl):
                s = zv.get(key, vlast) + w * zl.get(key, lfloor)
                e = float(np.exp(s))
                if e > out.get(key, 0.0):
                    out[key] = e
        return out or r.scores

    return f


RULES.update(
    {
        "zs": zship_rule(),
        "zs last": zship_rule(lex_floor="last"),
        "zs .8": zship_rule(0.8),
        "zs noxl": zship_rule(xl=False),
        "zs pad": zship_rule(lex_floor="pad"),
        "zs pad clip": zship_rule(lex_floor="pad", clip=True),
    }
)


def zphrasings_rule(how: str = "sum") -> Any:
    """Several phrasings under the standardised fusion: each phrasing's z-sum (the log of its
    fused score) summed (`sum`) or averaged (`mean`) over the phrasings that hold the chunk,
    instead of the best of them."""
    import math

    from memo.search.fusion import fuse

    def f(r: Ranking) -> dict:
        if len(r.phrasings) == 1:
            return r.scores
        every = [fuse(legs, "hybrid") for legs in r.phrasings]
        keys = set().union(*every)
        out = {}
        for key in keys:
            logs = [math.log(s[key]) for s in every if key in s]
            total = sum(logs) if how == "sum" else sum(logs) / len(logs)
            out[key] = math.exp(total)
        return out

    return f


RULES.update({"zph sum": zphrasings_rule("sum"), "zph mean": zphrasings_rule("mean")})


# --- note-level evidence as a third standardised leg (after the fusion became z-scores): each
# candidate note's evidence standardised over the candidate notes, added to every chunk of the
# note's log-score with weight w ---


def znote_rule(what: str, w: float) -> Any:
    """`vec`: the note's mean vector's cosine to the question (the best phrasing); `title`:
    the IDF-weighted share of the question's stems its title, aliases and file name hold
    (× coverage², × 0.3 across languages, as the lexical leg); `best`: the note's second-best
    chunk's fused z-sum (a note with two good sections)."""
    import math

    from memo.search.fusion import COVERAGE_POWER, CROSS_LINGUAL_FACTOR, standardised

    def f(r: Ranking) -> dict:
        notes = sorted({note_of(r, key) for key in r.scores})
        ev: dict = {}
        if what == "vec":
            ev = note_cosines(r, notes)
        elif what == "title":
            for legs in r.phrasings:
                total = sum(legs.idf)
                if not legs.terms or total <= 0:
                    continue
                scale = legs.coverage**COVERAGE_POWER
                scale *= CROSS_LINGUAL_FACTOR if legs.cross_lingual else 1.0
                for n in notes:
                    held = NOTES[n]["title_stems"]
                    s = sum(x for t, x in zip(legs.terms, legs.idf, strict=True) if t in held)
                    ev[n] = max(ev.get(n, 0.0), scale * s / total)
        else:
            per: dict = defaultdict(list)
            for key, s in r.scores.items():
                per[note_of(r, key)].append(math.log(s))
            ev = {n: (sorted(v, reverse=True) + [min(v)])[1] for n, v in per.items()}
        if not ev:
            return r.scores
        order = sorted(ev)
        z, floor = standardised([ev[n] for n in order])
        zn = dict(zip(order, z, strict=True))
        return {
            key: s * math.exp(w * zn.get(note_of(r, key), floor)) for key, s in r.scores.items()
        }

    return f


RULES.update(
    {
        "zn vec.25": znote_rule("vec", 0.25),
        "zn vec.5": znote_rule("vec", 0.5),
        "zn title.25": znote_rule("title", 0.25),
        "zn title.5": znote_rule("title", 0.5),
        "zn best.25": znote_rule("best", 0.25),
        "zn best.5": znote_rule("best", 0.5),
    }
)


# --- the note witness as shipped (search/fusion.py with_notes), rebuilt on the rule before it
# (`zs pad`) so its variants compare on the same candidates ---


def znote_on(w: float, xl: bool = False) -> Any:
    """`zs pad`, then each chunk × exp(w · its note's z) (the note's mean-vector cosine, the
    best phrasing, standardised over the candidates' notes; a note without a vector: z 0);
    `xl`: w × the cross-lingual factor when the first phrasing is across languages."""
    from memo.search.fusion import CROSS_LINGUAL_FACTOR, with_notes

    base = zship_rule(lex_floor="pad")

    def f(r: Ranking) -> dict:
        scores = base(r)
        of = {key: note_of(r, key) for key in scores}
        wt = w * (CROSS_LINGUAL_FACTOR if xl and r.phrasings[0].cross_lingual else 1.0)
        return with_notes(scores, of, note_cosines(r, sorted(set(of.values()))), wt)

    return f


RULES.update(
    {
        "zon.25": znote_on(0.25),
        "zon.15": znote_on(0.15),
        "zon.25 xl": znote_on(0.25, xl=True),
    }
)


def _lead(text: str, words: int) -> str:
    """A section's lead: its first paragraph, cut to `words` words."""
    first = text.strip().split("\n\n", 1)[0].split()
    return " ".join(first[:words])


def _led_vectors(short: int, words: int) -> dict[tuple[str, int], np.ndarray]:
    """Each short chunk (at most `short` words, with a parent section) embedded again as the
    index would embed it with its parent section's lead before its own text: the real form of
    "a short section carrying its parent's lead", not a mix of stored vectors."""
    key = ("led", short, words)
    if key not in LEX:
        par = _parents()
        picked = [
            ck
            for ck, c in CHUNK.items()
            if c[3] is not None and ck in par and len(c[2].split()) <= short
        ]
        from memo.collection.chunker import passage_text

        texts = []
        for ck in picked:
            path, heading, text, _ = CHUNK[ck]
            lead = _lead(CHUNK[par[ck]][2], words)
            texts.append(passage_text(heading, f"{lead}\n\n{text}" if lead else text))
        mat = LIB[0].embedder.embed_passages(texts) if texts else np.zeros((0, 384))
        LEX[key] = {ck: np.asarray(v, dtype=np.float64) for ck, v in zip(picked, mat, strict=True)}
        print(f"# re-embedded {len(picked)} short chunks with their parent's lead", file=sys.stderr)
    return LEX[key]


def led_rule(short: int = 30, words: int = 40, how: str = "replace") -> Any:
    """The vector leg as memo reads it (a chunk at the best of its own cosine and its
    windows'), with each short chunk's own vector replaced by (or maxed with) its vector
    embedded with its parent's lead."""
    from dataclasses import replace

    def f(r: Ranking) -> dict:
        led = _led_vectors(short, words)
        at = {str(c.folder): i for i, (c, _) in enumerate(r.scope.parts)}
        mine = [ck for ck in led if ck[0] in at]
        mat = np.array([led[ck] for ck in mine]) if mine else np.zeros((0, 384))
        every = []
        for legs, q in zip(r.phrasings, QUERIES[id(r)], strict=True):
            v = qvec(q)
            if v is None or not legs.vec:
                every.append(legs)
                continue
            got = dict(legs.vec)
            for ck, s in zip(mine, mat @ v, strict=True):
                k = (at[ck[0]], ck[1])
                got[k] = float(s) if how == "replace" else max(float(s), got.get(k, -1.0))
            vec = sorted(got.items(), key=lambda kv: -kv[1])[: len(legs.vec)]
            every.append(replace(legs, vec=vec))
        return _refused(every)

    return witnessing(f)


def _refused(every: list) -> dict:
    """Phrasings' legs fused as memo fuses them."""
    from memo.search.fusion import fuse, fuse_phrasings

    return fuse(every[0], "hybrid") if len(every) == 1 else fuse_phrasings(every, "hybrid")


def witnessing(f: Any) -> Any:
    """A rule's fused scores through memo's note step (search/ranking.py witnessed), so it is
    compared with memo as memo ranks, not with the fusion alone."""
    from memo.search.ranking import witnessed

    def g(r: Ranking) -> dict:
        return witnessed(r.reader, f(r), r.phrasings)

    return g


RULES.update(
    {
        "led same": witnessing(lambda r: _refused(list(r.phrasings))),
        "led30": led_rule(30, 40),
        "led30 max": led_rule(30, 40, "max"),
        "led50": led_rule(50, 40),
        "led30 w20": led_rule(30, 20),
    }
)


# --- the note's own summary: frontmatter `description` (Obsidian Publish's meta description),
# embedded as a passage under the note's title, as note-level evidence ---

DESC: dict[tuple[str, str], np.ndarray] = {}


def _descriptions() -> None:
    """Each note's `description` (or `summary`) from its frontmatter, embedded once."""
    import yaml

    if DESC:
        return
    want: list[tuple[tuple[str, str], str]] = []
    for folder, path in NOTES:
        text = (Path(folder) / path).read_text(encoding="utf-8", errors="replace")
        if not text.startswith("---"):
            continue
        end = text.find("\n---", 3)
        try:
            meta = yaml.safe_load(text[3:end]) if end > 0 else None
        except yaml.YAMLError:
            meta = None
        if not isinstance(meta, dict):
            continue
        said = meta.get("description") or meta.get("summary")
        if isinstance(said, str) and said.strip():
            want.append(((folder, path), f"{NOTES[(folder, path)]['title']}\n\n{said.strip()}"))
    emb = LIB[0]._vectors
    vecs = emb.embedder.embed_passages([t for _, t in want]) if want else []
    for (n, _), v in zip(want, vecs, strict=True):
        DESC[n] = np.asarray(v, dtype=np.float64)
    print(f"# descriptions: {len(DESC)} of {len(NOTES)} notes", file=sys.stderr)


def zdesc_rule(w: float, mode: str = "add") -> Any:
    """`add`: each chunk gains w · z of its note's description cosine (z over the candidate
    notes that have one; the others 0). `mean`: the note witness's mean vector with the
    description as one more of its vectors, weighted like `w` chunks."""
    import math

    from memo.search.fusion import NOTE_WEIGHT, fuse, fuse_phrasings, standardised

    def f(r: Ranking) -> dict:
        _descriptions()
        notes = sorted({note_of(r, key) for key in r.scores})
        qs = [v for v in (qvec(q) for q in QUERIES[id(r)]) if v is not None]
        if not qs:
            return r.scores
        if mode == "add":
            ev = {n: max(float(DESC[n] @ q) for q in qs) for n in notes if n in DESC}
            if len(ev) < 2:
                return r.scores
            order = sorted(ev)
            z, _ = standardised([ev[n] for n in order])
            zn = dict(zip(order, z, strict=True))
            return {k: s * math.exp(w * zn.get(note_of(r, k), 0.0)) for k, s in r.scores.items()}
        base = (
            fuse(r.phrasings[0], "hybrid")
            if len(r.phrasings) == 1
            else fuse_phrasings(r.phrasings, "hybrid")
        )
        ev = {}
        for n in notes:
            m = NOTES[n]["mean"]
            if m is None:
                continue
            if n in DESC:
                m = NOTES[n]["n"] * m + w * DESC[n]
                m = m / (np.linalg.norm(m) or 1.0)
            ev[n] = max(float(m @ q) for q in qs)
        order = sorted(ev)
        z, _ = standardised([ev[n] for n in order])
        zn = dict(zip(order, z, strict=True))
        return {k: s * math.exp(NOTE_WEIGHT * zn.get(note_of(r, k), 0.0)) for k, s in base.items()}

    return f


RULES.update(
    {
        "zdesc.25": zdesc_rule(0.25),
        "zdesc.5": zdesc_rule(0.5),
        "zdesc.15": zdesc_rule(0.15),
        "dmean0": zdesc_rule(0.0, "mean"),
        "dmean1": zdesc_rule(1.0, "mean"),
        "dmean3": zdesc_rule(3.0, "mean"),
    }
)


# --- anchor text: the words other notes use when they link to a note ([[Ribbon|vertical
# bar]]): how people name it elsewhere, the web's oldest evidence of what a page is about ---

ANCHORS: dict[tuple[str, str], dict[str, set[str]]] = {}  # note -> {heading or "": stems}


def _anchors() -> None:
    """Every wikilink's display text, filed under the note (and heading) it points to."""
    if ANCHORS:
        return
    by_stem: dict[tuple[str, str], tuple[str, str]] = {}  # (library, file stem) -> note
    for folder, path in NOTES:
        by_stem[(_library_of(folder), Path(path).stem)] = (folder, path)
    n = 0
    for folder, path in list(NOTES):
        text = (Path(folder) / path).read_text(encoding="utf-8", errors="replace")
        for bang, inner in _WIKILINK.findall(text):  # memo's own reading of a wikilink
            target, _, shown = inner.replace("\\|", "|").partition("|")
            target, _, heading = target.partition("#")
            heading = heading.split("#")[0]
            if bang or heading.startswith("^"):
                continue  # an embed, or a block: no heading to file the words under
            name = Path(target.strip()).stem if target.strip() else Path(path).stem
            note = by_stem.get((_library_of(folder), name))
            if note is None or not shown.strip() or note == (folder, path):
                continue
            words = set(stems(shown)) - NOTES[note]["title_stems"]
            if words:
                ANCHORS.setdefault(note, {}).setdefault(heading.strip(), set()).update(words)
                n += 1
    print(f"# anchors: {n} links with words of their own, to {len(ANCHORS)} notes", file=sys.stderr)


def _library_of(folder: str) -> str:
    for lib in LIB:
        if folder.startswith(str(lib.root)):
            return str(lib.root)
    return ""


def anchor_rule(w: float, section: bool = False) -> Any:
    """Each chunk gains w · z of the IDF-weighted share of the question's stems that the
    anchors of links to its note hold (with `section`: only the links naming no heading or
    the chunk's own heading), z over the candidates, × coverage² and the cross-lingual factor
    as the lexical leg."""
    import math

    from memo.search.fusion import lex_weight, standardised

    def f(r: Ranking) -> dict:
        _anchors()
        ev: dict = {}
        for legs in r.phrasings:
            total = sum(legs.idf)
            if not legs.terms or total <= 0:
                continue
            scale = lex_weight(legs)
            for key in r.scores:
                note = note_of(r, key)
                got = ANCHORS.get(note)
                if not got:
                    continue
                if section:
                    head = CHUNK[(str(r.scope.parts[key[0]][0].folder), key[1])][1]
                    last = head.split(" > ")[-1] if " > " in head else ""
                    held = got.get("", set()) | got.get(last, set())
                else:
                    held = set().union(*got.values())
                s = sum(x for t, x in zip(legs.terms, legs.idf, strict=True) if t in held)
                ev[key] = max(ev.get(key, 0.0), scale * s / total)
        if not ev:
            return r.scores
        keys = list(r.scores)
        z, _ = standardised([ev.get(k, 0.0) for k in keys])
        return {k: r.scores[k] * math.exp(w * z[i]) for i, k in enumerate(keys)}

    return f


RULES.update(
    {
        "anchor.25": anchor_rule(0.25),
        "anchor.5": anchor_rule(0.5),
        "anchor1": anchor_rule(1.0),
        "anchor sec.25": anchor_rule(0.25, section=True),
        "anchor sec.5": anchor_rule(0.5, section=True),
        "anchor sec1": anchor_rule(1.0, section=True),
    }
)


# --- the windows without the note's title at their head: a window's vector then tells a
# section from its siblings by the section's own words (the chunk's own vector keeps the
# whole heading path); fused as `shipped` (without the note step) to compare with it ---
RULES.update(
    {
        "win section": _best_of_windows(lambda base, best, idx: best, head="section"),
        "win none": _best_of_windows(lambda base, best, idx: best, head="none"),
    }
)
