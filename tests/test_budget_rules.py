"""The rules of search/budget.py as an agent meets them (issue 32): a result set fitted into
`max_tokens` keeps hits best first, cuts at most one at a sentence border, says what it cut and
dropped, and never exceeds the budget. Costs are counted with memo's own estimate (what a
search without a model counts with)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memo.embed.tokens import estimate_tokens as count
from memo.router.route import Candidate, Evidence
from memo.search.budget import ELLIPSIS, MIN_PIECE, fit, fit_lines, fit_route, hit_cost_text
from memo.search.results import Hit

S1 = "Apples grow on trees in the orchard behind the old stone house near the river."
S2 = "Pears ripen later in the autumn, when the first cold nights arrive from the hills."
S3 = "Plums are picked last of all, usually in the first days of October each year."


def hit(text: str, path: str = "c/note.md", line: int = 3, heading: str = "Fruit") -> Hit:
    return Hit("c", path, "/lib/" + path, line, heading, 1.0, text)


def cost(h: Hit) -> int:
    return count(hit_cost_text(h))


def test_the_cost_of_a_hit_is_its_header_and_its_text() -> None:
    h = hit("Some text.", path="c/a.md", line=7, heading="Title")
    assert hit_cost_text(h) == "c/a.md:7 Title\nSome text."
    assert hit_cost_text(h, "Other.") == "c/a.md:7 Title\nOther."
    assert hit_cost_text(hit("T.", heading="")) == "c/note.md:3\nT."  # no trailing space


def test_a_budget_equal_to_the_hits_cost_keeps_them_whole() -> None:
    hits = [hit(S1), hit(S2, path="c/b.md")]
    total = cost(hits[0]) + cost(hits[1])
    kept, b = fit(hits, total, count)
    assert kept == hits
    assert (b.max_tokens, b.used, b.dropped, b.cut) == (total, total, 0, 0)


def test_the_hit_that_does_not_fit_is_cut_at_a_sentence_border() -> None:
    first, second = hit(S1), hit(f"{S1} {S2} {S3}", path="c/b.md")
    room = count(hit_cost_text(second, f"{S1} {S2}{ELLIPSIS}"))
    kept, b = fit([first, second, hit(S3, path="c/c.md")], cost(first) + room, count)
    assert [h.path for h in kept] == ["c/note.md", "c/b.md"]
    assert kept[1].text == f"{S1} {S2}{ELLIPSIS}"  # the longest prefix that fits
    assert (b.max_tokens, b.used, b.dropped, b.cut) == (
        cost(first) + room,
        cost(first) + room,
        1,
        1,
    )


def test_a_cut_one_sentence_short_of_the_room_keeps_one_sentence_less() -> None:
    h = hit(f"{S1} {S2} {S3}")
    room = count(hit_cost_text(h, f"{S1} {S2}{ELLIPSIS}")) - 1
    kept, b = fit([h], room, count)
    assert kept[0].text == f"{S1}{ELLIPSIS}"
    assert b.used == count(hit_cost_text(h, kept[0].text)) <= room


def test_one_long_sentence_is_cut_at_a_word_border() -> None:
    words = " ".join(f"word{i}" for i in range(200))  # no sentence end before its end
    h = hit(words)
    kept, b = fit([h], 60, count)
    assert kept[0].text.endswith(ELLIPSIS) and words.startswith(kept[0].text[: -len(ELLIPSIS)])
    assert kept[0].text[: -len(ELLIPSIS)].split(" ")[-1].startswith("word")
    longer = " ".join(words.split(" ")[: len(kept[0].text.split(" "))]) + ELLIPSIS
    assert count(hit_cost_text(h, longer)) > 60  # one word more would not fit
    assert (b.used, b.dropped, b.cut) == (count(hit_cost_text(h, kept[0].text)), 0, 1)


def test_room_below_the_smallest_useful_piece_drops_the_hit() -> None:
    first, second = hit(S1), hit(f"{S1} {S2}", path="c/b.md")
    for room in (MIN_PIECE - 1, 0):
        kept, b = fit([first, second], cost(first) + room, count)
        assert kept == [first]
        assert (b.used, b.dropped, b.cut) == (cost(first), 1, 0)


def test_room_of_exactly_the_smallest_piece_may_still_cut() -> None:
    short = "Ok. " + "x" * 10
    second = hit(short + " and much more text follows here to be cut away later on.", heading="")
    room = MIN_PIECE
    assert count(hit_cost_text(second, "Ok." + ELLIPSIS)) <= room < cost(second)
    kept, b = fit([second], room, count)
    assert kept[0].text.startswith("Ok.") and b.cut == 1


def test_nothing_fits_when_even_one_word_is_too_many() -> None:
    h = hit("Supercalifragilistic " * 3, path="c/" + "long-name/" * 20 + "n.md")
    kept, b = fit([h], MIN_PIECE, count)
    assert kept == [] and (b.used, b.dropped, b.cut) == (0, 1, 0)


texts = st.lists(
    st.text(st.sampled_from("ab .!?\n"), min_size=1, max_size=120), min_size=1, max_size=6
)


@given(texts, st.integers(0, 300))
def test_the_budget_is_never_exceeded_and_accounts_for_every_hit(ts: list[str], n: int) -> None:
    hits = [hit(t, path=f"c/{i}.md") for i, t in enumerate(ts)]
    kept, b = fit(hits, n, count)
    assert b.used == sum(cost(h) for h in kept) <= n
    assert len(kept) + b.dropped == len(hits)
    assert [h.path for h in kept] == [h.path for h in hits[: len(kept)]]  # best first
    whole = [k.text == h.text for k, h in zip(kept, hits, strict=False)]
    assert all(whole[:-1])
    assert b.cut == (0 if not kept or whole[-1] else 1)
    if b.cut:  # a cut hit reads as the start of the hit, its spacing as written
        last = kept[-1].text
        assert last.endswith(ELLIPSIS) and hits[len(kept) - 1].text.startswith(last[:-2])


def candidate(name: str, evidence: list[str]) -> Candidate:
    ev = [Evidence(f"{name}/n{i}.md", 1, "H", t) for i, t in enumerate(evidence)]
    return Candidate(name, name, f"notes about {name}", (), 1.0, evidence=ev)


def route_cost(c: Candidate, n: int | None = None) -> int:
    head = count(f"{c.path} {c.name} {c.description}")
    return head + sum(count(f"{h.path}:{h.line} {h.heading}\n{h.text}") for h in c.evidence[:n])


def test_a_route_keeps_collections_in_order_while_they_fit() -> None:
    cs = [candidate("apples", [S1, S2]), candidate("pears", [S2]), candidate("plums", [S3])]
    exact = route_cost(cs[0]) + route_cost(cs[1])
    kept, b = fit_route(cs, exact, count)
    assert [c.name for c in kept] == ["apples", "pears"]
    assert [len(c.evidence) for c in kept] == [2, 1]
    assert (b.max_tokens, b.used, b.dropped, b.cut) == (exact, exact, 1, 0)


def test_a_route_cuts_the_evidence_that_does_not_fit_after_its_head() -> None:
    cs = [candidate("apples", [S1, S2]), candidate("pears", [S2])]
    n = route_cost(cs[0], 1) + count(f"{cs[1].path} {cs[1].name} {cs[1].description}")
    kept, b = fit_route(cs, n, count)
    assert [(c.name, len(c.evidence)) for c in kept] == [("apples", 1), ("pears", 0)]
    assert (b.used, b.dropped, b.cut) == (n, 0, 1)
    assert len(cs[0].evidence) == 2  # the caller's candidates are left as they were


def test_a_route_with_room_to_spare_is_whole() -> None:
    cs = [candidate("apples", [S1]), candidate("pears", [S2])]
    kept, b = fit_route(cs, 10_000, count)
    assert kept == cs and (b.used, b.dropped, b.cut) == (
        route_cost(cs[0]) + route_cost(cs[1]),
        0,
        0,
    )


def test_fit_lines_reads_as_many_lines_as_fit_and_at_least_one() -> None:
    lines = [S1, S2, S3]
    two = count("\n".join(lines[:2]))
    assert fit_lines(lines, two, count) == 2
    assert fit_lines(lines, two - 1, count) == 1
    assert fit_lines(lines, 0, count) == 1  # a read that returns nothing helps no one
    assert fit_lines(lines, 10_000, count) == 3


@given(
    st.lists(st.text(st.sampled_from("ab \n"), max_size=40), min_size=1, max_size=20),
    st.integers(0, 200),
)
def test_fit_lines_is_the_longest_prefix_that_fits(lines: list[str], n: int) -> None:
    k = fit_lines(lines, n, count)
    fits = [count("\n".join(lines[:i])) <= n for i in range(1, len(lines) + 1)]
    assert k == max([i + 1 for i, ok in enumerate(fits) if ok], default=1)


SENTENCES = [
    f"Sentence number {i} says a little more about fruit{'!' if i % 3 else '.'}"
    for i in range(1, 11)
]


def test_every_room_gets_the_longest_sentence_prefix_that_fits() -> None:
    """For each room from the smallest useful piece up, the cut keeps the most sentences that
    fit, never one more: the binary search finds the same answer as trying them all."""
    h = hit(" ".join(SENTENCES))
    prefixes = [" ".join(SENTENCES[:n]) + ELLIPSIS for n in range(1, len(SENTENCES) + 1)]
    for room in range(MIN_PIECE, cost(h)):
        fitting = [p for p in prefixes if count(hit_cost_text(h, p)) <= room]
        kept, b = fit([h], room, count)
        if fitting:
            assert kept[0].text == fitting[-1], room
        else:  # not even one sentence: cut at words
            assert kept == [] or kept[0].text.count(" ") < SENTENCES[0].count(" ") + 1
        assert b.used <= room


def test_every_room_gets_the_most_words_that_fit() -> None:
    """From a room where no word fits, through one word, up (a long path costs the header)."""
    words = [f"w{i}" for i in range(60)]
    h = hit(" ".join(words), path="c/" + "a-long-folder-name/" * 3 + "n.md", heading="")
    prefixes = [" ".join(words[:n]) + ELLIPSIS for n in range(1, len(words) + 1)]
    for room in range(MIN_PIECE, cost(h)):
        fitting = [p for p in prefixes if count(hit_cost_text(h, p)) <= room]
        kept, _ = fit([h], room, count)
        assert [k.text for k in kept] == fitting[-1:], room
    assert count(hit_cost_text(h, prefixes[0])) > MIN_PIECE  # one word alone was tried


def test_a_word_cut_keeps_the_spacing_as_written() -> None:
    h = hit("Words  with  double  spaces and\ta tab " * 12, heading="")
    kept, _ = fit([h], 60, count)
    assert h.text.startswith(kept[0].text[: -len(ELLIPSIS)]) and "  " in kept[0].text


def test_every_budget_reads_the_most_lines_that_fit() -> None:
    lines = [f"line {i} " + "x" * (i % 7) for i in range(40)]
    for n in range(count("\n".join(lines)) + 2):
        fits = [i for i in range(1, len(lines) + 1) if count("\n".join(lines[:i])) <= n]
        assert fit_lines(lines, n, count) == max(fits, default=1), n


def test_a_cut_keeps_the_hits_own_start_and_no_trailing_spaces() -> None:
    first = "  an indented line that ends here, with words enough to be worth a piece"
    h = hit(first + "   \nnext line goes on and on and on " + "and on " * 30)
    room = count(hit_cost_text(h, first + ELLIPSIS))
    assert room >= MIN_PIECE
    kept, _ = fit([h], room, count)
    assert kept[0].text == first + ELLIPSIS


def test_a_cut_is_never_the_ellipsis_alone() -> None:
    """A hit whose text starts on a new line: its empty first 'sentence' is no piece."""
    h = hit("\n" + " ".join(["Unbroken"] * 40) + ".", heading="")
    for room in range(MIN_PIECE, MIN_PIECE + 12):
        kept, b = fit([h], room, count)
        assert all(k.text.strip(" …\n") for k in kept), room
        assert b.used <= room
