"""What `memo related` costs, warm, in-process (issue 45's target: p50 <= 50 ms).

Indexes a library (a copy of a vault, or of the example library), asks `Library.related` once
for every note to warm the caches (each index's vectors and the link resolver), then times
`rounds` passes over the notes, in a shuffled order, and prints p50 / p90 / max, each part's
size (links, backlinks, similar) and the load average. Each call catches the whole library up
first, as every read does.

    python bench/related.py --vault /path/to/obsidian-help/ru   # a copy is made and indexed
    python bench/related.py --root LIBRARY                        # a library as it is
    python bench/related.py --smoke
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from judged import load_average, smoke_args  # bench/ is on sys.path when run as a script

from memo.library import Library
from memo.library.adopt import plan

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"


def library_of(args: argparse.Namespace, scratch: Path) -> Path:
    """The library to measure: --root as it is; a copy of --vault adopted as `memo init`
    would; or, for --smoke, a copy of the example library with a link between two notes."""
    if args.root:
        return Path(args.root)
    root = scratch / "lib"
    if args.vault:
        for src in args.vault:
            shutil.copytree(src, root / Path(src).name, ignore=shutil.ignore_patterns(".memo"))
        from memo.config import Settings

        plan(root, Settings()).write(Settings())
        return root
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    with (root / "work" / "networking" / "pbr.md").open("a", encoding="utf-8") as f:
        f.write("\nSee [[vlan]] for tagging.\n")
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", nargs="*", help="folders of notes to copy and adopt")
    ap.add_argument("--root", help="a library to measure as it is (indexed first)")
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over every note")
    ap.add_argument("--k", type=int, default=8, help="similar notes asked for")
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.vault, args.root = 1, None, None
    with tempfile.TemporaryDirectory() as tmp:
        root = library_of(args, Path(tmp))
        with Library.from_env(root) as lib:
            t0 = time.perf_counter()
            lib.index()
            print(f"indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            notes = sorted(
                c.root_path(p.relative_to(c.folder).as_posix())
                for c in lib.collections()
                for p in c.folder.rglob("*.md")
                if ".memo" not in p.parts
            )
            sizes = [lib.related(n, k=args.k) for n in notes]  # warm: vectors, resolver
            times = []
            for _ in range(args.rounds):
                random.shuffle(notes)
                for n in notes:
                    t = time.perf_counter()
                    lib.related(n, k=args.k)
                    times.append((time.perf_counter() - t) * 1000)
    times.sort()
    p90 = times[int(0.9 * (len(times) - 1))]
    parts = {name: sum(len(getattr(r, name)) for r in sizes) for name in ("links", "backlinks")}
    print(
        f"memo related: {len(notes)} notes x {args.rounds} rounds, p50 "
        f"{statistics.median(times):.1f} ms, p90 {p90:.1f} ms, max {times[-1]:.1f} ms; "
        f"{parts['links']} links, {parts['backlinks']} backlinks, "
        f"{sum(len(r.similar) for r in sizes)} similar; load {load_average()}"
    )


if __name__ == "__main__":
    main()
