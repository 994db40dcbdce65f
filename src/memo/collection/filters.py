"""Search filters from frontmatter, applied inside the SQL of each leg (never by dropping hits
afterwards, which would starve k).

- `tags`: a note matches when its frontmatter `tags` hold every tag given (case-insensitive).
- `since` / `until`: the note's date is its frontmatter `updated` (a YYYY-MM-DD prefix), else
  the file's mtime; bounds are inclusive dates, given as `YYYY-MM-DD` (a datetime is cut to its
  date) or relative: `7d`, `2w`, `3m` (30-day months), `1y`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from ..errors import MemoError

_RELATIVE = re.compile(r"^\s*(\d{1,5})\s*([dwmy])\s*$", re.IGNORECASE)
_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}

# The note's date: frontmatter `updated` when it starts with a date, else the mtime.
NOTE_DATE_SQL = (
    "COALESCE(CASE WHEN f.updated GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
    " THEN substr(f.updated, 1, 10) END, date(f.mtime_ns / 1000000000, 'unixepoch'))"
)


class FilterError(MemoError):
    hint = "Dates are YYYY-MM-DD or relative like 7d, 2w, 3m, 1y; tags are plain words."


def parse_date(value: str | dt.date | None, today: dt.date | None = None) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    m = _RELATIVE.match(text)
    if m:
        days = int(m.group(1)) * _DAYS[m.group(2).lower()]
        try:
            return ((today or dt.date.today()) - dt.timedelta(days=days)).isoformat()
        except OverflowError:  # before year 1 (9999y): every note is since then
            return dt.date.min.isoformat()
    try:
        return dt.date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        raise FilterError(f"cannot read the date {text!r}") from None


@dataclass(frozen=True, slots=True)
class Filter:
    tags: tuple[str, ...] = ()
    since: str | None = None  # YYYY-MM-DD, inclusive
    until: str | None = None

    @classmethod
    def make(
        cls,
        tags: list[str] | tuple[str, ...] | str | None = None,
        since: str | dt.date | None = None,
        until: str | dt.date | None = None,
    ) -> Filter | None:
        """A filter, or None when nothing is asked (the fast, unfiltered path)."""
        if isinstance(tags, str):
            tags = [t for t in re.split(r"[,\s]+", tags) if t]
        clean = tuple(sorted({str(t).strip().lstrip("#").lower() for t in tags or () if t}))
        for t in clean:
            if len(t) > 100 or not t.isprintable():
                raise FilterError(f"odd tag {t[:40]!r}")
        flt = cls(clean, parse_date(since), parse_date(until))
        if flt.since and flt.until and flt.since > flt.until:
            raise FilterError(f"since {flt.since} is after until {flt.until}")
        return flt if (flt.tags or flt.since or flt.until) else None

    def sql(self) -> tuple[str, list[object]]:
        """A condition on `files f` (joined on the chunk's path) and its parameters."""
        conds: list[str] = []
        params: list[object] = []
        for t in self.tags:
            esc = t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            conds.append("(' ' || replace(lower(f.tags), '#', '') || ' ') LIKE ? ESCAPE '\\'")
            params.append(f"% {esc} %")
        if self.since:
            conds.append(f"{NOTE_DATE_SQL} >= ?")
            params.append(self.since)
        if self.until:
            conds.append(f"{NOTE_DATE_SQL} <= ?")
            params.append(self.until)
        return " AND ".join(conds), params
