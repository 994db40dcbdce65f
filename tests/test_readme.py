"""The README shows what memo prints (issue 15): every `$ memo …` line of its transcripts runs
on a copy of examples/notes and prints the lines shown, and the documented `--json` shapes
name exactly the keys memo prints."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")

pytestmark = pytest.mark.slow  # real `memo` processes with the model


def transcripts() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) for every `$ memo` line in a plain code block."""
    out: list[tuple[str, list[str]]] = []
    fence: str | None = None  # the open block's language ("" for a plain block)
    shown: list[str] | None = None  # the output lines of this block's last command
    for line in README.splitlines():
        if line.startswith("```"):
            fence, shown = (line[3:].strip() if fence is None else None), None
        elif fence == "" and line.startswith("$ memo "):
            shown = []
            out.append((line[2:], shown))
        elif shown is not None:
            shown.append(line)
    return out


SCORE = re.compile(r"\((\d+\.\d{4})\)$")  # a hit's or a collection's score ends its line


def normal(line: str) -> str:
    """Times differ run to run, and a hit's score in its last digits from one processor to
    another (`scores`); everything else must match."""
    return SCORE.sub("(<score>)", re.sub(r"\d+(\.\d+)? (s|ms)\b", "<t> \\2", line.rstrip()))


def scores(lines: list[str]) -> list[float]:
    """The scores the lines end with. The model's float kernels differ by processor (ONNX
    Runtime takes AVX-512 VNNI where it finds it, AVX2 elsewhere), which moves a cosine in
    its fifth decimal; a hybrid score is exp of standardised cosines, so that shows in its
    third (10.0805 on one machine, 10.1106 on another): the transcript is checked to 2%."""
    return [float(m.group(1)) for x in lines if (m := SCORE.search(x.rstrip()))]


PROGRESS = re.compile(r"^indexing (collection \d+/\d+, )?read \d+/\d+\+? notes")  # stderr, timed


def memo(cwd: Path, env: dict[str, str], command: str) -> list[str]:
    argv = shlex.split(command)
    assert argv[0] == "memo", command
    done = subprocess.run(
        [sys.executable, "-m", "memo", *argv[1:]],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # as a terminal shows them; click flushes every line
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout
    return [x for x in done.stdout.splitlines() if not PROGRESS.match(x)]


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    cwd = tmp_path_factory.mktemp("readme")
    shutil.copytree(REPO / "examples", cwd / "examples")
    env = {**os.environ, "MEMO_INDEX_DIR": str(cwd / "indexes")}
    for key in ("MEMO_ROOT", "MEMO_TOKEN", "MEMO_EMBEDDER", "MEMO_MODEL_DIR"):
        env.pop(key, None)  # the defaults a reader has
    env.pop("MEMO_EMBED_CACHE_MB", None)
    # a reader's first run: an empty embedding cache, the session's built model
    xdg = cwd / "xdg"
    (xdg / "memo").mkdir(parents=True)
    (xdg / "memo" / "models").symlink_to(Path(os.environ["XDG_CACHE_HOME"]) / "memo" / "models")
    env["XDG_CACHE_HOME"] = str(xdg)
    return cwd, env


def test_the_readme_has_a_transcript():
    commands = [c for c, _ in transcripts()]
    assert commands[:3] == [
        "memo index examples/notes",
        "memo index examples/notes",
        'memo search examples/notes "how to bake bread in a dutch oven" -k 2',
    ]


def test_every_transcript_prints_what_the_readme_shows(here):
    cwd, env = here
    shutil.rmtree(cwd / "indexes", ignore_errors=True)  # the transcript starts from nothing
    for command, shown in transcripts():
        got = memo(cwd, env, command)
        assert [normal(x) for x in got] == [normal(x) for x in shown], command
        assert scores(got) == pytest.approx(scores(shown), rel=0.02), command


def _documented(anchor: str) -> str:
    """The paragraph of the README that starts at `anchor`."""
    start = README.index(anchor)
    return README[start : README.index("\n\n", start)]


def _names(text: str) -> set[str]:
    return set(re.findall(r'"([a-z_]+)"', text))


def _outer(text: str) -> str:
    """`text` without what its brackets hold: the keys of this level only."""
    out, depth = [], 0
    for ch in text:
        depth -= ch == "]"
        if depth == 0:
            out.append(ch)
        depth += ch == "["
    return "".join(out)


def _inside(text: str, key: str) -> str:
    """What the bracket after `"key": [` holds."""
    start = text.index(f'"{key}": [') + len(f'"{key}": [')
    depth = 1
    for end in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end]
    raise AssertionError(f"unclosed bracket after {key}")


def test_search_json_has_the_documented_shape(here):
    cwd, env = here
    block = README[README.index("`memo search … --json`:") :]
    opened = block.index("```json") + len("```json")
    shown = json.loads(block[opened : block.index("```", opened)].replace("…", ""))
    got = json.loads(
        "\n".join(memo(cwd, env, 'memo search examples/notes "sourdough bread" --json'))
    )
    assert set(got) == set(shown)
    assert set(got["results"][0]) == set(shown["results"][0])
    assert set(got["freshness"][0]) == set(shown["freshness"][0])
    routed = json.loads(
        "\n".join(memo(cwd, env, 'memo search examples/notes "vlan" --route 1 --json'))
    )
    assert set(routed) - set(got) == {"routed"}  # as the README says under the shape


def test_index_and_status_json_name_every_key(here):
    cwd, env = here
    index = json.loads("\n".join(memo(cwd, env, "memo index examples/notes --json")))
    doc = _documented("`memo index … --json`")
    assert set(index) == _names(_outer(doc))
    detail = _inside(doc, "collections_detail")  # "the same counters" and its own keys
    assert set(index["collections_detail"][0]) <= _names(_outer(detail)) | set(index)
    assert _names(_outer(detail)) <= set(index["collections_detail"][0])

    status = json.loads("\n".join(memo(cwd, env, "memo status examples/notes --json")))
    doc = _documented("`memo status … --json`")
    assert set(status) == _names(_outer(doc))
    per = _inside(doc, "collections")
    assert set(status["collections"][0]) == _names(_outer(per))
    for key in ("indexed_files", "skipped", "failed"):
        assert _names(_inside(per, key)), key  # documented with their fields
    assert set(status["collections"][0]["indexed_files"][0]) == _names(
        _inside(per, "indexed_files")
    )
