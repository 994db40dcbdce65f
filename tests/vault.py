"""A small Obsidian-style vault written for the tests (issue 22): what people arrive with.

Folders named with spaces, Cyrillic and macOS's NFD form; notes without an H1 (titled by their
file name), frontmatter `title`/`aliases`/`tags`, wikilinks in every form, embeds, callouts,
`%%comments%%`, block ids, inline #tags; `.obsidian/`, `.trash/`, Logseq's `logseq/bak/`,
attachments; loose notes at the top; no `_meta.yaml` anywhere.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

SYNC = "Obsidian Sync"
PLUGINS = "Плагины"
NFD_FOLDER = unicodedata.normalize("NFD", "Чайные заметки")  # й decomposed, as macOS writes

NOTES: dict[str, str] = {
    "Главная.md": (
        "---\npermalink: index\n---\n"
        "Добро пожаловать в справку. Начните с [[Настройка синхронизации|настройки Sync]] или "
        "загляните в [[Поиск]].\n"
    ),
    "Помощь.md": "Если что-то сломалось, откройте консоль разработчика и пришлите логи.\n",
    f"{SYNC}/Настройка синхронизации.md": (
        "---\naliases:\n  - Set up Sync\ntags: [sync]\n---\n"
        "Чтобы включить синхронизацию, откройте **Настройки → Sync** и войдите в аккаунт.\n\n"
        "## Удалённое хранилище\n\n"
        "Создайте удалённое хранилище и задайте пароль шифрования. ^remote-vault\n\n"
        "> [!warning] Пароль не восстановить\n"
        "> Если вы забудете пароль шифрования, данные на сервере прочитать нельзя.\n\n"
        "%% черновик: дописать про регионы серверов %%\n"
    ),
    f"{SYNC}/История версий.md": (
        "История версий хранит прошлые состояния заметки 12 месяцев. #versions\n\n"
        "## Восстановление\n\n"
        "Откройте [[История версий#Восстановление|историю]], выберите версию и нажмите "
        "«Восстановить». ![[history.png]]\n"
    ),
    f"{PLUGINS}/Поиск.md": (
        "---\ntitle: Поиск по хранилищу\n---\n"
        "Поиск — это [[Основные плагины|основной плагин]]. Горячая клавиша `Ctrl+Shift+F`.\n\n"
        "## Операторы\n\n"
        "Оператор `path:` ищет по пути файла, `tag:` — по тегам. ![[lucide-search.svg#icon]]\n"
    ),
    f"{PLUGINS}/Холст.md": (
        "Холст — бесконечная доска для карточек и связей между ними.\n\n"
        "### Карточки\n\nПеретащите заметку на холст, чтобы создать карточку.\n"
    ),
    f"{PLUGINS}/Макеты/Таблица.md": "Табличный вид показывает свойства заметок в столбцах.\n",
    f"{NFD_FOLDER}/Пуэр.md": unicodedata.normalize(
        "NFD", "# Пуэр\n\nЧайный пуэр заваривают водой 95 °C, первый пролив сливают.\n"
    ),
    "English notes/Daily review.md": (
        "Every evening I review the [[Inbox]] and move tasks into projects. #habit/review\n"
    ),
    # Syntax inside code and math is not syntax (issue 31): the `%%` in inline code opens no
    # comment, so every section after it is indexed, as Obsidian shows it.
    "English notes/Link syntax.md": (
        "A link may fail when its name holds any of `# | ^ : %% [[ ]]` characters.\n\n"
        "## Link to a heading\n\n"
        "Add a hash after the note name: `[[Other note#Heading]]` links to that heading.\n\n"
        "## Math\n\n"
        "The share is $50%% + x$ of the total, and the code `#notatag` names no tag.\n\n"
        "$$\n[[not a link]] %% in math\n$$\n\n"
        "## Escaping\n\n"
        "Put a backslash before a character to escape it. %% a real comment %%\n"
    ),
    "inbox.md": "drafts, never indexed\n",
}
NOT_NOTES: dict[str, bytes] = {
    ".obsidian/app.json": b'{"theme": "moonstone"}',
    ".obsidian/workspace.md": b"# not a note\n",  # hidden folder: never read
    ".trash/Old note.md": b"# deleted note\n\nsecret that was deleted\n",
    "logseq/bak/pages/Old.md": b"# a Logseq backup\n\nbackup copy\n",
    "logseq/config.edn": b"{}",
    "Attachments/history.png": b"\x89PNG\r\n\x1a\n" + bytes(64),
    "Attachments/lucide-search.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    f"{SYNC}/diagram.canvas": b'{"nodes": []}',
}


def write_vault(root: Path) -> Path:
    """Write the vault under `root` (created); returns it."""
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    for rel, data in NOT_NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root
