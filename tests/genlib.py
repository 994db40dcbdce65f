"""Generated libraries for routing tests and benchmarks, from the topics of xquad-dev.

Each xquad-dev article (24, in Russian and in English) becomes a "home" collection whose
description names the article and its most telling terms (TF-IDF over the articles, so the
wording is the article's own, not the questions'), in one of several phrasings per language.
The rest of the library is distractors: collections about everyday topics (ru or en), some of
them mentioning an xquad title in another sense ("Warsaw trip planning"), so a title alone
does not give the answer away. A question routes correctly when its article's home collection is
in the router's top k.

Without ../shared, a small built-in topic list stands in (the tests that need the real questions
skip).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
XQUAD = SHARED / "eval" / "xquad-dev"

_WORD = re.compile(r"[^\W\d_][\w'-]{3,}", re.UNICODE)
_STOP = set(
    "that this with from were which their there have been also other into than they more when "
    "after first most some only such these those over while where about would could between "
    "during because being under many much what whose each both years year used known called "
    "который которые также была было были после этого этом того через более может может быть "
    "является время году годы года однако между своей своих которая которых очень".split()
)

EN_TEMPLATES = (
    "{title}: notes on {t}",
    "Reading notes about {title} — {t}",
    "Everything collected on {title}: {t}",
    "{title}. Key facts: {t}",
    "Study notes: {title} ({t})",
)
RU_TEMPLATES = (
    "{title}: заметки про {t}",
    "Конспект по теме «{title}»: {t}",
    "Всё о {title} — {t}",
    "{title}. Главное: {t}",
    "Выписки: {title} ({t})",
)
GENERIC_EN = (
    "sourdough bread recipes",
    "kubernetes deployment runbooks",
    "tax return checklists",
    "garden planting calendar",
    "home network setup",
    "jira workflow rules",
    "python packaging",
    "team meeting minutes",
    "car maintenance log",
    "running training plans",
    "book reading list",
    "postgres tuning notes",
    "invoice templates",
    "travel packing lists",
    "guitar chord charts",
    "photography lighting tips",
    "interview questions for engineers",
    "budget spreadsheets",
    "docker compose snippets",
    "birthday gift ideas",
    "chess openings",
    "bash one-liners",
    "coffee brewing ratios",
    "apartment renovation plans",
    "language learning flashcards",
    "aws billing alerts",
    "customer support macros",
    "wedding planning tasks",
    "vaccination records for the dog",
    "linux kernel build flags",
    "marketing campaign briefs",
    "board game house rules",
    "fishing spots and tackle",
    "yoga routines",
    "wine tasting notes",
    "3d printer calibration",
    "keyboard shortcuts",
    "quarterly okr drafts",
    "hiking trail notes",
    "incident postmortems",
    "api rate limit notes",
    "sql query cookbook",
    "cycling routes",
)
GENERIC_RU = (
    "рецепты выпечки",
    "настройка роутера MikroTik",
    "налоговые вычеты",
    "посадки на даче",
    "протоколы встреч команды",
    "ремонт квартиры",
    "обслуживание автомобиля",
    "план тренировок",
    "список книг",
    "резервное копирование",
    "шаблоны договоров",
    "сборы в поход",
    "аккорды для гитары",
    "советы по фотографии",
    "вопросы для собеседования",
    "семейный бюджет",
    "команды bash",
    "идеи подарков",
    "шахматные дебюты",
    "заваривание кофе",
    "изучение языков",
    "счета за коммунальные услуги",
    "медицинские анализы",
    "прививки собаки",
    "настройка VPN",
    "сборка ядра Linux",
    "рабочие инциденты",
    "маркетинговые планы",
    "настольные игры",
    "рыбалка и снасти",
    "йога по утрам",
    "дегустация вин",
    "3D-печать",
    "горячие клавиши",
    "цели на квартал",
    "маршруты для велосипеда",
    "запросы SQL",
    "уход за растениями",
)
TITLE_SENSES_EN = ("{title} trip planning", "{title} quiz night questions", "{title} merch orders")
TITLE_SENSES_RU = ("поездка: {title}", "викторина про {title}", "покупки: {title}")
AREAS = ("work", "home", "study", "archive", "projects", "personal", "team", "research")


@dataclass(frozen=True, slots=True)
class Article:
    lang: str
    title: str
    file: str  # path in the xquad-dev library, relative to its root (as in the qrels)
    terms: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    lang: str
    text: str
    home: str  # the collection path that holds the article


def articles() -> list[Article]:
    """Every xquad-dev article in both languages, with its telling terms (empty w/o shared)."""
    raw: list[tuple[str, str, str, str]] = []
    for lang in ("en", "ru"):
        for md in sorted((XQUAD / lang / "lib").glob("topic-*/*.md")):
            text = md.read_text(encoding="utf-8")
            title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
            rel = str(md.relative_to(XQUAD / lang)).replace(os.sep, "/")
            raw.append((lang, title or md.stem, rel, text))
    if not raw:
        return []
    bags = [Counter(w.lower() for w in _WORD.findall(t)) for _, _, _, t in raw]
    df: Counter[str] = Counter()
    for b in bags:
        df.update(b.keys())
    out = []
    for (lang, title, rel, text), bag in zip(raw, bags, strict=True):
        title_words = {w.lower() for w in _WORD.findall(title)}
        scored = sorted(
            (
                (-c * math.log(len(raw) / df[w]), w)
                for w, c in bag.items()
                if w not in _STOP and w not in title_words and c >= 2
            ),
        )
        out.append(Article(lang, title, rel, tuple(w for _, w in scored[:12]), text))
    return out


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40] or "x"


def home_description(a: Article, rng: random.Random) -> str:
    terms = list(a.terms)
    rng.shuffle(terms)
    t = ", ".join(terms[: rng.randint(8, 10)])
    tpl = rng.choice(EN_TEMPLATES if a.lang == "en" else RU_TEMPLATES)
    return tpl.format(title=a.title, t=t)


def distractor_description(rng: random.Random, titles: list[str]) -> tuple[str, str]:
    lang = rng.choice(("en", "ru"))
    pool = GENERIC_EN if lang == "en" else GENERIC_RU
    parts = rng.sample(pool, rng.randint(2, 3))
    if titles and rng.random() < 0.15:
        senses = TITLE_SENSES_EN if lang == "en" else TITLE_SENSES_RU
        parts[0] = rng.choice(senses).format(title=rng.choice(titles))
    head = "Notes: " if lang == "en" else "Заметки: "
    return lang, head + "; ".join(parts)


def write_meta(folder: Path, name: str, description: str, tags: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_meta.yaml").write_text(
        f"name: {json.dumps(name, ensure_ascii=False)}\n"
        f"description: {json.dumps(description, ensure_ascii=False)}\n"
        f"tags: [{', '.join(tags)}]\n",
        encoding="utf-8",
    )


def generate(root: Path, n: int, seed: int = 7, notes: bool = False) -> dict[tuple[str, str], str]:
    """A library of `n` collections under `root`; returns (lang, article file) -> home path.

    Paths: `<area>/<group>/<name>` (two levels above each collection). `notes=True` writes one
    small note per distractor and the article itself into its home collection.
    """
    rng = random.Random(seed)
    arts = articles()
    homes: dict[tuple[str, str], str] = {}
    titles = sorted({a.title for a in arts}) or ["Warsaw", "Oxygen", "Geology"]
    slots = list(range(n))
    rng.shuffle(slots)
    home_slot = {slots[i]: a for i, a in enumerate(arts[:n])}
    groups = max(1, n // 40)
    for i in range(n):
        area = AREAS[i % len(AREAS)]
        group = f"g{(i // len(AREAS)) % groups:04d}"
        a = home_slot.get(i)
        if a is not None:
            name = f"{_slug(a.title)}-{a.lang}"
            rel = f"{area}/{group}/{name}"
            write_meta(root / rel, name, home_description(a, rng), [a.lang, "reading"])
            homes[(a.lang, a.file)] = rel
            if notes:
                (root / rel / f"{_slug(a.title)}.md").write_text(a.text, encoding="utf-8")
            continue
        lang, desc = distractor_description(rng, titles)
        name = f"c{i:06d}"
        rel = f"{area}/{group}/{name}"
        write_meta(root / rel, name, desc, [lang])
        if notes:
            (root / rel / "note.md").write_text(f"# {desc}\n\n{desc}.\n", encoding="utf-8")
    return homes


def questions(homes: dict[tuple[str, str], str], per_article: int | None = None) -> list[Question]:
    """xquad-dev questions (ru and en), each with the home collection of its article."""
    out: list[Question] = []
    for lang in ("en", "ru"):
        path = XQUAD / "qrels" / f"{lang}.jsonl"
        if not path.is_file():
            continue
        seen: Counter[str] = Counter()
        for line in path.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            home = homes.get((lang, q["path"]))
            if home is None:
                continue
            if per_article is not None and seen[q["path"]] >= per_article:
                continue
            seen[q["path"]] += 1
            out.append(Question(lang, q["question"], home))
    return out
