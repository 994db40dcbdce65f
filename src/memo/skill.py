"""The writing-discipline skill: one text, generated from the registry, for every agent.

`memo skill` prints it, the MCP server offers it as a prompt, and `memo skill --hermes` adds the
frontmatter of a Hermes Agent skill file. Files rot from writing "anywhere", not from search: the
text says which topic goes to which collection and how to search before writing.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .library import Library

MAP_LIMIT = 200  # beyond this many collections the map lists top-level folders instead
MAIN_SHARE = 0.2  # a language holding this share of a collection's chunks is named in the map

# Hermes shows a skill's description cut at 60 characters (57 and "..."): the first 57 say
# what it is. `requires_toolsets` names the toolset Hermes registers for an MCP server called
# SERVER (`mcp-SERVER`), so the skill hides while memo is not connected.
HERMES_FRONTMATTER = """\
---
name: memo-notes
description: Search, read and file the user's notes with memo tools. Route a question, \
search a collection, read path:line; which topic goes where; search before writing.
metadata:
  hermes:
    requires_toolsets: [mcp-{server}]
---
"""
TOOLS = ("memo_route", "memo_search", "memo_get", "memo_status", "memo_reindex")

RULES = """\
## How to find something
1. Not sure which collection holds it? Call `memo_route(query)`: it runs the search over the
   collections and ranks them by their best hit, each shown with that hit (`path:line`,
   heading, a short excerpt) and its notes' language: often that hit is already your answer.
   Otherwise call `memo_search(path=<the collection's path>, query=...)`; if its hits do not
   answer either, search the first three at once with `memo_search(path=".", query=...,
   route=3)`.
2. Every search and route, add your own words in the notes' language (the map says which):
   `also` (up to three phrasings: a translation, the notes' own terms), `answer` (one likely
   answer, 1-3 sentences, as a note would say it) and, when the question names something
   exact (a name, a code, a command), `keywords`. E.g. for Russian notes:
   `memo_search(path=".", query="how do I pin a tab", also=["как закрепить вкладку"],
   answer="Вкладку закрепляют командой «Закрепить» в её меню.", keywords=["Pin"])`.
   memo fuses them into one ranking and one confidence.
3. Each hit is `path:line` with a heading, a short text, and a `cite` hash. Read the note at that
   line with your own file tools (or `memo_get(path, line, lines)`) and answer from what you read.
4. `confidence: none` means no good match: say the notes don't have it; don't guess from the
   nearest hits. `low` means read carefully before trusting.
5. If `memo_get` returns a different `cite` than the hit, the note changed since the search:
   quote the new text, not the hit's.

## How to write
- Search the collection before writing: if a note already covers the topic, update that note.
  One fact lives in one note, one note in one place; never copy a note into another collection.
- Not sure where something goes? Append it to `inbox.md` at the library root (drafts; never
  indexed) and tell the user.
- A new topic = a new folder with a `_meta.yaml` holding a one-line description:
  `memo new <folder> --description "..." --tags a,b`. It then shows up in this map.
- Notes are plain markdown: one `#`/`##` heading per section (search answers by section),
  lowercase ASCII file names (`kafka-consumer-lag.md`), abbreviations written out once
  ("PBR (policy based routing)").
- Write the files with your own tools; memo indexes them by itself. Never touch `.memo/`
  folders or `_registry.yaml`: they are caches.

CLI equivalents: `memo route QUERY`, `memo search PATH QUERY --also ... --answer ... --keywords
...`, `memo show PATH:LINE`.
"""


def skill_text(lib: Library, hermes: bool = False, server: str = "memo") -> str:
    """The skill. `hermes`: with a Hermes skill file's frontmatter, and the tools named as
    Hermes shows them to the model (`mcp__<server>__memo_search`, `server` being the name of
    memo's entry in the host's MCP config)."""
    colls = sorted(lib.collections(), key=lambda c: c.rel)
    out = [HERMES_FRONTMATTER.format(server=server)] if hermes else []
    out.append("# memo: the user's notes library\n")
    out.append(
        f"Notes are markdown files under `{lib.root}`, one topic per folder (a collection, "
        "described by its `_meta.yaml`). memo indexes them and answers with `path:line`; you "
        "read and write the files.\n"
    )
    out.append("## Where things go (topic → collection)\n")
    if not colls:
        out.append("No collections yet: create one with `memo new <folder> --description ...`.\n")
    elif len(colls) <= MAP_LIMIT:
        langs = _languages(lib)
        for c in colls:
            tags = f" [{', '.join(c.meta.tags)}]" if c.meta.tags else ""
            desc = " ".join(c.meta.description.split()) or "(no description: add one)"
            said = langs.get(c.rel)
            lang = f" (notes in {said}: {_names(said)})" if said else ""
            out.append(f"- `{c.rel}` — {desc}{tags}{lang}")
        out.append("")
    else:
        tops = Counter(c.rel.split("/")[0] for c in colls)
        out.append(
            f"{len(colls)} collections: too many to list; call `memo_route(query)` to find one. "
            "Top-level folders:"
        )
        out += [f"- `{top}/` — {n} collections" for top, n in sorted(tops.items())]
        out.append("")
    rules = with_naming(lib, RULES)
    if hermes:
        prefix = "mcp__" + "".join(c if c.isalnum() or c == "_" else "_" for c in server) + "__"
        for name in TOOLS:
            rules = rules.replace(f"`{name}", f"`{prefix}{name}")
    else:
        rules += (
            "\nHosts may show the tools under a prefix: `mcp__memo__memo_search` in Hermes and "
            "Claude Code, namespace `mcp__memo` in Codex.\n"
        )
    out.append(rules)
    return "\n".join(out)


def with_naming(lib: Library, rules: str) -> str:
    """The rules with the library's own naming (library/naming.py) in place of memo's slugs:
    an adopted vault's notes are `Title Case words separated by spaces`, and the agent is told
    so (issue 50, item 6)."""
    from .library.naming import SLUG_RULE, read

    return rules.replace(SLUG_RULE, read(lib.root).rule())


def _names(codes: str) -> str:
    """ "zh, en" -> "Chinese, English": what the agent writes `also` and `answer` in (the
    identifier's module loads only for a map to name)."""
    from .collection.langid import name

    return ", ".join(name(c.strip()) for c in codes.split(","))


def _languages(lib: Library) -> dict[str, str]:
    """Each indexed collection's languages as the map names them (`named_languages`), from
    the registry (no index is opened)."""
    out = {}
    for e in lib.registry.ok_entries():
        if named := named_languages(e.language_shares()):
            out[e.path] = named
    return out


def named_languages(shares: dict[str, float]) -> str:
    """The languages a collection's notes are written in, as the route map and the skill name
    them: each holding at least a fifth of its chunks, largest first ("ru", "ru, en"). Chunks
    of no one alphabet ("mixed": prose around code and names) are named only when no language
    is."""
    ranked = sorted(shares.items(), key=lambda x: -x[1])
    named = [lang for lang, share in ranked if share >= MAIN_SHARE and lang != "mixed"]
    return ", ".join(named) or ("mixed" if shares.get("mixed", 0) >= MAIN_SHARE else "")
