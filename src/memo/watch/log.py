"""What the watcher logs about a sync: one line per file written, a summary for big ones."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..library import IndexReport, SyncReport

LIST_LIMIT = 20  # a sync that wrote more files than this logs one summary line, not one per file

Say = Callable[[int, str], None]


def log_report(say: Say, report: IndexReport, broken_seen: set[str]) -> None:
    """Collections found and gone, paths no collection owns, broken metas (once each, tracked
    in `broken_seen`), then every collection's sync."""
    for rel in report.found:
        say(logging.INFO, f"collection found: {rel}")
    for rel in report.gone:
        say(logging.INFO, f"collection gone: {rel}")
    for rel in report.outside:
        say(logging.DEBUG, f"{rel}: not in a collection")
    for line in report.broken_lines():
        if line not in broken_seen:
            broken_seen.add(line)
            say(logging.ERROR, f"{line}; its notes wait until it is fixed")
    for rep in report.reports:
        log_sync(say, rep)


def log_sync(say: Say, rep: SyncReport) -> None:
    label = rep.path
    if rep.rebuilt:
        say(logging.INFO, f"{label}: index built ({rep.rebuilt})")
    for w in rep.warnings:
        say(logging.WARNING, w)
    written = [(a, p) for a, p in rep.files if a != "touched"]
    for a, p in rep.files:
        if a == "touched":
            say(logging.DEBUG, f"touched {p} (same content, nothing re-indexed)")
    if len(written) > LIST_LIMIT:
        for a, p in written:
            say(logging.DEBUG, f"{a} {p}")
        say(
            logging.INFO,
            f"{label}: {rep.new} new, {rep.changed} changed, {rep.removed} removed, "
            f"{rep.skipped} skipped; {rep.chunks_embedded} chunks embedded ({rep.seconds:.2f} s)",
        )
        return
    for a, p in written:
        extra = ""
        if len(written) == 1 and a in ("new", "changed"):
            extra = f" ({rep.chunks_embedded} chunks embedded, {rep.seconds:.2f} s)"
        say(logging.INFO, f"{a} {p}{extra}")
    if not written and not rep.touched:
        say(logging.DEBUG, f"{label}: up to date ({rep.seconds * 1000:.1f} ms)")
