"""The inputs the word-writing helpers saw: each question (id and text only) and the route map
of its library (each collection's path and description, as memo_route and the skill list it).
Never a note, never an answer.

    python bench/words/make_inputs.py --vault-ru RU --vault-en EN --eval ../shared/eval --out DIR

RU and EN are the vault halves adopted with `memo init --yes` (their drafted _meta.yaml files
are the route map); the 200 xquad-dev-distract questions are the first 200 ids by a seeded
hash (SEED below), the same ids in every task.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
VAULT_QUESTIONS = HERE.parent / "vault"
SEED = "memo-words-2026"
XQUAD = {"xquad-ru": "ru.jsonl", "xquad-en": "en.jsonl", "xquad-en-ru": "en-ru.cross.jsonl"}
VAULT = {
    "vault-ru": ("ru.jsonl", "none-ru.jsonl"),
    "vault-en": ("en.jsonl", "none-en.jsonl"),
    "vault-en-ru": ("en-ru.jsonl", "none-en.jsonl"),
}


def rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def questions(out: Path, name: str, asked: list[dict]) -> None:
    text = "".join(
        json.dumps({"id": q["id"], "question": q["question"]}, ensure_ascii=False) + "\n"
        for q in asked
    )
    (out / f"{name}.jsonl").write_text(text, encoding="utf-8")


def route_map(root: Path) -> str:
    lines = []
    for meta in sorted(root.rglob("_meta.yaml")):
        rel = meta.parent.relative_to(root).as_posix()
        where = rel if rel != "." else "(the root: loose notes)"
        lines.append(f"{where}: {yaml.safe_load(meta.read_text(encoding='utf-8'))['description']}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault-ru", type=Path, required=True)
    ap.add_argument("--vault-en", type=Path, required=True)
    ap.add_argument("--eval", type=Path, required=True, help="../shared/eval")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    for name, (asked, unanswerable) in VAULT.items():
        questions(a.out, name, rows(VAULT_QUESTIONS / asked) + rows(VAULT_QUESTIONS / unanswerable))
    (a.out / "map-vault-ru.txt").write_text(route_map(a.vault_ru), encoding="utf-8")
    (a.out / "map-vault-en.txt").write_text(route_map(a.vault_en), encoding="utf-8")
    distract = a.eval / "xquad-dev-distract"
    ids = sorted(
        {q["id"] for q in rows(distract / "qrels" / "ru.jsonl")},
        key=lambda i: hashlib.blake2b((SEED + i).encode(), digest_size=8).digest(),
    )[:200]
    for name, qrels in XQUAD.items():
        questions(a.out, name, [q for q in rows(distract / "qrels" / qrels) if q["id"] in set(ids)])
    for lang in ("ru", "en"):
        (a.out / f"map-xquad-{lang}.txt").write_text(route_map(distract / lang), encoding="utf-8")


if __name__ == "__main__":
    main()
