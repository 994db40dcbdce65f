"""The tables of docs/benchmarks.md: one function a results part, `@renders("script.part")`,
given the part's data as its script wrote it (bench/render.py says how a doc shows them).
Retrieval and ranking here; speed, scale and operation in bench/tables_ops.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

RENDERERS: dict[str, Callable[[Any], str]] = {}


def renders(name: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    def add(f: Callable[[Any], str]) -> Callable[[Any], str]:
        RENDERERS[name] = f
        return f

    return add


# ---------------------------------------------------------------------- helpers
def table(head: Sequence[str], rows: Sequence[Sequence[Any]], right: int = 0) -> str:
    """A markdown table; the last `right` columns right-aligned."""
    align = ["---"] * (len(head) - right) + ["---:"] * right
    lines = [head, align, *rows]
    return "\n".join("| " + " | ".join(str(c) for c in r) + " |" for r in lines)


def r3(xs: Sequence[float]) -> str:
    """R@1 / R@5 / MRR (or any such run of shares) as the tables print them."""
    return " / ".join(f"{x:.3f}" for x in xs)


def ms(x: float) -> str:
    return f"{x:.1f}"


# ---------------------------------------------------------------------- core.py
@renders("core.noop")
def core_noop(d: dict) -> str:
    head = ["library", "first (lexical) build s", "no-op median s", "no-op min s"]
    row = [f"{d['notes']:,} notes in {d['collections']} collections", f"{d['build_s']:.1f}"]
    return table(head, [row + [f"{d['median_s']:.3f}", f"{d['min_s']:.3f}"]], right=3)


@renders("core.search")
def core_search(d: dict) -> str:
    raw = d["raw_ms"]
    parts = raw["embed"] + raw["lex_sql"] + raw["knn"]
    modes = [
        [m, ms(v["p50"]), ms(v["p95"]), f"{v['p50'] / parts:.2f}"] for m, v in d["modes"].items()
    ]
    head = (
        f"xquad-dev-distract/ru ({d['collections']} collections, {d['chunks']:,} chunks), "
        f"{d['questions']} questions ru and en, k=8, in-process, warm, engine {d['engine']}:"
    )
    parts_rows = [
        ["one query embedding", ms(raw["embed"])],
        [
            "the lexical leg's SQL (statistics + postings), summed over the collections",
            ms(raw["lex_sql"]),
        ],
        [
            "the vector leg's scan (chunks and their windows, in memory; k=100), summed over"
            " the collections",
            ms(raw["knn"]),
        ],
        ["**the three summed**", f"**{ms(parts)}**"],
        ["catch-up when nothing changed (a stat per note, every collection)", ms(raw["catchup"])],
    ]
    return "\n\n".join(
        [
            head,
            table(["mode", "p50 ms", "p95 ms", "p50 ÷ the raw parts"], modes, right=3),
            table(["raw part", "median ms"], parts_rows, right=1),
        ]
    )


@renders("core.retrieval")
def core_retrieval(d: dict) -> str:
    rows = []
    for t in d["tasks"]:
        best = [max(t["lex"][i], t["vec"][i]) for i in range(3)]
        ok = all(t["hybrid"][i] >= best[i] - 1e-9 for i in (1, 2))
        rows.append(
            [t["task"], t["questions"], r3(t["hybrid"]), r3(t["lex"]), r3(t["vec"])]
            + ["yes" if ok else "**no**"]
        )
    head = ["task", "questions", "hybrid", "lex", "vec", "hybrid ≥ the better leg (R@5, MRR)"]
    return f"recall@1 / recall@5 / MRR@10, k=10, engine {d['engine']}:\n\n" + table(head, rows)


# ---------------------------------------------------------------------- diversity.py
@renders("diversity.dev")
def diversity_dev(d: dict) -> str:
    rows = [
        [t["task"], t["questions"]]
        + [f"{t[k + '_off']:.3f} → {t[k + '_on']:.3f}" for k in ("r5", "mrr", "notes")]
        for t in d["tasks"]
    ]
    worse = sum(t["r5_on"] < t["r5_off"] for t in d["tasks"])
    head = ["task", "questions", "R@5 off → on", "MRR@10 off → on", "notes in the top 5"]
    return table(head, rows) + f"\n\nTasks where diversity lowered R@5: {worse}."


# ---------------------------------------------------------------------- focus.py
@renders("focus.xquad")
def focus_xquad(d: dict) -> str:
    head = ["set", "n", "whole chunk", "answer in focus", "in first window"]
    head += ["in shown text / before", "chars: focus / chunk (median)"]
    rows = [
        [r["set"], r["n"], r["whole"], f"{r['focus']:.3f}", f"{r['start']:.3f}"]
        + [f"{r['shown']:.3f} / {r['shown_before']:.3f}"]
        + [f"{r['focus_chars']:.0f} / {r['chunk_chars']:.0f}"]
        for r in d["rows"]
        if r["half"] == "all"
    ]
    return table(head, rows)


# ---------------------------------------------------------------------- phrasings.py
@renders("phrasings.also")
def phrasings_also(d: dict) -> str:
    asked = (
        ("en", "en>ru alone"),
        ("en+ru", "en>ru, also=[the Russian question]"),
        ("ru", "ru>ru"),
    )
    sets = list(d)
    head = ["asked", *(f"{s}/ru R@1 / R@5 / MRR@10" for s in sets), "flow R@5 (route, then search)"]
    rows = [
        [label, *(r3([d[s]["search"][k][m] for m in ("r1", "r5", "mrr")]) for s in sets)]
        + [" / ".join(f"{d[s]['flow'][k]:.3f}" for s in sets)]
        for k, label in asked
    ]
    notes = [
        f"{s}: {d[s]['n']} questions; the warning fires on en>ru {d[s]['warned']['en']:.3f}, on "
        f"ru>ru {d[s]['same_ru']:.3f}, on en>en {d[s]['same_en']:.3f}; two phrasings cost "
        f"{d[s]['cost']['two_ms']:.1f} ms against {d[s]['cost']['one_ms']:.1f} "
        f"(× {d[s]['cost']['ratio']:.2f}, hot, 40 questions twice)"
        for s in sets
    ]
    return table(head, rows) + "\n\n" + "\n".join(f"- {n}" for n in notes)


# ---------------------------------------------------------------------- confidence.py
@renders("confidence.fit")
def confidence_fit(d: dict) -> str:
    """XQuAD's ways of asking (the vault's: "A real vault"), under the constants shipped and
    under thresholds fitted without the question's topic."""
    held = {r["asked"]: r for r in d["held_out"]}
    rows = []
    for r in (r for r in d["shipped"] if not r["asked"].startswith("vault")):
        h = held[r["asked"]]
        right = [x["high_right"] for x in (r, h)]
        rows.append(
            [r["asked"], r["n"], " / ".join(f"{r[k]:.3f}" for k in ("high", "low", "none"))]
            + [" / ".join(f"{h[k]:.3f}" for k in ("high", "low", "none"))]
            + ["—" if None in right else " / ".join(f"{x:.3f}" for x in right)]
        )
    head = ["asked", "searches", "shipped: high / low / none", "held out: high / low / none"]
    fits = "; ".join(
        f"without topic-{i}: " + ", ".join(f"{v:g}" for v in f.values())
        for i, f in enumerate(d["fits"], start=1)
    )
    return (
        table([*head, "`high` is right"], rows, right=4)
        + f"\n\nThresholds fitted ({', '.join(d['fits'][0])}): {fits}."
    )


