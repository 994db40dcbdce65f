"""A section longer than the chunk budget, split into pieces that fit (chunker.py's last step).

Pure: no I/O. A section is split at paragraphs, then sentences/lines, then words, and only as a
last resort at character positions, with ~15% overlap between consecutive pieces. Per-unit
costs are estimates from the caller's token counter; every emitted piece is verified exactly.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

OVERLAP_SHARE = 0.15  # of the budget, repeated at the start of the next piece of a split section
HEADING_SHARE = 0.25  # a split section's heading path may use at most this share of the budget

# Unit levels, coarse to fine. Only paragraphs and sentences/lines are repeated as overlap.
_PARA, _SENT, _WORD, _CHAR = range(4)

_CLOSERS = "\"'”’»)\\]」』"
# Western enders need whitespace after them ("v1.2", "3.14" stay whole); CJK ones do not.
_SENTENCE_END = re.compile(rf"[.!?…]+[{_CLOSERS}]*\s+|[。！？｡]+[{_CLOSERS}]*\s*")


def passage_text(heading: str, text: str) -> str:
    """What the embedder reads for a chunk, without the 'passage: ' prefix."""
    return f"{heading}\n\n{text}" if heading else text


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int  # offsets into the section body
    end: int
    level: int
    cost: float  # estimated tokens the unit adds to a passage


class Splitter:
    """Splits one section at a time (`section`) for one note's token counter and budget."""

    def __init__(self, count: Callable[[str], int], budget: int, warnings: list[str]) -> None:
        self.count, self.budget, self.warnings = count, budget, warnings
        # Fixed tokens of every passage (prefix, special tokens), measured as count("a") minus
        # the marginal cost of one more "a": count("") would overshoot, as the bare prefix
        # "passage: " ends in a lone "▁" piece with SentencePiece.
        empty = count("")
        self.base = min(empty, 2 * count("a") - count("a a"))
        if budget < empty + 8:
            raise ValueError(
                f"chunk budget {budget} leaves no room for text ({empty} tokens are taken "
                "by the prefix and special tokens)"
            )
        self.body, self.starts, self.code, self.first, self.avail = "", [0], [False], 1, 0

    def section(
        self, parts: tuple[str, ...], lines: list[str], first: int, code: list[bool]
    ) -> list[tuple[str, int, str]]:
        """(heading, line, text) for each chunk of one section body (`first` = its file line)."""
        filled = [k for k, s in enumerate(lines) if s.strip()]
        if not filled:
            return []
        lines, code = lines[filled[0] : filled[-1] + 1], code[filled[0] : filled[-1] + 1]
        first += filled[0]
        body, heading = "\n".join(lines), " > ".join(parts)
        if self.count(passage_text(heading, body.rstrip())) <= self.budget:
            return [(heading, first, body.rstrip())]
        heading = self._fit_heading(parts)
        head = self.count(passage_text(heading, ""))
        self.body, self.code, self.first, self.avail = body, code, first, self.budget - head
        self.starts = [0]
        for s in lines[:-1]:
            self.starts.append(self.starts[-1] + len(s) + 1)
        units = [u for p in self._paragraphs(lines) for u in self._refine(p)]
        return self._pack(units, heading, head)

    def _fit_heading(self, parts: tuple[str, ...]) -> str:
        """Drop leading parts, then cut the last one, until the path fits its share."""
        limit = int(self.budget * HEADING_SHARE)
        for k in range(len(parts)):
            if self.count(passage_text(" > ".join(parts[k:]), "")) <= limit:
                return " > ".join(parts[k:])
        last, lo, hi = parts[-1] if parts else "", 0, len(parts[-1]) if parts else 0
        while lo < hi:  # longest prefix of the last part that fits, found in log(n) counts
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.count(last[:mid] + "…\n\n") <= limit else (lo, mid - 1)
        return last[:lo] + "…" if lo else ""

    def _line_index(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def _exact(self, start: int, end: int, level: int) -> _Unit:
        return _Unit(start, end, level, max(1, self.count(self.body[start:end]) - self.base))

    def _paragraphs(self, lines: list[str]) -> Iterator[_Unit]:
        """Runs of non-blank lines; a fenced block (blank lines included) is one paragraph."""
        k = 0
        while k < len(lines):
            if self.code[k] or lines[k].strip():
                j = k + 1
                while (
                    j < len(lines)
                    and self.code[j] == self.code[k]
                    and (self.code[j] or lines[j].strip())
                ):
                    j += 1
                yield self._exact(self.starts[k], self.starts[j - 1] + len(lines[j - 1]), _PARA)
                k = j
            else:
                k += 1

    def _refine(self, unit: _Unit) -> list[_Unit]:
        """The unit itself if it fits beside the heading, else its finer parts that do."""
        out: list[_Unit] = []
        todo = [unit]
        while todo:
            u = todo.pop()
            if u.cost <= self.avail or u.end - u.start < 2:  # a lone char is checked in _pack
                out.append(u)
            else:
                todo += reversed(self._split(u))
        return out

    def _split(self, u: _Unit) -> list[_Unit]:
        if u.level == _PARA:
            spans = list(self._sentences(u))
            if len(spans) > 1:  # one sentence = the paragraph itself: do not count it twice
                return [self._exact(s, e, _SENT) for s, e in spans]
            u = replace(u, level=_SENT)
        size, per = u.end - u.start, u.cost / (u.end - u.start)
        if u.level < _CHAR:
            # Runs of whole words, ~1/8 of the room each, costed by length: counting every word
            # would be too slow on big inputs, and `_pack` verifies every piece exactly anyway.
            width = max(1, int(self.avail / 8 / per))
            words = re.compile(rf"\S.{{0,{width - 1}}}(?=\s|$)|\S+")
            spans = [m.span() for m in words.finditer(self.body, u.start, u.end)]
            if len(spans) > 1:
                return [_Unit(s, e, _WORD, (e - s) * per) for s, e in spans]
            line = self.first + self._line_index(u.start)
            self.warnings.append(
                f"line {line}: {size} characters without whitespace were cut at character positions"
            )
        # Last resort: windows of ~1/4 of the room, so packing can still fill pieces well.
        width = max(1, min(size // 2, int(self.avail / 4 / per)))
        return [
            _Unit(s, min(s + width, u.end), _CHAR, (min(s + width, u.end) - s) * per)
            for s in range(u.start, u.end, width)
        ]

    def _sentences(self, u: _Unit) -> Iterator[tuple[int, int]]:
        """Sentence spans of a prose paragraph, line spans of a code block."""
        for k in range(self._line_index(u.start), self._line_index(u.end) + 1):
            pos = self.starts[k]
            line_end = self.body.find("\n", pos, u.end)
            line_end = u.end if line_end < 0 else line_end
            cuts = (
                []
                if self.code[k]
                else [m.end() for m in _SENTENCE_END.finditer(self.body, pos, line_end)]
            )
            for end in [*cuts, line_end]:
                text = self.body[pos:end].rstrip()
                if text.strip():
                    yield pos, pos + len(text)
                pos = end

    def _pack(self, units: list[_Unit], heading: str, head: int) -> list[tuple[str, int, str]]:
        """Greedy packing with overlap; each piece is verified with the real counter."""
        out: list[tuple[str, int, str]] = []
        carry: list[_Unit] = []  # the tail of the previous piece, repeated
        i = 0  # units[i:j] are the new units of the piece being built
        while i < len(units):
            est = sum(u.cost for u in carry)
            while carry and est + units[i].cost > self.avail:
                est -= carry.pop(0).cost
            j = i
            while j < len(units) and (j == i or est + units[j].cost <= self.avail):
                est, j = est + units[j].cost, j + 1
            while True:
                start = carry[0].start if carry else units[i].start
                text = self.body[start : units[j - 1].end].rstrip()
                actual = self.count(passage_text(heading, text))
                if actual <= self.budget or (j - i == 1 and not carry):
                    break
                if j - i > 1:  # the estimate was short: drop about the excess, keep one unit
                    excess: float = actual - self.budget
                    while j - i > 1 and excess > 0:
                        j -= 1
                        excess -= units[j].cost
                else:
                    carry = []
            if actual > self.budget:  # one unit, costlier than estimated: split it finer
                if units[i].end - units[i].start < 2:
                    raise ValueError(f"chunk budget {self.budget} cannot hold a single character")
                units[i : i + 1] = self._refine(replace(units[i], cost=actual - head))
                continue
            out.append((heading, self.first + self._line_index(start), text))
            carry, i = self._overlap(units[i:j]), j
        return out

    def _overlap(self, new: list[_Unit]) -> list[_Unit]:
        """The last whole paragraphs/sentences of `new` that fit in the overlap share."""
        room, tail = OVERLAP_SHARE * self.budget, list[_Unit]()
        for u in reversed(new):
            if u.level == _PARA and u.cost > room:
                # Too big to repeat whole: its last sentences can still carry the context over.
                for s, e in reversed(list(self._sentences(u))):  # counted from the end only
                    part = self._exact(s, e, _SENT)
                    if part.cost > room:
                        break
                    room -= part.cost
                    tail.insert(0, part)
                break
            if u.level > _SENT or u.cost > room:
                break
            room -= u.cost
            tail.insert(0, u)
        return tail
