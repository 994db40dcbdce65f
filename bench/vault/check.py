#!/usr/bin/env python3
"""Verify the vault retrieval-benchmark qrels (stdlib only).

    python3 check.py                     # checks ru.jsonl, en-ru.jsonl, en.jsonl
    python3 check.py --vault-ru DIR --vault-en DIR [--show]

For every qrels file it checks that
  * every line is a JSON object with the expected fields and values;
  * `path` exists in the right vault (ru.jsonl and en-ru.jsonl -> vault-ru,
    en.jsonl -> vault-en) and 1 <= line_start <= line_end <= number of lines;
  * line_start is an ATX heading (#, ##, ###; outside front matter and fenced
    code blocks), or the first non-blank body line of the text before the first
    heading (prelude) / of a heading-less note;
  * line_end is the end of that section: the line before the next heading of the
    same or higher level (for a prelude: before the first heading), or the last
    line of the file;
  * at most 2 questions per note.
Across files it checks that the three files have the same ids, splits and kinds,
that en-ru.jsonl points at exactly the same path/lines as ru.jsonl, and that the
en.jsonl target is the corresponding section of the English note: same
`permalink:` front-matter key as the Russian note, same kind of section (prelude
vs heading), same heading level and position among the note's H1-H3 headings, and
-- where vault-ru/headings.txt has a translation entry -- a heading pair that
matches that translation table.
Finally it prints counts per split / kind / top-level folder.  Exit code 1 on any
error.  --show prints the first line of every target section.
"""

import argparse
import collections
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"ru.jsonl": "ru", "en-ru.jsonl": "ru", "en.jsonl": "en"}
LANG = {"ru.jsonl": "ru", "en-ru.jsonl": "en", "en.jsonl": "en"}
FIELDS = ["id", "lang", "question", "path", "line_start", "line_end", "kind"]
OPTIONAL = ["split", "spans"]  # split: round 1's dev/test (v001-v080); spans: see README
KINDS = {"paraphrase", "exact", "title"}
SPLITS = {"dev", "test"}
# Questions the vault does not answer (confidence should be `none`): id, lang, question.
NONE_FILES = {"none-en.jsonl": "en", "none-ru.jsonl": "ru"}
LONG_NOTE = 150  # lines: a note this long may have up to 10 questions, a shorter one 2

# The two halves of every set: a seeded hash of the question id, fixed before any tuning.
SEED = "obsidian-help-2026"


def half(qid):
    """'tune' or 'held-back': the parity of blake2b(SEED + id)."""
    h = hashlib.blake2b((SEED + qid).encode("utf-8"), digest_size=8).digest()
    return "tune" if int.from_bytes(h, "big") % 2 == 0 else "held-back"


def spans_of(row):
    """Every answer span of a row: [(path, line_start, line_end)]."""
    if "spans" in row:
        return [(s["path"], s["line_start"], s["line_end"]) for s in row["spans"]]
    return [(row["path"], row["line_start"], row["line_end"])]


# CommonMark-ish: up to 3 spaces, 1-6 '#', then space/tab or end of line.
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


