"""Nobody waits for the embedder (issue 30): how soon a library answers, as processes.

    python bench/no_wait.py vault --vault /path/to/obsidian-help/en [--query Q]
    python bench/no_wait.py synthetic --vault /path/to/obsidian-help/en [--notes 2000]
    python bench/no_wait.py eval [--set xquad-dev-distract] [--shared ../shared]

`vault`: `memo init --yes` on a copy, `memo index` as a process (the embedding cache off), and
`memo search` from another every POLL seconds: the first hit, and searches during the index
against the same after it. `synthetic`: `--notes` notes of the vault's paragraphs in 20
collections, `memo index` until the first hit. `eval`: every chunk pending (the lexical stage
alone), then the top 10 once indexed in two steps against one `memo index`. Writes
bench/results/no_wait.json; scratch folders under TMPDIR are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judged import load_average, pct, record, smoke_args  # bench/ is on sys.path as a script

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
POLL = 0.5  # seconds between two searches from the other process
MEMO = [sys.executable, "-m", "memo"]


def _env(scratch: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "MEMO_EMBED_CACHE_MB": "0", **extra}
    env["MEMO_INDEX_DIR"] = str(scratch / "idx")
    env.pop("MEMO_ROOT", None)
    return env


def _search(root: Path, query: str, env: dict[str, str]) -> tuple[float, int]:
    """(seconds, hits) of one `memo search` process."""
    t = time.perf_counter()
    out = subprocess.run(
        [*MEMO, "search", str(root), query, "-k", "5", "--json", "--no-server"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    took = time.perf_counter() - t
    try:
        hits = len(json.loads(out.stdout)["results"])
    except (ValueError, KeyError):
        hits = 0
    return took, hits


_load = load_average


def during_index(root: Path, query: str, env: dict[str, str], stop_at_hit: bool) -> dict:
    """Start `memo index ROOT`; search from another process until it ends (or, with
    `stop_at_hit`, until a search returns a hit: then stop it with SIGTERM)."""
    t0 = time.perf_counter()
    err = open(root.parent / "index.stderr", "w", encoding="utf-8")  # noqa: SIM115
    proc = subprocess.Popen(
        [*MEMO, "index", str(root), "--quiet", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
    )
    first_hit: float | None = None
    during: list[float] = []
    while proc.poll() is None:
        took, hits = _search(root, query, env)
        if proc.poll() is None:  # only searches that ran while the index did
            during.append(took)
        if hits and first_hit is None:
            first_hit = time.perf_counter() - t0
            if stop_at_hit:
                proc.send_signal(signal.SIGTERM)
                break
        time.sleep(POLL)
    out, _ = proc.communicate(timeout=3600)
    total = time.perf_counter() - t0
    err.close()
    try:
        report = json.loads(out)
    except ValueError:
        report = {}
        print(f"memo index said no report (exit {proc.returncode}): {root.parent / 'index.stderr'}")
    return {"first_hit": first_hit, "index_seconds": total, "during": during, "report": report}


def vault(args: argparse.Namespace) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="memo-nowait-"))
    root = scratch / "vault"
    shutil.copytree(args.vault, root, ignore=shutil.ignore_patterns(".memo", "*.mp4"))
    env = _env(scratch)
    subprocess.run([*MEMO, "init", str(root), "--yes"], env=env, check=True, capture_output=True)
    print(f"scratch {scratch}; load before {_load()}")
    load0 = os.getloadavg()[0]
    run = during_index(root, args.query, env, stop_at_hit=False)
    after = [_search(root, args.query, env)[0] for _ in range(max(3, len(run["during"])))]
    rep, d, a = run["report"], run["during"], after
    data = {
        "notes": rep.get("new"),
        "chunks": rep.get("chunks_embedded"),
        "index_s": run["index_seconds"],
        "first_hit_s": run["first_hit"],
        "during": [len(d), pct(d, 50), pct(d, 95)],
        "after": [len(a), pct(a, 50), pct(a, 95)],
    }
    record(__file__, "vault", data, load0, args.smoke)


def _paragraphs(folder: Path) -> list[str]:
    out = []
    for p in sorted(folder.rglob("*.md")):
        text = p.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"(?s)\A---\n.*?\n---\n", "", text)
        out += [x.strip() for x in text.split("\n\n") if len(x.strip()) > 80 and "```" not in x]
    return out


def synthetic(args: argparse.Namespace) -> None:
    """`--notes` notes from the vault's real paragraphs, 20 collections, 3 sections each."""
    rng = random.Random(7)
    paras = _paragraphs(Path(args.vault))
    scratch = Path(tempfile.mkdtemp(prefix="memo-nowait-syn-"))
    root = scratch / "lib"
    for i in range(args.notes):
        coll = root / f"topic{i % 20:02d}"
        coll.mkdir(parents=True, exist_ok=True)
        (coll / "_meta.yaml").write_text(f"description: synthetic topic {i % 20}\n")
        body = "\n\n".join(f"## Part {s}\n\n" + "\n\n".join(rng.sample(paras, 2)) for s in range(3))
        (coll / f"note{i:05d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    env = _env(scratch)
    print(f"scratch {scratch}; {args.notes} notes; load before {_load()}")
    load0 = os.getloadavg()[0]
    run = during_index(root, args.query, env, stop_at_hit=True)
    data = {"notes": args.notes, "collections": 20, "first_hit_s": run["first_hit"]}
    record(__file__, "synthetic", data, load0, args.smoke)


def _questions(qrels: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in qrels.read_text(encoding="utf-8").splitlines() if x.strip()]


def _rank(hits: list[dict[str, Any]], q: dict[str, Any]) -> int | None:
    for r, h in enumerate(hits, start=1):
        if h["path"] == q["path"] and q["line_start"] <= h["line"] <= q["line_end"]:
            return r
    return None


def evaluate(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(SRC))
    from judged import engine

    from memo.config import Settings
    from memo.library import Library

    base = Path(args.shared) / "eval" / args.set
    scratch = Path(tempfile.mkdtemp(prefix="memo-nowait-eval-"))
    print(f"scratch {scratch}; load before {_load()}\n")
    tasks: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}  # notes' language -> tasks
    for qrels in sorted((base / "qrels").glob("*.jsonl")):
        qs = _questions(qrels)[: args.limit or None]
        lang = qs[0].get("library_lang") or qs[0]["lang"]
        tasks.setdefault(lang, []).append((qrels.stem, qs))
    env = Settings.from_env()
    load0, rows = os.getloadavg()[0], []
    for lang, these in tasks.items():
        got: dict[str, dict[str, list[list[dict[str, Any]]]]] = {}
        for how in ("two-steps", "one-go"):
            root = scratch / how / lang
            shutil.copytree(base / lang, root, ignore=shutil.ignore_patterns(".memo"))
            settings = Settings(
                **{**_fields(env), "search_embed_seconds": 0.0, "index_dir": scratch / how / "i"}
            )
            embedder = engine(settings.embedder, settings.model_dir)
            with Library(root, embedder, settings) as lib:
                lib.declare()
                if how == "two-steps":  # every chunk pending: the lexical stage alone
                    got["lexical"] = {t: _ask(lib, qs) for t, qs in these}
                lib.index()
                got[how] = {t: _ask(lib, qs) for t, qs in these}
        for task, qs in these:
            ranks = {k: [_rank(v, q) for v, q in zip(got[k][task], qs, strict=True)] for k in got}
            same = sum(
                [(h["path"], h["line"]) for h in a] == [(h["path"], h["line"]) for h in b]
                for a, b in zip(got["two-steps"][task], got["one-go"][task], strict=True)
            )
            lex, hyb = _recall(ranks["lexical"]), _recall(ranks["one-go"])
            rows.append({"task": task, "n": len(qs), "lexical": lex, "hybrid": hyb, "same": same})
    record(__file__, "eval", {"set": args.set, "rows": rows}, load0, args.smoke)


