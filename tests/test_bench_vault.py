"""bench/vault.py --smoke: the vault benchmark's runner, on a tiny vault it writes itself.

The real run needs the Obsidian Help vault (never committed); the smoke run exercises every
code path of the runner (adopt, index, search with and without `also`, the span-overlap rule,
a two-section answer, unanswerable questions, the halves, route and flow, the tables).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_vault_runner_smoke(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "MEMO_INDEX_DIR": str(tmp_path / "idx")}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "vault.py"), "--smoke"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "smoke: ok" in out
    for want in ("| smoke | tune |", "| smoke | held-back |", "| smoke+also | all |"):
        assert want in out, out
    assert "unanswerable: n, high / low / none" in out


def _note(permalink: str, body: str) -> str:
    return f"---\npermalink: {permalink}\n---\n{body}"


def _qrels(folder: Path, rows: dict[str, list[dict[str, object]]]) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    for name, got in rows.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in got)
        (folder / name).write_text(text, encoding="utf-8")


def _check(tmp_path: Path, rows: dict[str, list[dict[str, object]]]) -> subprocess.CompletedProcess:
    _qrels(tmp_path / "q", rows)
    return subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "vault" / "check.py"),
            "--vault-ru",
            str(tmp_path / "ru"),
            "--vault-en",
            str(tmp_path / "en"),
            "--dir",
            str(tmp_path / "q"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_reads_spans_runs_and_second_notes(tmp_path: Path) -> None:
    """check.py accepts a run of adjacent sections and a section of a second note, in both
    vaults; refuses a span that stops inside a section, and an English span that covers other
    sections than its Russian twin."""
    body = "Lead.\n\n## One\n\na\n\n## Two\n\nb\n\n## Three\n\nc\n"  # headings at 6, 10, 14
    other = "## Only\n\nd\n"  # heading at 4
    for lang, (a, b) in {"en": ("A.md", "B.md"), "ru": ("А.md", "Б.md")}.items():
        (tmp_path / lang).mkdir()
        (tmp_path / lang / a).write_text(_note("a", body), encoding="utf-8")
        (tmp_path / lang / b).write_text(_note("b", other), encoding="utf-8")

    def rows(spans_en: list[tuple[str, int, int]], spans_ru: list[tuple[str, int, int]]):
        def row(lang: str, question: str, spans: list[tuple[str, int, int]]):
            path, s, e = spans[0]
            r = {
                "id": "v001",
                "lang": lang,
                "question": question,
                "path": path,
                "line_start": s,
                "line_end": e,
                "kind": "paraphrase",
            }
            r["spans"] = [{"path": p, "line_start": s, "line_end": e} for p, s, e in spans]
            return r

        en_q, ru_q = "how do one and two go together?", "как связаны раз и два?"
        none = {
            "none-en.jsonl": [{"id": "n001", "lang": "en", "question": "what is the weather"}],
            "none-ru.jsonl": [{"id": "n001", "lang": "ru", "question": "какая сегодня погода"}],
        }
        return {
            "en.jsonl": [row("en", en_q, spans_en)],
            "ru.jsonl": [row("ru", ru_q, spans_ru)],
            "en-ru.jsonl": [row("en", en_q, spans_ru)],
            **none,
        }

    good = _check(
        tmp_path, rows([("A.md", 6, 13), ("B.md", 4, 6)], [("А.md", 6, 13), ("Б.md", 4, 6)])
    )
    assert good.returncode == 0, good.stdout
    assert "several sections: 1 (1 in two notes)" in good.stdout

    unlike = _check(
        tmp_path, rows([("A.md", 6, 9), ("A.md", 14, 16)], [("А.md", 6, 13), ("А.md", 14, 16)])
    )
    assert unlike.returncode == 1
    assert "a span covers 2 sections in ru, 1 in en" in unlike.stdout, unlike.stdout

    inside = _check(
        tmp_path, rows([("A.md", 6, 11), ("B.md", 4, 6)], [("А.md", 6, 11), ("Б.md", 4, 6)])
    )
    assert inside.returncode == 1
    assert "not a run of whole sections" in inside.stdout, inside.stdout
