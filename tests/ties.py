"""A library of near ties (issue 50): two collections of near-duplicate notes, and twins.

Each note says how to do one thing to one part of the app on one system, in the same few
sentences, so a question about the configuration folder matches well over a hundred chunks by
nearly the same words and nearly the same meaning: the lexical leg has more candidates than a
search reads (fusion.CANDIDATES), the fused scores lie close together, and a ranking read at
another depth, or a question embedded by another engine, reorders them. The twins are one
note written three times, older to newer, in the order an index reads them: equal scores, so
only the tie-break (the newer file first) orders them.
"""

from __future__ import annotations

import os
from pathlib import Path

TOPICS = [
    "configuration folder",
    "settings file",
    "plugin folder",
    "theme snippet",
    "sync vault",
    "hotkey",
    "daily note",
    "template folder",
    "attachment folder",
    "graph view",
]
VERBS = ["change", "move", "open", "reset", "hide", "find", "rename", "back up"]
PLACES = ["on Windows", "on macOS", "on Linux", "on Android", "on iOS", "in a shared vault"]
COLLECTIONS = ("help", "forum")
TWINS = ("twin-a.md", "twin-b.md", "twin-c.md")  # in help/, oldest first
TWIN = (
    "# Where the configuration folder is kept\n\n"
    "The configuration folder of a vault is .obsidian, kept at the top of the vault folder.\n"
)
QUESTIONS = [
    "how do I change the configuration folder",
    "where is the configuration folder kept",
    "reset a hotkey on macOS",
    "move the plugin folder on Linux",
]
WORDS = {"also": ["settings folder location"], "keywords": [".obsidian"]}


def note(i: int, c: int) -> str:
    topic = TOPICS[(i + c) % len(TOPICS)]
    verb = VERBS[i % len(VERBS)]
    place = PLACES[(i // 3) % len(PLACES)]
    return (
        f"# How to {verb} the {topic} {place}\n\n"
        f"To {verb} the {topic} {place}, open Settings and look for the {topic} section.\n\n"
        f"## Notes {i % 4}\n\n"
        f"The {topic} lives in the vault. You can {verb} it {place} from the app. "
        "The configuration folder is .obsidian unless you changed it.\n"
    )


def write(root: Path, per_collection: int = 80) -> Path:
    """The library at `root` (made), unindexed."""
    for c, name in enumerate(COLLECTIONS):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "_meta.yaml").write_text(f"name: {name}\ndescription: notes of the {name}\n")
        for i in range(per_collection):
            (folder / f"{name}-{i:03d}.md").write_text(note(i, c))
    for age, twin in enumerate(TWINS):
        path = root / "help" / twin
        path.write_text(TWIN)
        when = 1_700_000_000 + 3600 * age
        os.utime(path, (when, when))
    return root


def paths(per_collection: int = 80) -> list[str]:
    """Every note `write` makes, as a library path."""
    made = [f"{c}/{c}-{i:03d}.md" for c in COLLECTIONS for i in range(per_collection)]
    return made + [f"help/{twin}" for twin in TWINS]