class Note:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()  # trailing newline does not start a new line
        self.n = len(self.lines)
        self.fm_end = 0  # last line of YAML front matter (0 = none)
        self.props = {}
        if self.lines and self.lines[0].strip() == "---":
            for i in range(1, self.n):
                if self.lines[i].strip() == "---":
                    self.fm_end = i + 1
                    break
            for l in self.lines[1 : self.fm_end - 1]:
                m = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", l)
                if m:
                    self.props[m.group(1)] = m.group(2).strip()
        self.heads = []  # (line, level, text) for H1-H3
        self.fenced_lines = set()
        fence = None
        for no, line in enumerate(self.lines, 1):
            if no <= self.fm_end:
                continue
            m = FENCE.match(line)
            if fence is None:
                if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                    fence = (m.group(1)[0], len(m.group(1)))
                    self.fenced_lines.add(no)
                    continue
            else:
                self.fenced_lines.add(no)
                if (
                    m
                    and m.group(1)[0] == fence[0]
                    and len(m.group(1)) >= fence[1]
                    and not m.group(2).strip()
                ):
                    fence = None
                continue
            h = ATX.match(line)
            if h and len(h.group(1)) <= 3:
                self.heads.append((no, len(h.group(1)), (h.group(2) or "").strip()))
        self.body_start = self.fm_end + 1
        while self.body_start <= self.n and not self.lines[self.body_start - 1].strip():
            self.body_start += 1

    def run_of(self, start, end):
        """[(heading_index or None, level)] of the adjacent sections that start at `start`
        and end exactly at `end`; raise ValueError when they do not."""
        out = []
        while True:
            stop, hi, lvl = self.section_of(start)
            out.append((hi, lvl))
            if stop == end:
                return out
            if stop > end or len(out) > 20:
                raise ValueError("lines %d-%d are not a run of whole sections" % (start, end))
            start = stop + 1

    def section_of(self, start):
        """Return (end, heading_index or None, level or 0) for a valid start, else raise."""
        starts = [h[0] for h in self.heads]
        if start in starts:
            i = starts.index(start)
            lvl = self.heads[i][1]
            for h in self.heads[i + 1 :]:
                if h[1] <= lvl:
                    return h[0] - 1, i, lvl
            return self.n, i, lvl
        first_head = self.heads[0][0] if self.heads else self.n + 1
        if start == self.body_start and start < first_head:
            return first_head - 1, None, 0
        if start == 1 and self.fm_end == 0 and start < first_head:
            return first_head - 1, None, 0
        raise ValueError(
            "line %d is neither a H1-H3 heading nor the first body line (%d) of a prelude"
            % (start, self.body_start)
        )