# ---------------------------------------------------------------------- vault.py
@renders("vault.index")
def vault_index(d: list) -> str:
    head = ["vault", "`memo init`: plan s / collections / notes"]
    head.append("`memo index` s (chunks, chunks/s)")
    rows = [
        [r["lang"], f"{r['plan_s']:.2f} / {r['collections']} / {r['notes']}"]
        + [f"{r['index_s']:.0f} ({r['chunks']:,}, {r['chunks'] / r['index_s']:.1f}/s)"]
        for r in d
    ]
    return table(head, rows)


@renders("vault.retrieval")
def vault_retrieval(d: list) -> str:
    halves = ("tune", "held-back", "all")
    head = ["set", "n", *(f"{h}: R@1 / R@5 / R@10 / MRR@10" for h in halves)]
    by = {(r["set"], r["half"]): r for r in d}
    rows = [
        [name, f"{by[(name, 'all')]['n']:.0f}"]
        + [r3([by[(name, h)][k] for k in ("r1", "r5", "r10", "mrr")]) for h in halves]
        for name in dict.fromkeys(r["set"] for r in d)
    ]
    return table(head, rows, right=4)


@renders("vault.confidence")
def vault_confidence(d: list) -> str:
    kinds = (("right", "first hit right"), ("wrong", "first hit wrong"), ("none", "unanswerable"))
    head = ["set", *(f"{label}: n, high / low / none" for _, label in kinds)]
    rows = [
        [r["set"]] + [f"{r[k][0]}: {r[k][1]} / {r[k][2]} / {r[k][3]}" for k, _ in kinds]
        for r in d
        if r["half"] == "all"
    ]
    tune = [r for r in d if r["half"] == "tune"]
    said = "; ".join(
        f"{r['set']} {r['right'][1]} of {r['right'][0]} / {r['wrong'][1]} of {r['wrong'][0]}"
        for r in tune
    )
    return table(head, rows) + f"\n\nTune half, `high` when right / when wrong: {said}."


