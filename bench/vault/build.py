#!/usr/bin/env python3
"""Turn draft.py's questions into qrels rows, appended to en.jsonl, ru.jsonl and en-ru.jsonl
(stdlib only; never types a line number: every range is derived from the notes).

    python3 build.py --vault-ru CLONE/ru --vault-en CLONE/en [--write]

For each drafted question: the English note's sections named by heading text are resolved to
line ranges (check.py's Note: fence-aware ATX H1-H3); the Russian note is the one with the
same front-matter `permalink:`, and its sections are the headings at the same positions (the
two vaults share every note's H1-H3 structure; asserted). Without --write it prints the rows
and each target's first line in both vaults, for reading before they are kept. Rows already in
the files (same id) are replaced, so a re-run after editing draft.py is safe.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check import Note  # noqa: E402
from draft import FIRST_ID, NONE, Q  # noqa: E402


def heading_index(note, name):
    """Index into note.heads of the heading named `name` ("Text#2": its second occurrence)."""
    text, _, nth = name.partition("#")
    if nth and not nth.isdigit():
        text, nth = name, ""
    found = [i for i, h in enumerate(note.heads) if h[2] == text]
    n = int(nth or 1)
    if len(found) < n:
        raise SystemExit(f"no heading {name!r}; headings: {[h[2] for h in note.heads]}")
    if not nth and len(found) > 1:
        raise SystemExit(f"heading {text!r} occurs {len(found)} times: say which (#n)")
    return found[n - 1]


def span(note, first, last):
    """(start, end) from section `first` (None: the prelude) through the end of `last`."""
    start = note.body_start if first is None else note.heads[first][0]
    end = note.section_of(note.heads[last][0] if last is not None else start)[0]
    return start, end


def resolve(note, specs):
    """[(first, last)] heading indices per spec (None = prelude)."""
    out = []
    for spec in specs:
        a, _, b = spec.partition("..")
        first = None if a == "" else heading_index(note, a)
        last = first if not b else heading_index(note, b)
        out.append((first, last))
    return out


def permalinks(vault):
    out = {}
    for dp, _, fn in os.walk(vault):
        for f in fn:
            if f.endswith(".md"):
                rel = os.path.relpath(os.path.join(dp, f), vault).replace(os.sep, "/")
                p = Note(os.path.join(vault, rel)).props.get("permalink")
                if p:
                    out.setdefault(p, []).append(rel)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault-ru", required=True)
    ap.add_argument("--vault-en", required=True)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    ru_by_link = permalinks(a.vault_ru)
    rows = {"en.jsonl": [], "ru.jsonl": [], "en-ru.jsonl": []}
    for n, (kind, en_path, specs, q_en, q_ru) in enumerate(Q):
        qid = f"v{FIRST_ID + n:03d}"
        got = {"en": [], "ru": []}  # [(path, start, end)] per vault, in the order of specs
        for spec in specs:
            where, _, sec = spec.rpartition("::")
            where = where or en_path
            ne = Note(os.path.join(a.vault_en, where))
            (ru_path,) = ru_by_link[ne.props["permalink"]]
            nr = Note(os.path.join(a.vault_ru, ru_path))
            shape = [h[1] for h in ne.heads], [h[1] for h in nr.heads]
            assert shape[0] == shape[1], f"{qid}: H1-H3 structure differs: {where} | {ru_path}"
            ((first, last),) = resolve(ne, [sec])
            got["en"].append((where, *span(ne, first, last), first != last, ne))
            got["ru"].append((ru_path, *span(nr, first, last), first != last, nr))
        for vault, file_names in (("en", ["en.jsonl"]), ("ru", ["ru.jsonl", "en-ru.jsonl"])):
            spans = got[vault]
            for fname in file_names:
                lang = "ru" if fname == "ru.jsonl" else "en"
                path, s, e = spans[0][:3]
                row = {
                    "id": qid,
                    "lang": lang,
                    "question": q_ru if lang == "ru" else q_en,
                    "path": path,
                    "line_start": s,
                    "line_end": e,
                    "kind": kind,
                }
                if len(spans) > 1 or spans[0][3]:
                    row["spans"] = [
                        {"path": p, "line_start": s, "line_end": e} for p, s, e, *_ in spans
                    ]
                rows[fname].append(row)
            if not a.write:
                for path, s, e, _, note in spans:
                    print(f"{qid} {path}:{s}-{e} | {note.lines[s - 1][:70]}")
    none = {"none-en.jsonl": [], "none-ru.jsonl": []}
    for n, (q_en, q_ru) in enumerate(NONE, 1):
        none["none-en.jsonl"].append({"id": f"n{n:03d}", "lang": "en", "question": q_en})
        none["none-ru.jsonl"].append({"id": f"n{n:03d}", "lang": "ru", "question": q_ru})
    if not a.write:
        return
    for fname, new in rows.items():
        fp = os.path.join(HERE, fname)
        old = [json.loads(x) for x in open(fp, encoding="utf-8") if x.strip()]
        ids = {r["id"] for r in new}
        kept = [r for r in old if r["id"] not in ids]
        with open(fp, "w", encoding="utf-8") as f:
            for r in kept + new:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    for fname, new in none.items():
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            for r in new:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("wrote", {k: len(v) for k, v in rows.items()}, {k: len(v) for k, v in none.items()})


if __name__ == "__main__":
    main()