def _ask(lib: Any, qs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [lib.search(".", q["question"], k=10).to_dict()["results"] for q in qs]


def _recall(ranks: list[int | None]) -> tuple[float, float]:
    n = max(1, len(ranks))
    return (
        sum(r == 1 for r in ranks) / n,
        sum(r is not None and r <= 5 for r in ranks) / n,
    )


def _fields(s: Any) -> dict[str, Any]:
    return {f: getattr(s, f) for f in s.__dataclass_fields__}


def smoke() -> None:
    """Each part on a library it makes itself: code paths, not figures."""
    tmp = Path(tempfile.mkdtemp(prefix="memo-nowait-smoke-"))
    vault_dir = tmp / "v"
    for i in range(4):
        (vault_dir / f"f{i}").mkdir(parents=True)
        (vault_dir / f"f{i}" / f"n{i}.md").write_text(
            f"# Note {i}\n\nHow to restore a deleted note from the trash, case {i}, is told "
            "here at length so that the paragraph is long enough to be kept.\n"
        )
    ns = argparse.Namespace(vault=vault_dir, query="restore a deleted note", notes=30, smoke=True)
    global POLL
    POLL = 0.05
    vault(ns)
    synthetic(ns)
    eval_dir = tmp / "shared" / "eval" / "tiny"
    (eval_dir / "qrels").mkdir(parents=True)
    shutil.copytree(vault_dir, eval_dir / "en")
    for folder in (eval_dir / "en").iterdir():
        (folder / "_meta.yaml").write_text("description: smoke notes\n")
    (eval_dir / "qrels" / "en.jsonl").write_text(
        json.dumps(
            {"question": "restore deleted note", "lang": "en", "path": "f1/n1.md", "line_start": 1}
            | {"line_end": 3}
        )
        + "\n"
    )
    evaluate(argparse.Namespace(shared=tmp / "shared", set="tiny", limit=0, smoke=True))
    shutil.rmtree(tmp, ignore_errors=True)
    print("smoke: ok")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    smoke_args(ap)
    sub = ap.add_subparsers(dest="part")
    for name in ("vault", "synthetic"):
        p = sub.add_parser(name)
        p.add_argument("--vault", type=Path, required=True, help="e.g. obsidian-help/en")
        p.add_argument("--query", default="how do I restore a deleted note")
        p.add_argument("--notes", type=int, default=2000)
    p = sub.add_parser("eval")
    p.add_argument("--shared", default=str(HERE.parents[1] / "shared"))
    p.add_argument("--set", default="xquad-dev-distract")
    p.add_argument("--limit", type=int, default=0, help="questions per task (0: all)")
    args = ap.parse_args()
    if args.smoke:
        smoke()
    elif args.part == "vault":
        vault(args)
    elif args.part == "synthetic":
        synthetic(args)
    elif args.part == "eval":
        evaluate(args)
    else:
        ap.print_help()


if __name__ == "__main__":
    main()
