"""`memo watch`: keep every index of a library in line with its notes, by itself.

Threads (all daemons; `stop()` ends them):

- watchdog's observer (inotify, or polling for FUSE/sshfs/SMB) turns filesystem events into
  keys (`events.py`) pushed into a per-key debounce queue (`debounce.py`);
- the *worker*, the only thread that touches the index: it pops keys whose burst has been quiet
  for `debounce` seconds, maps each to its owning collection and syncs just that note or folder
  (`Collection.sync(prefix)`: stat, then hash; only new chunk texts are embedded). It also runs the
  reconcile scan (every `reconcile_every` seconds, on start, and after an inotify overflow);
- the *heartbeat*: every few seconds it writes the library's heartbeat file (read by
  `memo status`) and checks that the root and the observer are still there.

The watcher owns its own `Library`, hence its own SQLite connections: a server in the same
process keeps its own, so no apsw connection is ever shared across threads. It may share the
embedder (thread-safe). Every failure is logged and retried later with a backoff; nothing but
`stop()` ends the worker.
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

import apsw
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from .. import heartbeat
from ..collection.collection import Collection, SyncReport
from ..collection.files import file_identity, find_collections
from ..collection.meta import META_FILE
from ..config import Settings
from ..embed import Embedder
from ..library import Library
from .debounce import Debouncer
from .events import RECONCILE, Key, keys_for

LogSink = Callable[[str], None] | logging.Logger
BULK = 16  # more pending notes than this in one collection: one sync of the whole collection
LIST_LIMIT = 20  # a sync that wrote more files than this logs one summary line, not one per file
RETRY_FIRST, RETRY_MAX = 5.0, 300.0  # backoff after a failed sync (disk full, locked, ...)
WATCHDOG_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


class _Stopping(Exception):
    """Raised from a sync's progress callback to end it between two files."""


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
        self._queue = Debouncer(debounce, max_delay=max(5.0, 10 * debounce))
        self._stop = threading.Event()
        self._folders: frozenset[Path] = frozenset()
        self._broken: set[Path] = set()
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
            except _Stopping:
                break
            except Exception as e:  # the worker never dies; a bug is logged, the rest goes on
                self._say(logging.ERROR, f"unexpected {type(e).__name__}: {e}")

    def _check_stop(self, _n: int) -> None:
        if self._stop.is_set():
            raise _Stopping

    def _handle(self, keys: list[Key]) -> None:
        if RECONCILE in keys:
            self._guard(RECONCILE, self._reconcile)
            return  # a full scan covers every other pending key
        for key in keys:
            if key[0] == "meta":
                self._guard(key, lambda k=key: self._meta(Path(k[1])))
            elif key[0] == "dir":
                self._guard(key, lambda k=key: self._dir(Path(k[1])))
            elif key[0] == "coll":
                self._guard(key, lambda k=key: self._sync(Path(k[1]), ""))
        by_owner: dict[Path, list[Path]] = {}
        for key in keys:
            if key[0] == "file":
                path = Path(key[1])
                owner = self._owner(path.parent)
                if owner is None:
                    self._say(logging.DEBUG, f"{self._rel(path)}: not in a collection")
                    continue
                by_owner.setdefault(owner, []).append(path)
        for owner, paths in by_owner.items():
            if len(paths) > BULK:  # a checkout or an unpacked archive: one pass, batched embeds
                self._guard(("coll", str(owner)), lambda o=owner: self._sync(o, ""))
                continue
            for path in paths:
                self._guard(
                    ("file", str(path)),
                    lambda o=owner, p=path: self._sync(o, os.path.relpath(p, o)),
                )

    def _guard(self, key: Key, fn: Callable[[], None]) -> None:
        """Run one piece of work; on failure log it and retry later with a backoff."""
        try:
            fn()
        except _Stopping:
            raise
        except Exception as e:
            n = self._failures.get(key, 0) + 1
            self._failures[key] = n
            delay = min(RETRY_MAX, RETRY_FIRST * 2 ** (n - 1))
            what = "reconcile" if key == RECONCILE else self._rel(key[1])
            hint = getattr(e, "hint", "")
            self._say(
                logging.ERROR,
                f"{what}: {type(e).__name__}: {e}{' (' + hint + ')' if hint else ''}; "
                f"retrying in {delay:g} s",
            )
            if isinstance(e, apsw.Error) and key != RECONCILE:
                owner = self._owner(Path(key[1]))
                if owner is not None:
                    self.library.forget(owner)  # reopen its connection next time
            self._queue.retry(key, delay)
        else:
            self._failures.pop(key, None)

    def _owner(self, folder: Path) -> Path | None:
        """The collection folder owning `folder`: the nearest at or above it."""
        folders = self._folders
        for f in (folder, *folder.parents):
            if f in folders:
                return f
            if f == self.root:
                break
        return None

    def _collection(self, folder: Path) -> Collection | None:
        coll = self.library.collection_at(folder)
        if self.library.errors:
            if folder not in self._broken:
                for err in self.library.errors:
                    self._say(logging.ERROR, f"{err}; its notes wait until it is fixed")
            self._broken.add(folder)
            self.library.errors.clear()
        elif coll is not None:
            self._broken.discard(folder)
        return coll

    def _sync(self, folder: Path, prefix: str) -> SyncReport | None:
        if not (folder / META_FILE).is_file():  # vanished between the event and now
            self._discover(folder)
            return None
        coll = self._collection(folder)
        if coll is None:
            return None
        prefix = prefix.replace(os.sep, "/")
        label = self._rel(folder / prefix) if prefix else self._rel(folder)
        self._say(logging.DEBUG, f"indexing {label}")
        report = coll.sync(prefix, progress=self._check_stop)
        self._report(report, label, single=bool(prefix))
        if report.did_work:  # the router's content summary of this collection follows its notes
            self.library.fresh_registry().update_stats([folder])
        return report

    def _report(self, rep: SyncReport, label: str, single: bool) -> None:
        if rep.rebuilt:
            self._say(logging.INFO, f"{label}: index built ({rep.rebuilt})")
        for w in rep.warnings:
            self._say(logging.WARNING, w)
        written = [(a, p) for a, p in rep.files if a != "touched"]
        for a, p in rep.files:
            if a == "touched":
                self._say(logging.DEBUG, f"touched {p} (same content, nothing re-indexed)")
        if len(written) > LIST_LIMIT:
            for a, p in written:
                self._say(logging.DEBUG, f"{a} {p}")
            self._say(
                logging.INFO,
                f"{label}: {rep.new} new, {rep.changed} changed, {rep.removed} removed, "
                f"{rep.skipped} skipped; {rep.chunks_embedded} chunks embedded "
                f"({rep.seconds:.2f} s)",
            )
            return
        for a, p in written:
            extra = ""
            if single and a in ("new", "changed"):
                extra = f" ({rep.chunks_embedded} chunks embedded, {rep.seconds:.2f} s)"
            self._say(logging.INFO, f"{a} {p}{extra}")
        if not written and not rep.touched:
            self._say(logging.DEBUG, f"{label}: up to date ({rep.seconds * 1000:.1f} ms)")

    # ------------------------------------------------------------------ structure
    def _discover(self, top: Path) -> tuple[set[Path], set[Path]]:
        """Collections at or below `top` now vs. before: (appeared, vanished)."""
        found = set(find_collections(top)) if top.is_dir() else set()
        before = {f for f in self._folders if f == top or top in f.parents}
        new, gone = found - before, before - found
        if new or gone:
            self._folders = frozenset((self._folders - gone) | new)
            self.library.fresh_registry(force=True)  # the router sees it at once
        for f in sorted(gone):
            self.library.forget(f)
            self._broken.discard(f)
            self._say(logging.INFO, f"collection gone: {self._rel(f)}")
        for f in sorted(new):
            self._say(logging.INFO, f"collection found: {self._rel(f)}")
        return new, gone

    def _meta(self, folder: Path) -> None:
        """A _meta.yaml created, edited or deleted."""
        was = folder in self._folders
        self.library.forget(folder)  # edited: read it again
        self.library.fresh_registry(force=True)  # the registry re-reads just this meta
        self._broken.discard(folder)
        now = (folder / META_FILE).is_file()
        if now:
            if not was:
                self._folders = frozenset(self._folders | {folder})
                self._say(logging.INFO, f"collection found: {self._rel(folder)}")
            self._sync(folder, "")
        elif was:
            self._discover(folder)  # it is gone; collections nested below it are not
        if was != now and folder != self.root:
            parent = self._owner(folder.parent)
            if parent is not None:  # it adopts (or gives up) the notes of that folder
                self._sync(parent, "")

    def _dir(self, folder: Path) -> None:
        """A folder created, deleted or moved: its collections and its notes."""
        new, _ = self._discover(folder)
        for f in sorted(new):
            self._sync(f, "")
        if folder in self._folders:
            self._sync(folder, "")
            return
        owner = self._owner(folder.parent)
        if owner is not None:
            self._sync(owner, os.path.relpath(folder, owner))

    def _reconcile(self) -> None:
        """A full (path, mtime, size) scan: heals whatever events were lost."""
        t0 = time.perf_counter()
        self._discover(self.root)
        notes = work = 0
        for folder in sorted(self._folders):
            try:
                rep = self._sync(folder, "")
            except _Stopping:
                raise
            except Exception as e:  # one broken collection does not stop the scan
                self._say(logging.ERROR, f"{self._rel(folder)}: {type(e).__name__}: {e}")
                continue
            if rep is not None:
                notes += rep.unchanged + rep.new + rep.changed + rep.skipped
                work += rep.new + rep.changed + rep.removed + rep.skipped
        seconds = time.perf_counter() - t0
        first = self.reconciles == 0
        if first and self.library.embedder is not None:
            try:  # load the model now, not on the first edit (seconds for an ONNX model)
                self.library.embedder.embed_query("warm up")
            except Exception as e:
                self._say(logging.WARNING, f"embedder unavailable, indexing lexically: {e}")
        self.reconciles += 1
        self.last_reconcile, self.last_reconcile_seconds = time.time(), round(seconds, 3)
        self._write_heartbeat(running=True)
        self._say(
            logging.INFO if first or work else logging.DEBUG,
            f"reconciled {len(self._folders)} collections, {notes} notes, "
            f"{work} caught up ({seconds:.2f} s)",
        )
