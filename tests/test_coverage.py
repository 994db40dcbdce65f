"""Every line of a note is indexed or accounted for (issue 31, item 1).

Two checks that do not trust each other: the chunker's own report (`Note.dropped`: no line
LOST), and words written into generated notes — every word a reader of the note sees is in
some chunk, and every word inside a comment is in none. On generated markdown (hypothesis),
on the fixture vault, on the example library and on every note of ../shared/eval.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memo.collection.chunker import LOST, chunk_note, decode
from memo.embed.tokens import estimate_tokens

from .vault import NOTES

SHARED = Path(os.environ.get("MEMO_SHARED", Path(__file__).resolve().parents[2] / "shared"))
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _all_text(note) -> str:
    return "\n".join(f"{c.heading}\n{c.text}" for c in note.chunks)


def _check(text: str, name: str = "note") -> None:
    note = chunk_note(text, estimate_tokens, budget=120, name=name)
    assert note.lost == 0, [d for d in note.dropped if d[2] == LOST]
    return note


# ---------------------------------------------------------------- generated notes
_counter = itertools.count()


def _word(kind: str) -> str:
    return f"{kind}{next(_counter)}x"


@st.composite
def _line(draw) -> tuple[str, list[str], list[str]]:
    """One line of a note: (text, words a reader sees, words hidden in a comment)."""
    v, h = _word("vis"), _word("hid")
    kind = draw(
        st.sampled_from(
            [
                "prose",
                "code_pct",
                "code_link",
                "link",
                "alias",
                "comment",
                "heading",
                "callout",
                "embed",
                "blockid",
                "math_pct",
                "blank",
                "tag",
                "quote",
                "sentences",
            ]
        )
    )
    if kind == "prose":
        return f"Plain words {v} here.", [v], []
    if kind == "code_pct":  # the bug of issue 31: %% in inline code opened a comment
        return f"Characters `# | ^ : %% [[ ]]` and {v} after.", [v], []
    if kind == "code_link":
        return f"Write `[[Note#{v}]]` to link.", [v], []
    if kind == "link":
        return f"See [[{v}]] too.", [v], []
    if kind == "alias":
        return f"See [[Target|{v}]].", [v], []
    if kind == "comment":
        return f"Text {v} %% {h} %% more.", [v], [h]
    if kind == "heading":
        return f"{'#' * draw(st.integers(1, 4))} Head {v}", [v], []
    if kind == "callout":
        return f"> [!tip] Title {v}", [v], []
    if kind == "embed":
        return "![[picture.png]]", [], []
    if kind == "blockid":
        return f"Block text {v} ^blk{next(_counter)}", [v], []
    if kind == "math_pct":
        return f"A share of $50%% + x$ and {v}.", [v], []
    if kind == "tag":
        return f"Tagged {v} #topic/sub", [v], []
    if kind == "quote":
        return f"> quoted {v}", [v], []
    if kind == "sentences":
        return " ".join(f"Sentence {v} number {i} is here." for i in range(12)), [v], []
    return "", [], []


@st.composite
def _note(draw) -> tuple[str, list[str], list[str]]:
    lines = draw(st.lists(_line(), min_size=1, max_size=40))
    out: list[str] = []
    seen: list[str] = []
    hidden: list[str] = []
    fence = draw(st.booleans())
    for i, (text, v, h) in enumerate(lines):
        out.append(text)
        seen += v
        hidden += h
        if fence and i == len(lines) // 2:  # code keeps everything, %% and [[ included
            w = _word("vis")
            out += ["```", f"code %% {w} [[x]]", "```"]
            seen.append(w)
    if draw(st.booleans()):
        hid = _word("hid")
        out += ["%%", f"a block comment {hid}", "", "over lines", "%%"]
        hidden.append(hid)
    return "\n".join(out) + "\n", seen, hidden


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_note())
def test_every_word_a_reader_sees_is_in_a_chunk_and_comments_are_not(generated):
    text, seen, hidden = generated
    note = _check(text)
    everything = _all_text(note)
    found = set(re.findall(r"(?:vis|hid)\d+x", everything))
    assert [w for w in seen if w not in found] == []
    assert [w for w in hidden if w in found] == []


# ---------------------------------------------------------------- real notes
def test_the_fixture_vault_and_the_examples_lose_no_line():
    for rel, text in NOTES.items():
        _check(text, Path(rel).stem)
    for p in sorted(EXAMPLES.rglob("*.md")):
        _check(decode(p.read_bytes())[0], p.stem)


@pytest.mark.skipif(not (SHARED / "eval").is_dir(), reason="../shared/eval is not here")
def test_every_note_of_the_shared_eval_sets_loses_no_line():
    notes = sorted((SHARED / "eval").rglob("*.md"))
    assert len(notes) > 300
    for p in notes:
        _check(decode(p.read_bytes())[0], p.stem)
