"""`memo watch`: keep every index of a library in line with its notes, by itself.

Three daemon threads (`stop()` ends them): watchdog's observer turns filesystem events into keys
(`events.py`) in a per-key debounce queue (`debounce.py`); the *worker*, the only thread that
touches the index, hands the paths of keys quiet for `debounce` seconds to `Library.sync` and
runs the reconcile scan (on start, every `reconcile_every` seconds, after an inotify overflow);
the *heartbeat* writes the library's heartbeat file and checks that the root and the observer are
still there. The watcher owns its `Library`, so no apsw connection is shared across threads (the
embedder may be). Every failure is logged and retried later with a backoff; nothing but `stop()`
ends the worker.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from .. import heartbeat
from ..config import Settings
from ..embed import Embedder
from ..library import IndexReport, Library, SyncProgress, file_identity
from .debounce import Debouncer
from .events import RECONCILE, Key, keys_for
from .log import log_report

LogSink = Callable[[str], None] | logging.Logger
VECTORS = "vectors"  # a key's kind: a collection whose vector stage paused, to resume
RETRY_FIRST, RETRY_MAX = 5.0, 300.0  # backoff after a failed sync (disk full, locked, ...)
WATCHDOG_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


class _Progress(SyncProgress):
    """Tells a sync to stop when the watcher stops; logs what it starts."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def begin(self, label: str, files: int) -> None:
        self.watcher._say(logging.DEBUG, f"indexing {label}")

    def stop_requested(self) -> bool:
        return self.watcher._stop.is_set()

    def yield_requested(self) -> bool:
        """New edits wait: the vectors being computed give way, and are resumed after."""
        return self.watcher._queue.pending() > 0


