"""Whether a change to the markdown code changes what memo reads of real notes: the chunks
(text, heading path, line), title, tags, warnings, dropped lines, links, the reading, block
and heading targets (`locate`) and the note page's lines, of every note under the folders,
as `REV` (a git revision) reads them against the working tree. Read only: nothing is indexed.

    python bench/same_reading.py HEAD~1 examples/notes ../shared/eval/xquad-dev-distract/ru

Prints each difference, then `N notes, M chunks, K differences`; exits 1 on a difference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dump(folders: list[str]) -> None:
    """One JSON line per note and budget: what the memo on sys.path reads of it."""
    from memo.collection.chunker import chunk_note, decode, readable
    from memo.embed.tokens import estimate_tokens
    try:  # where it lives since issue 49 item 1; a revision before it kept it in library/
        from memo.collection.markdown import locate
    except ImportError:
        from memo.library.related import locate  # type: ignore[attr-defined,no-redef]
    from memo.server.web.source import source_lines

    for folder in folders:
        for p in sorted(Path(folder).rglob("*.md")):
            text = decode(p.read_bytes())[0]
            lines = text.split("\n")
            rec: dict[str, object] = {"path": str(p), "reading": readable(text)}
            for budget in (400, 60):  # a small budget splits sections: their lines count too
                note = chunk_note(text, estimate_tokens, budget=budget, name=p.stem)
                rec[f"chunks {budget}"] = [[c.heading, c.line, c.text] for c in note.chunks]
            rec |= {"title": note.title, "tags": note.tags, "warnings": note.warnings}
            rec["dropped"] = note.dropped
            rec["links"] = [[x.line, x.kind, x.target, x.sub] for x in note.links.links]
            rec["locate"] = {x.sub: locate(lines, x.sub) for x in note.links.links if x.sub}
            page = source_lines(lines, 1, frozenset())
            rec["page"] = [[str(x.text), x.kind, x.why] for x in page]
            print(json.dumps(rec, ensure_ascii=False))


def read_with(src: Path, folders: list[str]) -> list[dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, __file__, "--dump", *folders], env=env, check=True, capture_output=True
    ).stdout
    return [json.loads(line) for line in out.decode().splitlines()]


def main(rev: str, folders: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        before = read_with(Path(tmp) / "src", folders)
    after = read_with(ROOT / "src", folders)
    differences = 0
    for old, new in zip(before, after, strict=True):
        for key, value in old.items():
            if new.get(key) != value:
                differences += 1
                print(f"{old['path']} {key}:\n  {rev}: {value}\n  now: {new.get(key)}")
    chunks = sum(len(x["chunks 400"]) for x in after)  # type: ignore[arg-type]
    print(f"{len(after)} notes, {chunks} chunks, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"]:
        dump(sys.argv[2:])
    elif len(sys.argv) < 3:
        sys.exit(__doc__)
    else:
        sys.exit(main(sys.argv[1], sys.argv[2:]))