@renders("vault.words")
def vault_words(d: list) -> str:
    head = ["set", "words", "tune R@1 / R@5 / R@10", "held-back R@1 / R@5 / R@10"]
    head += ["route top-1", "`high`: right / wrong", "unanswerable: `none`", "p50 ms"]

    def r(h: dict) -> str:
        return " / ".join(f"{h[k]:.3f}" for k in ("r1", "r5", "r10"))

    rows = []
    for x in d:
        c = x["confidence"]
        rows.append(
            [x["set"], x["words"], r(x["tune"]), r(x["held-back"]), f"{x['all']['top1']:.3f}"]
            + [f"{c['right'][1]} of {c['right'][0]} / {c['wrong'][1]} of {c['wrong'][0]}"]
            + [f"{c['none'][3]} of {c['none'][0]}", f"{x['p50_ms']:.0f}"]
        )
    return table(head, rows, right=2)


@renders("vault.focus")
def vault_focus(d: list) -> str:
    head = ["set", "n", "lines: chunk / focus (median)", "focus shorter than its chunk"]
    rows = [
        [
            r["set"],
            r["n"],
            f"{r['chunk_lines']:.0f} / {r['focus_lines']:.0f}",
            f"{r['shorter']:.3f}",
        ]
        for r in d
        if r["half"] == "all"
    ]
    return table(head, rows, right=3)


@renders("vault.route")
def vault_route(d: list) -> str:
    head = ["set", "route top-1", "flow R@5 (route, then search its first collection)"]
    head.append("a search of the whole vault, p50 ms")
    rows = [[r["set"], f"{r['top1']:.3f}", f"{r['flow']:.3f}", f"{r['p50_ms']:.0f}"] for r in d]
    return table(head, rows, right=3)


# ---------------------------------------------------------------------- routing.py
def _flow_rows(d: dict) -> str:
    head = ["library / task", "route top-1", "route top-3", "flow R@5", "`--route 3` R@5"]
    head += ["search everything R@5", "route p50 / p95 ms"]
    keys = ("top1", "top3", "flow", "route3", "all")
    rows = [
        [r["task"], *(f"{r[k]:.3f}" for k in keys), f"{r['p50_ms']:.0f} / {r['p95_ms']:.0f}"]
        for r in d["rows"]
    ]
    return table(head, rows, right=6)