class _OverflowHook(logging.Handler):
    """watchdog (>= 7.1) reports an inotify queue overflow only as a log warning: catch it."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.on_overflow()


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        self.watcher._on_event(event)


class Watcher:
    def __init__(
        self,
        root: Path,
        embedder: Embedder | None,
        settings: Settings | None = None,
        *,
        polling: bool = False,
        debounce: float = 0.5,
        reconcile_every: float = 600.0,
        log: LogSink | None = None,
        level: int = logging.INFO,
        polling_interval: float = 2.0,
    ) -> None:
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        self.settings = settings or Settings()
        self.library = Library(self.root, embedder, self.settings)  # own connections, own thread
        self.polling = polling
        self.polling_interval = polling_interval
        self.debounce = debounce
        self.reconcile_every = reconcile_every
        self.level = level
        self._log = log
        self._queue: Debouncer[Key] = Debouncer(debounce, max_delay=max(5.0, 10 * debounce))
        self._stop = threading.Event()
        self._broken: set[str] = set()  # broken _meta.yaml errors already logged
        self._progress = _Progress(self)
        self._failures: dict[Key, int] = {}
        self._observer: Any = None
        self._mode = "polling" if polling else "inotify"
        self._root_id: tuple[int, int] | None = None
        self._worker: threading.Thread | None = None
        self._beat: threading.Thread | None = None
        self._hook = _OverflowHook(self._overflow)
        self._beat_lock = threading.Lock()  # the worker and the heartbeat thread both write it
        self.started: float | None = None
        self.last_reconcile: float | None = None
        self.last_reconcile_seconds: float | None = None
        self.reconciles = 0  # how many reconcile scans ran (tests and benchmarks read it)
        self.overflows = 0

    # ------------------------------------------------------------------ logging
    def _say(self, level: int, msg: str) -> None:
        sink = self._log
        if isinstance(sink, logging.Logger):
            sink.log(level, msg)
            return
        if level < self.level:
            return
        line = f"{time.strftime('%H:%M:%S')} {logging.getLevelName(level).lower()}: {msg}"
        if sink is None:
            logging.getLogger("memo.watch").log(level, msg)
        else:
            try:
                sink(line)
            except Exception:  # a closed stderr must not kill the watcher
                pass

    def _rel(self, path: Path | str) -> str:
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        return rel

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start watching in background threads; returns at once (the first scan runs behind)."""
        self.started = time.time()
        self._stop.clear()
        for name in WATCHDOG_LOGGERS:
            logging.getLogger(name).addHandler(self._hook)
        self._root_id = self._root_identity()
        self._start_observer()
        self._queue.retry(RECONCILE, 0.0)
        self._say(
            logging.INFO,
            f"watching {self.root} ({self._mode}, debounce {self.debounce:g} s, "
            f"reconcile every {self.reconcile_every:g} s)",
        )
        self._worker = threading.Thread(target=self._work, name="memo-watch-worker", daemon=True)
        self._beat = threading.Thread(target=self._heartbeat, name="memo-watch-beat", daemon=True)
        self._worker.start()
        self._beat.start()

    def stop(self, timeout: float = 1.0) -> bool:
        """Stop every thread; True when all ended within `timeout` (the index is safe either
        way: a file's rows change in one transaction, and an interrupted file is redone)."""
        end = time.monotonic() + timeout
        self._stop.set()
        self._queue.close()
        obs, self._observer = self._observer, None
        if obs is not None:
            obs.stop()
        for t in (self._worker, self._beat):
            if t is not None:
                t.join(max(0.0, end - time.monotonic()))
        if obs is not None:
            obs.join(max(0.0, end - time.monotonic()))
        clean = not any(t is not None and t.is_alive() for t in (self._worker, self._beat, obs))
        for name in WATCHDOG_LOGGERS:
            logging.getLogger(name).removeHandler(self._hook)
        self._write_heartbeat(running=False)
        if clean:
            self.library.close()
        self._say(logging.INFO, "stopped" if clean else "stopped (a sync was cut short)")
        return clean

    def run(self) -> bool:
        """Watch until SIGTERM or SIGINT (main thread only); returns what `stop()` returned."""
        previous = {}

        def _on_signal(signum: int, _frame: Any) -> None:
            self._say(logging.INFO, f"{signal.Signals(signum).name}: stopping")
            self._stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, _on_signal)
        try:
            self.start()
            while not self._stop.wait(0.5):
                pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self.stop(timeout=0.8)

    # ------------------------------------------------------------------ observer
    def _root_identity(self) -> tuple[int, int] | None:
        return file_identity(self.root)

    def _make_observer(self, polling: bool) -> Any:
        if polling:
            from watchdog.observers.polling import PollingObserver

            return PollingObserver(timeout=self.polling_interval)
        from watchdog.observers import Observer

        return Observer()

    def _start_observer(self) -> bool:
        if not self.root.is_dir():
            return False
        for polling in (self.polling, True) if not self.polling else (True,):
            obs = self._make_observer(polling)
            try:
                obs.schedule(_Handler(self), str(self.root), recursive=True)
                obs.start()
            except OSError as e:
                self._say(
                    logging.ERROR,
                    f"cannot watch {self.root} with {'polling' if polling else 'inotify'}: "
                    f"{e.strerror or e}"
                    + (
                        "; falling back to polling (raise fs.inotify.max_user_watches to avoid)"
                        if not polling
                        else ""
                    ),
                )
                continue
            self._observer = obs
            self._mode = "polling" if polling else "inotify"
            return True
        return False

    def _restart_observer(self) -> None:
        old, self._observer = self._observer, None
        if old is not None:
            old.stop()
            old.join(1.0)
        if self._start_observer():
            self._queue.retry(RECONCILE, 0.0)

    def _on_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(event.dest_path) if event.dest_path else ""
        keys = keys_for(str(self.root), event.event_type, src, dest, event.is_directory)
        for key in keys:
            self._queue.push(key)
        if keys and self.level <= logging.DEBUG:
            where = self._rel(src) + (f" -> {self._rel(dest)}" if dest else "")
            self._say(logging.DEBUG, f"event {event.event_type} {where}")

    def _overflow(self) -> None:
        self.overflows += 1
        self._say(logging.WARNING, "inotify queue overflowed, events were lost: reconciling")
        self._queue.retry(RECONCILE, 0.0)

    # ------------------------------------------------------------------ heartbeat
    def _heartbeat(self) -> None:
        last = 0.0
        while not self._stop.wait(1.0):
            self._supervise()
            if time.monotonic() - last >= heartbeat.HEARTBEAT_EVERY:
                self._write_heartbeat(running=True)
                last = time.monotonic()

    def _write_heartbeat(self, running: bool) -> None:
        with self._beat_lock:
            self._write_heartbeat_locked(running)

    def _write_heartbeat_locked(self, running: bool) -> None:
        heartbeat.write(
            self.root,
            self.settings,
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "root": str(self.root),
                "mode": self._mode,
                "started": self.started,
                "last_seen": time.time(),
                "running": running,
                "last_reconcile": self.last_reconcile,
                "last_reconcile_seconds": self.last_reconcile_seconds,
            },
        )

    def _supervise(self) -> None:
        """The root deleted and re-created, or the observer dead: watch again, then reconcile."""
        ident = self._root_identity()
        if ident != self._root_id:
            self._root_id = ident
            if ident is None:
                self._say(logging.WARNING, f"library root {self.root} vanished; waiting for it")
                return
            self._say(logging.INFO, f"library root {self.root} is back; watching it again")
            self._restart_observer()
        elif ident is not None and (self._observer is None or not self._observer.is_alive()):
            if not self._stop.is_set():
                self._say(logging.WARNING, "the file observer stopped; restarting it")
                self._restart_observer()

    # ------------------------------------------------------------------ worker
    def _work(self) -> None:
        next_scan = time.monotonic() + self.reconcile_every
        while not self._stop.is_set():
            keys = self._queue.pop_due(timeout=max(0.0, min(1.0, next_scan - time.monotonic())))
            if self._stop.is_set():
                break
            if time.monotonic() >= next_scan and RECONCILE not in keys:
                keys.append(RECONCILE)
            if RECONCILE in keys:
                next_scan = time.monotonic() + self.reconcile_every
            try:
                self._handle(keys)
            except Exception as e:  # the worker never dies; a bug is logged, the rest goes on
                self._say(logging.ERROR, f"unexpected {type(e).__name__}: {e}")

    def _handle(self, keys: list[Key]) -> None:
        """Hand the keys' paths to the library: a note alone, or a folder or `_meta.yaml` after
        a re-scan of the registry; a reconcile covers every other pending key."""
        if RECONCILE in keys:
            self._guard(RECONCILE, self._reconcile)
            return
        notes = [k for k in keys if k[0] in ("file", VECTORS)]
        tree = [k for k in keys if k[0] in ("dir", "meta")]
        if tree:
            self._guard_all(tree, rescan=True)
        if notes:
            self._guard_all(notes, rescan=False)

    def _guard_all(self, keys: list[Key], rescan: bool) -> None:
        paths = [Path(k[1]) for k in keys]
        self._guard(keys, lambda: self.library.sync(paths, rescan=rescan, progress=self._progress))

    def _guard(self, what: Key | list[Key], run: Callable[[], IndexReport]) -> None:
        """Run one sync; log what it did. A failure (disk full, index locked too long) is
        logged and retried later with a backoff; a broken `_meta.yaml` is logged once."""
        keys = [what] if isinstance(what, tuple) else what
        try:
            report = run()
        except Exception as e:
            self._retry(keys, f"{type(e).__name__}: {e}{_hint(e)}")
            return
        self._log_report(report)
        for rep in report.reports:  # vectors that gave way to newer edits: resume them next
            if rep.paused:
                self._queue.retry((VECTORS, str(self.root / rep.path)), 0.0)
        if report.failures and not report.stopped:
            self._retry(keys, "; ".join(report.failures))
        else:
            for key in keys:
                self._failures.pop(key, None)

    def _retry(self, keys: list[Key], why: str) -> None:
        for key in keys:
            n = self._failures.get(key, 0) + 1
            self._failures[key] = n
            delay = min(RETRY_MAX, RETRY_FIRST * 2 ** (n - 1))
            what = "reconcile" if key == RECONCILE else self._rel(key[1])
            self._say(logging.ERROR, f"{what}: {why}; retrying in {delay:g} s")
            self._queue.retry(key, delay)

    def _reconcile(self) -> IndexReport:
        """A full (path, mtime, size) scan: heals whatever events were lost."""
        report = self.library.sync(rescan=True, progress=self._progress)
        self._broken &= set(report.broken_lines())  # fixed ones may be logged again if they break
        first = self.reconciles == 0
        if first and self.library.embedder is not None:
            try:  # load the model now, not on the first edit (seconds for an ONNX model)
                self.library.embedder.embed_query("warm up")
            except Exception as e:
                self._say(logging.WARNING, f"embedder unavailable, indexing lexically: {e}")
        self.last_reconcile, self.last_reconcile_seconds = time.time(), round(report.seconds, 3)
        self._write_heartbeat(running=True)
        self.reconciles += 1  # counted once it is told: whoever waits on it finds the heartbeat
        totals = report.totals()
        notes = sum(totals[k] for k in ("unchanged", "new", "changed", "skipped", "touched"))
        work = sum(totals[k] for k in ("new", "changed", "removed", "skipped"))
        self._say(
            logging.INFO if first or work else logging.DEBUG,
            f"reconciled {totals['collections']} collections, {notes} notes, "
            f"{work} caught up ({report.seconds:.2f} s)",
        )
        return report

    def _log_report(self, report: IndexReport) -> None:
        log_report(self._say, report, self._broken)


def _hint(e: Exception) -> str:
    hint = getattr(e, "hint", "")
    return f" ({hint})" if hint else ""
