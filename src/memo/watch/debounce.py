"""A per-key debounce queue: a key becomes due `delay` after its last push.

Editors fire bursts (vim: rename to backup, write, delete backup, the 4913 probe; atomic save:
write temp, rename over), so a path is handled once the burst has been quiet for `delay`. A path
written without pause (a log appended to forever) is still handled every `max_delay`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class Debouncer(Generic[K]):
    def __init__(self, delay: float = 0.5, max_delay: float = 5.0) -> None:
        self.delay = delay
        self.max_delay = max(max_delay, delay)
        self._cond = threading.Condition()
        self._due: dict[K, tuple[float, float]] = {}  # key -> (due, first push)
        self._closed = False

    def push(self, key: K) -> None:
        """Note an event on `key`: it falls due after `delay` of quiet (at most `max_delay`)."""
        now = time.monotonic()
        with self._cond:
            first = self._due[key][1] if key in self._due else now
            self._due[key] = (min(now + self.delay, first + self.max_delay), first)
            self._cond.notify()

    def retry(self, key: K, after: float) -> None:
        """Handle `key` again in `after` seconds (an earlier pending push wins)."""
        now = time.monotonic()
        with self._cond:
            due = now + after
            if key in self._due:
                due = min(due, self._due[key][0])
            self._due[key] = (due, now)
            self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._due)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def pop_due(self, timeout: float) -> list[K]:
        """Keys that are due, oldest first; waits up to `timeout` for one (or for close)."""
        end = time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                due = [k for k, (t, _) in self._due.items() if t <= now]
                if due:
                    due.sort(key=lambda k: self._due[k][0])
                    for k in due:
                        del self._due[k]
                    return due
                nxt = min((t for t, _ in self._due.values()), default=end)
                wait = min(nxt, end) - now
                if wait <= 0:
                    return []
                self._cond.wait(wait)
            return []