@renders("routing.flow")
def routing_flow(d: dict) -> str:
    return _flow_rows(d)


@renders("routing.thousand")
def routing_thousand(d: dict) -> str:
    head = ["shortlist N", "top-1 as searching all", "top-3 as searching all", "route p50 ms"]
    rows = [
        [r["n"], f"{r['top1']:.3f}", f"{r['top3']:.3f}", f"{r['p50_ms']:.0f}"]
        for r in d["shortlist"]
    ]
    return _flow_rows(d) + "\n\n" + table(head, rows, right=4)


# ---------------------------------------------------------------------- languages.py
def _halves(d: dict, key: str, fmt: Any) -> str:
    """A figure on the tune half, then the held-back one: "tune / held"."""
    return " / ".join(fmt(d[h]) if h in d else "-" for h in ("tune", "held")).replace(key, "")


def _r1(s: dict) -> str:
    return f"{s['r1']:.3f}"


@renders("languages.languages")
def languages_languages(d: dict) -> str:
    head = [
        "language",
        "hybrid R@1",
        "hybrid R@5",
        "lexical R@1",
        "exact lexical R@1",
        "right first: high / low / none",
        "wrong first high",
        "unanswerable none",
        "warned",
        "index s",
        "search ms",
    ]
    rows = []
    for x in d["languages"]:
        h, lx, ex, un = x["hybrid"], x["lex"], x["exact_lex"], x["unanswerable"]

        def conf(s: dict) -> str:
            low = s["right"] - s["right_high"] - s["right_none"]
            return f"{s['right_high']} / {low} / {s['right_none']}"

        rows.append(
            [
                x["lang"],
                _halves(h, "", _r1),
                _halves(h, "", lambda s: f"{s['r5']:.3f}"),
                _halves(lx, "", _r1),
                _halves(ex, "", _r1),
                _halves(h, "", conf),
                _halves(h, "", lambda s: f"{s['wrong_high']} of {s['n'] - s['right']}"),
                _halves(un, "", lambda s: f"{s['none'] / s['n']:.3f}"),
                _halves(h, "", lambda s: str(s["warned"])),
                f"{x['index_s']:.1f}",
                ms(x["search_ms"]),
            ]
        )
    pairs = []
    for p in d["pairs"]:
        a, al = p["alone"], p["also"]
        pairs.append(
            [
                p["pair"].replace("-", " > "),
                _halves(a, "", _r1),
                _halves(al, "", _r1),
                _halves(a, "", lambda s: f"{s['warned']} of {s['n']}"),
                _halves(a, "", lambda s: f"{s['right_none']} of {s['right']}"),
                _halves(a, "", lambda s: f"{s['wrong_high']} of {s['n'] - s['right']}"),
            ]
        )
    phead = [
        "question > notes",
        "hybrid R@1",
        "with the translation as `also`",
        "warned",
        "right first `none`",
        "wrong first `high`",
    ]
    limit = f" (the first {d['limit']} questions of each half)" if d.get("limit") else ""
    return (
        f"Each cell: tune half / held-back half{limit}.\n\n"
        + table(head, rows)
        + "\n\n"
        + table(phead, pairs)
    )


@renders("languages.cost")
def languages_cost(d: dict) -> str:
    head = ["library", "cold index s", "of it: languages and cutting s", "share",
            "hybrid search ms (p50)", "of it: the question's language and terms ms"]  # fmt: skip
    row = [
        f"{d['notes']} notes, {d['chunks']:,} chunks",
        f"{d['index_s']:.1f}",
        f"{d['languages_s']:.2f}",
        f"{d['languages_s'] / d['index_s']:.1%}",
        ms(d["search_ms"]),
        f"{d['question_ms']:.2f}",
    ]
    return table(head, [row], right=5)
