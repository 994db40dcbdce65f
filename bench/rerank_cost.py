"""What a re-ranker would cost a search, measured with the model memo already runs.

bench/ceiling.py finds memo's vault ranking at its evidence's ceiling: what would move it is
a model reading the question and a passage together (a cross-encoder) over the fused top N.
No such model's weights can be had here, but its cost can be: the small multilingual
cross-encoders (mMiniLMv2-L12-H384 and its kin) are e5-small's own network, a 12-layer,
384-wide encoder over the same XLM-R vocabulary, with a one-number head. Reading N pairs
`question + passage` costs what embedding N passages of that length costs memo's engine.

For each question of the set (the vault's, or the smoke set's), memo ranks the library as a
search does (rank(), the query vector cached: the legs, the fusion, the note step), then
memo's own engine, with the embedding cache off, embeds the fused top N as `question
passage` texts, in one batch, as a cross-encoder would read them (each cut at the model's 512
tokens). Printed: the medians of the search and of each N's batch, their ratio, and the
pairs' median token count.

    python bench/rerank_cost.py --vault DIR/ru-drafted --index-dir DIR/indexes [--n 10,20,30]
    python bench/rerank_cost.py --smoke
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from judged import smoke_args, smoke_eval  # noqa: E402
from notes import SPENT, asked_distract, asked_vault, collect  # noqa: E402

from memo.collection.chunker import passage_text  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help="a library bench/vault.py adopted (ru or en)")
    ap.add_argument("--index-dir", type=Path, default=None)
    ap.add_argument("--n", default="10,20,30", help="how many fused hits a re-ranker reads")
    ap.add_argument("--limit", type=int, default=40, help="questions")
    smoke_args(ap)
    args = ap.parse_args()
    os.environ["MEMO_EMBED_CACHE_MB"] = "0"  # every pair through the engine
    if args.smoke:
        folder = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-rerank-smoke-")))
        args.index_dir = folder / "indexes"
        args.vault = folder / "xquad-dev-distract" / "ru"
        args.n = "2"
    if args.index_dir:
        os.environ["MEMO_INDEX_DIR"] = str(args.index_dir)
    settings = Settings.from_env()
    emb = embedder_for(settings, "serve")
    assert emb is not None, "no embedder: a cost needs the model"
    lib = Library(args.vault, emb, settings)
    lib.index()
    if args.smoke:
        qs = [q for sub, _, rows in asked_distract(args.vault.parent) if sub == "ru" for q in rows]
    else:
        qs = [q for q in asked_vault(_lang(lib))[0][1] if "path" in q]
    qs = qs[: args.limit]
    collect(lib, qs)  # the query vectors, once: a search's embedding is not the re-ranker's
    items = collect(lib, qs)
    search = [SPENT[id(r)] for _, r in items]
    print(f"# load {os.getloadavg()[0]:.2f}; {len(items)} questions of {args.vault}")
    print(f"search (rank(), query vector cached): p50 {1000 * statistics.median(search):.1f} ms")
    for n in (int(x) for x in args.n.split(",")):
        spent, tokens = [], []
        for q, r in items:
            order, rows = r._ordered(n)
            pairs = [
                f"{q['question']}\n{passage_text(rows[k].heading, rows[k].text)}" for k in order[:n]
            ]
            tokens += [min(512, emb.count_tokens(p)) for p in pairs]
            t = time.perf_counter()
            emb.embed_passages(pairs)
            spent.append(time.perf_counter() - t)
        med = statistics.median(spent)
        print(
            f"top {n}: p50 {1000 * med:.0f} ms ({med / statistics.median(search):.0f}x the"
            f" search), pairs p50 {statistics.median(tokens):.0f} tokens"
        )


def _lang(lib: Library) -> str:
    """ru or en: which of the vault's halves this library is, by its notes' alphabet."""
    from memo.collection.lexical import letters

    text = " ".join(p.read_text(encoding="utf-8")[:400] for p in list(lib.root.rglob("*.md"))[:20])
    cyr, lat = letters(text)
    return "ru" if cyr > lat else "en"


if __name__ == "__main__":
    main()
