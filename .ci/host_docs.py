"""The host configuration blocks of docs/agents.md, as CI checks them.

A block is a fenced code block right after a `<!-- check: NAME -->` comment. The docs write
paths a reader replaces with their own; `localize` puts this machine's in their place, and
nothing else changes, so what CI runs is the block as documented:

    /home/me/.local/bin/memo        the memo executable (`which memo`)
    /home/me/notes/memo             the library root
    /home/me/.cache/memo/indexes    MEMO_INDEX_DIR
    127.0.0.1:8765                  where `memo serve` listens

Used by .ci/hosts_probe.py (each host's own loader) and tests/test_hosts.py (the shapes).
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "agents.md"
MEMO = "/home/me/.local/bin/memo"
ROOT = "/home/me/notes/memo"
INDEX_DIR = "/home/me/.cache/memo/indexes"
ADDRESS = "127.0.0.1:8765"

# Every block the docs must hold, and its language.
EXPECTED = {
    "hermes-stdio": "yaml",
    "hermes-http": "yaml",
    "hermes-discovery": "yaml",
    "hermes-test": "sh",
    "hermes-skill": "sh",
    "claude-add": "sh",
    "claude-mcp-json": "json",
    "claude-http": "sh",
    "claude-timeout": "sh",
    "codex-stdio": "toml",
    "codex-http": "toml",
    "cursor-stdio": "json",
    "cursor-http": "json",
}

_BLOCK = re.compile(
    r"<!-- check: (?P<name>[\w-]+) -->\s*\n```(?P<lang>\w+)\n(?P<body>.*?)\n```", re.S
)


def blocks(text: str | None = None) -> dict[str, tuple[str, str]]:
    """name -> (language, body) for every checked block; a name used twice is an error."""
    text = DOC.read_text(encoding="utf-8") if text is None else text
    out: dict[str, tuple[str, str]] = {}
    for m in _BLOCK.finditer(text):
        if m["name"] in out:
            raise ValueError(f"docs/agents.md: two blocks named {m['name']}")
        out[m["name"]] = (m["lang"], m["body"])
    return out


def localize(body: str, memo: str, root: str, index_dir: str, address: str) -> str:
    """The block with this machine's paths and address in place of the documented ones."""
    for old, new in ((MEMO, memo), (INDEX_DIR, index_dir), (ROOT, root), (ADDRESS, address)):
        body = body.replace(old, new)
    return body