def load_translations(vault_ru):
    """headings.txt: [heading.<prefix>/<English>] original=... translation=...  -> set of (en, ru)."""
    pairs = set()
    p = os.path.join(vault_ru, "headings.txt")
    if not os.path.exists(p):
        return pairs
    orig = None
    for line in open(p, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("original="):
            orig = line[len("original=") :].strip()
        elif line.startswith("translation=") and orig is not None:
            pairs.add((orig, line[len("translation=") :].strip()))
            orig = None
    return pairs


EMBED = re.compile(r"!\[\[([^\]|]+?)(?:\|[^\]]*)?\]\]")


def transclusions(vault, note):
    """Map note path -> [(embedding note, line, lo, hi)] for every ![[Note#Heading]] or ![[Note#^id]]
    (outside code fences) that resolves to a line range of another note of the vault."""
    by_name = {}
    for dp, _, fn in os.walk(vault):
        for f in fn:
            if f.endswith(".md"):
                rel = os.path.relpath(os.path.join(dp, f), vault).replace(os.sep, "/")
                by_name.setdefault(f[:-3].lower(), []).append(rel)
                by_name.setdefault(rel[:-3].lower(), []).append(rel)
    out = {}
    for dp, _, fn in os.walk(vault):
        for f in fn:
            if not f.endswith(".md"):
                continue
            src = os.path.relpath(os.path.join(dp, f), vault).replace(os.sep, "/")
            s = Note(os.path.join(vault, src))
            fenced = s.fenced_lines
            for no, line in enumerate(s.lines, 1):
                if no <= s.fm_end or no in fenced:
                    continue
                for m in EMBED.finditer(line):
                    target = m.group(1)
                    if "#" not in target:
                        continue
                    name, anchor = target.split("#", 1)
                    cands = by_name.get(name.strip().lower(), [])
                    if len(cands) != 1:
                        continue
                    t = Note(os.path.join(vault, cands[0]))
                    anchor = anchor.split("#")[-1].strip()
                    lo = hi = None
                    if anchor.startswith("^"):
                        bid = anchor[1:]
                        for i, l in enumerate(t.lines, 1):
                            if re.search(r"(^|\s|\])\^" + re.escape(bid) + r"\s*$", l):
                                # the block: this line back to the previous blank line
                                lo = i
                                while lo > 1 and t.lines[lo - 2].strip():
                                    lo -= 1
                                if t.lines[i - 1].strip() == "^" + bid and lo == i and i > 1:
                                    lo = i - 1
                                    while lo > 1 and t.lines[lo - 2].strip():
                                        lo -= 1
                                hi = i
                                break
                    else:
                        for hl, _lvl, txt in t.heads:
                            if norm_heading(txt) == norm_heading(anchor):
                                lo = hl
                                hi = t.section_of(hl)[0]
                                break
                    if lo is not None:
                        out.setdefault(cands[0], []).append((src, no, lo, hi))
    return out


def norm_heading(t):
    return re.sub(r"\s+", " ", t.strip().strip("`")).lower()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault-ru", default=os.path.join(HERE, "..", "vault-ru"))
    ap.add_argument("--vault-en", default=os.path.join(HERE, "..", "vault-en"))
    ap.add_argument("--dir", default=HERE, help="directory holding the qrels files")
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args()
    vaults = {"ru": a.vault_ru, "en": a.vault_en}
    errors = []
    notes = {}

    def note(vault, rel):
        key = (vault, rel)
        if key not in notes:
            notes[key] = Note(os.path.join(vaults[vault], rel))
        return notes[key]

    data = {}
    for fname, vault in FILES.items():
        fp = os.path.join(a.dir, fname)
        if not os.path.exists(fp):
            errors.append(f"{fname}: missing")
            continue
        rows = []
        for ln, raw in enumerate(open(fp, encoding="utf-8"), 1):
            if not raw.strip():
                continue
            try:
                r = json.loads(raw)
            except ValueError as e:
                errors.append("%s:%d: bad JSON (%s)" % (fname, ln, e))
                continue
            where = "{}:{}".format(fname, r.get("id", "line %d" % ln))
            extra = set(r) - set(FIELDS)
            if not set(FIELDS) <= set(r) or not extra <= set(OPTIONAL):
                errors.append(f"{where}: fields {sorted(r)}: need {FIELDS}, may have {OPTIONAL}")
                continue
            if r["lang"] != LANG[fname]:
                errors.append("{}: lang {!r}, expected {!r}".format(where, r["lang"], LANG[fname]))
            if r["kind"] not in KINDS or r.get("split", "dev") not in SPLITS:
                errors.append(
                    "{}: bad kind/split {!r}/{!r}".format(where, r["kind"], r.get("split"))
                )
            if not isinstance(r["question"], str) or len(r["question"].strip()) < 10:
                errors.append(f"{where}: empty question")
            if not re.fullmatch(r"v\d{3}", str(r["id"])):
                errors.append(f"{where}: bad id")
            if "spans" in r:
                sp = r["spans"]
                if not (
                    isinstance(sp, list)
                    and sp
                    and all(
                        isinstance(x, dict) and sorted(x) == ["line_end", "line_start", "path"]
                        for x in sp
                    )
                ):
                    errors.append(
                        f"{where}: spans must be a list of {{path, line_start, line_end}}"
                    )
                    continue
                if (sp[0]["path"], sp[0]["line_start"], sp[0]["line_end"]) != (
                    r["path"],
                    r["line_start"],
                    r["line_end"],
                ):
                    errors.append(f"{where}: spans[0] must be the row's path/line_start/line_end")
            r["_runs"] = []
            for path, s, e in spans_of(r):
                if "\\" in path or path.startswith("/"):
                    errors.append(f"{where}: path must be relative posix")
                    break
                full = os.path.join(vaults[vault], path)
                if not os.path.isfile(full):
                    errors.append(f"{where}: file not found in vault-{vault}: {path}")
                    break
                nt = note(vault, path)
                if not (isinstance(s, int) and isinstance(e, int) and 1 <= s <= e <= nt.n):
                    errors.append("%s: range %r-%r outside 1..%d" % (where, s, e, nt.n))
                    break
                try:
                    run = nt.run_of(s, e) if "spans" in r else None
                    if run is None:  # a row without spans: exactly one section
                        want_end, hi, lvl = nt.section_of(s)
                        if e != want_end:
                            raise ValueError(
                                "line_end %d, section actually ends at %d" % (e, want_end)
                            )
                        run = [(hi, lvl)]
                except ValueError as ex:
                    errors.append(f"{where}: {ex} ({path}:{s}-{e})")
                    break
                r["_runs"].append((path, run))
                if a.show:
                    print("%s %s:%d-%d | %s" % (where, path, s, e, nt.lines[s - 1][:90]))
            else:
                if "spans" in r and len(r["_runs"]) == 1 and len(r["_runs"][0][1]) == 1:
                    errors.append(f"{where}: spans holds one single section: drop spans")
                r["_hi"], r["_lvl"] = r["_runs"][0][1][0]
                rows.append(r)
        ids = [r["id"] for r in rows]
        for i, c in collections.Counter(ids).items():
            if c > 1:
                errors.append(f"{fname}: duplicate id {i}")
        for p, c in collections.Counter(r["path"] for r in rows).items():
            most = 10 if note(vault, p).n >= LONG_NOTE else 2
            if c > most:
                errors.append("%s: %d questions on one note (max %d): %s" % (fname, c, most, p))
        data[fname] = {r["id"]: r for r in rows}

    # ---- unanswerable questions ----
    none_ids = {}
    for fname, lang in NONE_FILES.items():
        fp = os.path.join(a.dir, fname)
        if not os.path.exists(fp):
            errors.append(f"{fname}: missing")
            continue
        got = [json.loads(x) for x in open(fp, encoding="utf-8") if x.strip()]
        for r in got:
            if sorted(r) != ["id", "lang", "question"] or r["lang"] != lang:
                errors.append(f"{fname}: bad row {r}")
            elif not re.fullmatch(r"n\d{3}", r["id"]) or len(r["question"].strip()) < 10:
                errors.append(f"{fname}: bad id or question {r}")
        none_ids[fname] = [r.get("id") for r in got]
        if len(set(none_ids[fname])) != len(got):
            errors.append(f"{fname}: duplicate ids")
    if len(set(map(tuple, none_ids.values()))) > 1:
        errors.append("none-en.jsonl and none-ru.jsonl have different ids")
    for fname, ids in none_ids.items():
        c = collections.Counter(half(i) for i in ids)
        print("%s: %d questions, halves %s" % (fname, len(ids), dict(sorted(c.items()))))

    # ---- cross-file consistency ----
    if len(data) == 3:
        ru, enru, en = data["ru.jsonl"], data["en-ru.jsonl"], data["en.jsonl"]
        if not (set(ru) == set(enru) == set(en)):
            errors.append("id sets differ between files")
        pairs = load_translations(a.vault_ru)
        pair_norm = {(norm_heading(x), norm_heading(y)) for x, y in pairs}
        en_originals = {norm_heading(x) for x, _ in pairs}
        checked_pairs = 0
        for qid in sorted(set(ru) & set(enru) & set(en)):
            r, m, g = ru[qid], enru[qid], en[qid]
            for k in ("split", "kind"):
                if not (r.get(k) == m.get(k) == g.get(k)):
                    errors.append(f"{qid}: {k} differs across files")
            if spans_of(r) != spans_of(m):
                errors.append(f"{qid}: en-ru.jsonl target differs from ru.jsonl")
            if r["question"].strip() == m["question"].strip():
                errors.append(f"{qid}: en-ru question is not translated")
            if m["question"] != g["question"]:
                errors.append(f"{qid}: en.jsonl and en-ru.jsonl questions differ")
            if len(r["_runs"]) != len(g["_runs"]):
                errors.append(f"{qid}: ru and en have different numbers of spans")
                continue
            for (rp, rrun), (gp, grun) in zip(r["_runs"], g["_runs"], strict=True):
                nr, ne = note("ru", rp), note("en", gp)
                pr, pe = nr.props.get("permalink"), ne.props.get("permalink")
                if not pr or pr != pe:
                    errors.append(f"{qid}: permalink mismatch ru={pr!r} en={pe!r} ({rp} | {gp})")
                if len(rrun) != len(grun):
                    errors.append(
                        f"{qid}: a span covers {len(rrun)} sections in ru, {len(grun)} in en"
                    )
                    continue
                for (rhi, rlvl), (ghi, glvl) in zip(rrun, grun, strict=True):
                    if (rhi is None) != (ghi is None):
                        errors.append(f"{qid}: one target is a prelude, the other a heading")
                        continue
                    if rhi is None:
                        continue
                    if rhi != ghi or rlvl != glvl:
                        errors.append(
                            "%s: heading position/level differ (ru #%d H%d, en #%d H%d)"
                            % (qid, rhi, rlvl, ghi, glvl)
                        )
                    hr = nr.heads[rhi][2]
                    he = ne.heads[ghi][2]
                    code = he.strip() == hr.strip() and he.strip().startswith("`")
                    if norm_heading(he) in en_originals and not code:  # code names: untranslated
                        checked_pairs += 1
                        if (norm_heading(he), norm_heading(hr)) not in pair_norm:
                            errors.append(
                                f"{qid}: heading pair not in headings.txt: en {he!r} / ru {hr!r}"
                            )
        print("heading pairs confirmed by vault-ru/headings.txt: %d" % checked_pairs)

    # ---- warnings: target text transcluded into another note (![[Note#Heading]] / ![[Note#^block]]) ----
    warnings = []
    for fname, vault in FILES.items():
        if fname not in data:
            continue
        emb = transclusions(vaults[vault], note)
        for r in data[fname].values():
            for path, s, e in spans_of(r):
                for src, src_line, lo, hi in emb.get(path, []):
                    if lo <= e and s <= hi:
                        warnings.append(
                            "%s:%s: target %s:%d-%d is transcluded into %s:%d"
                            % (fname, r["id"], path, s, e, src, src_line)
                        )

    # ---- report ----
    if "ru.jsonl" in data:
        rows = list(data["ru.jsonl"].values())
        print("questions: %d (ru.jsonl), notes: %d" % (len(rows), len({r["path"] for r in rows})))
        c = collections.Counter(r["kind"] for r in rows)
        print("kind:   " + ", ".join("%s=%d" % kv for kv in sorted(c.items())))
        c = collections.Counter(half(r["id"]) for r in rows)
        print("halves: " + ", ".join("%s=%d" % kv for kv in sorted(c.items())))
        c = collections.Counter((r["kind"], half(r["id"])) for r in rows)
        print(
            "kind x half: " + ", ".join("%s/%s=%d" % (k, s, n) for (k, s), n in sorted(c.items()))
        )
        old = [r for r in rows if "split" in r]
        c = collections.Counter(r["split"] for r in old)
        print(
            "round-1 split (%d rows): %s"
            % (len(old), ", ".join("%s=%d" % kv for kv in sorted(c.items())))
        )
        multi = [r for r in rows if "spans" in r]
        print(
            "several sections: %d (%d in two notes); on notes of %d+ lines: %d"
            % (
                len(multi),
                sum(len({p for p, _, _ in spans_of(r)}) > 1 for r in multi),
                LONG_NOTE,
                sum(note("ru", r["path"]).n >= LONG_NOTE for r in rows),
            )
        )
        top = collections.Counter(
            r["path"].split("/")[0] if "/" in r["path"] else "(root)" for r in rows
        )
        print("per top-level folder (vault-ru):")
        for f, n in sorted(top.items(), key=lambda x: (-x[1], x[0])):
            print("  %3d  %s" % (n, f))
    if "en.jsonl" in data:
        top = collections.Counter(
            r["path"].split("/")[0] if "/" in r["path"] else "(root)"
            for r in data["en.jsonl"].values()
        )
        print(
            "per top-level folder (vault-en): "
            + ", ".join("%s=%d" % kv for kv in sorted(top.items()))
        )
    for fname in FILES:
        if fname in data:
            print(
                "%-12s %d rows, per-file checks %s"
                % (
                    fname,
                    len(data[fname]),
                    "have errors" if any(e.startswith(fname) for e in errors) else "OK",
                )
            )
    for w in warnings:
        print("WARNING " + w)
    if errors:
        print("\nERRORS (%d):" % len(errors))
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("ALL CHECKS PASSED")


if __name__ == "__main__":
    main()
