"""Bad files: each kind is reported in one line, skipped or indexed safely, and never stops the
rest of the library. Lexical only (no model) to stay fast: the model plays no part in any of it.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from memo.config import Settings
from memo.library import Library

from .conftest import checksums

BOMB = (
    "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)
# Executed, it would leave a file beside the library, inside the test's own folder.
PYOBJ = "!!python/object/apply:os.system ['touch {canary}']\n"
DEEP = "[" * 20_000 + "]" * 20_000 + "\n"


def noise(n: int, seed: int = 50) -> bytes:
    """`n` random bytes, none of them NUL: no text, though nothing says so at a glance."""
    return bytes(b % 255 + 1 for b in random.Random(seed).randbytes(n))


def build(root: Path) -> None:
    """A library holding every kind of bad file next to good notes."""
    pyobj = PYOBJ.format(canary=root.parent / "memo-pwned")
    c = root / "bad"
    c.mkdir(parents=True)
    (c / "_meta.yaml").write_text("description: every kind of bad file\n")
    (c / "good.md").write_text("# Good\n\nthe sentinel word zanzibar lives here\n")
    (c / "binary.md").write_bytes(os.urandom(4096) + b"\x00\x00" + os.urandom(4096))
    (c / "latin1.md").write_bytes(b"# Caf\xe9\n\ncr\xe8me br\xfbl\xe9e recipe marzipan\n")
    (c / "noise.md").write_bytes(noise(8192 * 2))  # random bytes without a NUL
    (c / "nul-late.md").write_bytes(b"# Late NUL\n\n" + b"x " * 5000 + b"\x00 nulword\n")
    with open(c / "huge.md", "wb") as f:  # 200 MB, sparse: costs no disk and is never read
        f.truncate(200 * 1024 * 1024)
    (c / "longline.md").write_text("# Long\n" + "w" * 50_000 + "\n")
    (c / "longwords.md").write_text("# Long words\n" + "слово and word " * 3400 + "\n")
    deep = c.joinpath(*["d"] * 120)
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep\n\nburied treasure quokka\n")
    (c / "loop1.md").symlink_to("loop2.md")
    (c / "loop2.md").symlink_to("loop1.md")
    (c / "dangling.md").symlink_to("nowhere.md")
    (c / "selfdir").symlink_to(".", target_is_directory=True)  # folder loop
    (c / "outside.md").symlink_to("/etc/hostname")
    os.mkfifo(c / "fifo.md")
    (c / "dir.md").mkdir()
    (c / "with space.md").write_text("# Space\n\nspacious platypus\n")
    (c / "new\nline.md").write_text("# Newline\n\nnewline axolotl\n")
    (c / "ünïcödé-заметка.md").write_text("# Юникод\n\nпингвин и тукан\n")
    with open(os.path.join(os.fsencode(c), b"bad\xffname.md"), "wb") as f:
        f.write(b"# Bad name\n\nnarwhal\n")
    (c / "fm-bomb.md").write_text("---\n" + BOMB + "tags: [*i, *i]\n---\n# Bomb\n\nbombword\n")
    (c / "fm-pyobj.md").write_text("---\n" + pyobj + "---\n# Pyobj\n\npyobjword\n")
    (c / "fm-deep.md").write_text("---\ntags: " + DEEP + "---\n# Deep fm\n\ndeepfmword\n")
    # Broken collections: each is reported, none stops the others.
    for name, meta in {
        "meta-bomb": BOMB + "description: *i\n",
        "meta-bomb-extra": "description: fine\n" + BOMB,
        "meta-pyobj": "description: x\nname: " + pyobj,
        "meta-deep": "description: x\ntags: " + DEEP,
        "meta-binary": None,
        "meta-list": "- just\n- a list\n",
        "meta-huge": "description: " + "x" * 70_000 + "\n",
    }.items():
        d = root / name
        d.mkdir()
        if meta is None:
            (d / "_meta.yaml").write_bytes(b"\xff\xfe\x00\x00" + os.urandom(200))
        else:
            (d / "_meta.yaml").write_text(meta)
        (d / "note.md").write_text("# n\n\nunreachable\n")


@pytest.fixture
def bad_root(tmp_path: Path):
    root = tmp_path / "lib"
    build(root)
    before = checksums(root)
    yield root
    assert checksums(root) == before, "memo changed a note"
    assert not (root.parent / "memo-pwned").exists()


def lexical_library(root: Path, tmp_path: Path, **kw) -> Library:
    return Library(root, None, Settings(index_dir=tmp_path / "idx", **kw))


def test_every_bad_kind_is_reported_and_the_rest_indexes(bad_root: Path, tmp_path: Path):
    lib = lexical_library(bad_root, tmp_path)
    t = time.monotonic()
    report = lib.index()
    assert time.monotonic() - t < 120  # bounded: the giant is never read, no bomb expands
    warnings = [w for r in report.reports for w in r.warnings]
    text = "\n".join(warnings + report.errors)

    # every good note (and every odd but valid name) is searchable
    for word, path in [
        ("zanzibar", "bad/good.md"),
        ("marzipan", "bad/latin1.md"),
        ("nulword", "bad/nul-late.md"),
        ("quokka", "bad/" + "d/" * 120 + "deep.md"),
        ("platypus", "bad/with space.md"),
        ("axolotl", "bad/new\nline.md"),
        ("тукан", "bad/ünïcödé-заметка.md"),
        ("bombword", "bad/fm-bomb.md"),
        ("pyobjword", "bad/fm-pyobj.md"),
        ("deepfmword", "bad/fm-deep.md"),
    ]:
        hits = lib.search("bad", word, mode="lex").hits
        assert hits and hits[0].path == path, (word, hits)
    assert lib.search("bad", "w" * 20, mode="lex") is not None

    # each skipped kind has one line saying why
    status = lib.status("bad").to_dict()["collections"][0]
    why = {s["path"]: s["why"] for s in status["skipped"]}
    expect = {
        "bad/binary.md": "binary",
        "bad/noise.md": "binary: 5",  # "binary: 56% of its first 8,192 bytes are not UTF-8 …"
        "bad/huge.md": "too large",
        "bad/loop1.md": "symlink loop",
        "bad/loop2.md": "symlink loop",
        "bad/dangling.md": "broken symlink",
        "bad/outside.md": "out of the library root",
        "bad/fifo.md": "not a regular file",
        "bad/dir.md": None,  # a folder named .md is a folder: walked, not a note
        "bad/bad\\xffname.md": "not valid UTF-8",
    }
    for path, needle in expect.items():
        if needle is None:
            assert path not in why
            continue
        assert needle in why[path], (path, why)
    for s in status["skipped"]:
        assert "\n" not in s["path"] + s["why"]
    for w in warnings:
        assert "\n" not in w, w
    assert "MEMO_MAX_FILE_BYTES" in why["bad/huge.md"]
    assert "anchors bomb" in text and "fm-bomb.md" in text
    assert "characters without whitespace were cut" in text  # the 50,000-character line

    # each broken collection is named with its reason; the good collection indexed anyway
    errs = "\n".join(report.errors)
    for name, needle in {
        "meta-bomb": "anchors bomb",
        "meta-bomb-extra": "anchors bomb",
        "meta-pyobj": "not valid YAML",
        "meta-deep": "nested too deeply",
        "meta-binary": "_meta.yaml",
        "meta-list": "expected a mapping",
        "meta-huge": "64 KiB",
    }.items():
        line = next((e for e in report.errors if f"{name}/_meta.yaml" in e), "")
        assert needle in line, (name, errs)
    assert [r.collection for r in report.reports] == ["bad"]

    # a second run has nothing to do, and still says what it could not index
    again = lib.index()
    assert again.totals()["nothing_to_do"]
    assert any("fifo.md" in w for r in again.reports for w in r.warnings)
    lib.close()


@pytest.mark.slow  # memo as a process, three times
def test_bad_files_in_cli_status_and_logs(bad_root: Path, tmp_path: Path):
    env = {**os.environ, "MEMO_INDEX_DIR": str(tmp_path / "idx"), "MEMO_EMBEDDER": "none"}
    env.pop("MEMO_ROOT", None)
    run = [sys.executable, "-m", "memo"]
    idx = subprocess.run([*run, "index", str(bad_root)], env=env, capture_output=True, text=True)
    assert idx.returncode == 1, idx.stderr  # broken collections: the rest is indexed, exit 1
    assert "Traceback" not in idx.stderr
    assert "7 broken, not indexed" in idx.stdout and "broken: meta-list: " in idx.stdout
    assert "warning: bad/fifo.md: skipped, not a regular file" in idx.stderr
    st = subprocess.run([*run, "status", str(bad_root)], env=env, capture_output=True, text=True)
    assert st.returncode == 1, st.stderr
    assert "meta-huge  [broken: not indexed]" in st.stdout
    assert "skipped bad/huge.md: too large" in st.stdout
    assert "skipped bad/binary.md: binary" in st.stdout
    assert "skipped bad/noise.md: binary: " in st.stdout and "not UTF-8 text" in st.stdout
    assert "meta-pyobj/_meta.yaml" in st.stderr
    out = subprocess.run(
        [*run, "search", str(bad_root / "bad"), "axolotl"], env=env, capture_output=True, text=True
    )
    assert "bad/new\\nline.md:3" in out.stdout  # one line per hit, the newline escaped
    assert "'bad/" not in out.stdout  # the one form: no shell quotes


def test_skips_are_logged(bad_root: Path, tmp_path: Path, caplog):
    with caplog.at_level("WARNING", logger="memo.index"):
        lexical_library(bad_root, tmp_path).index("bad")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for needle in ("binary.md: skipped", "huge.md: skipped", "fifo.md: skipped", "loop1.md"):
        assert needle in logged


def test_every_skip_kind_has_one_wording_and_failures_are_kinds():
    """A kind is a fact, its reason is words: status splits failed from skipped by the kind."""
    from memo.collection import skips

    kinds = {v for k, v in vars(skips).items() if k.isupper() and isinstance(v, str) and v}
    assert kinds == set(skips.MESSAGES)
    facts = {"size": 2, "limit": 1, "error": "Permission denied", "why": "NUL bytes"}
    words = {k: skips.Skip.of(k, **facts).why for k in kinds}
    assert len(set(words.values())) == len(kinds) and all("{" not in w for w in words.values())
    assert {k for k in kinds if skips.Skip(k, words[k]).failed} == {
        skips.UNREADABLE,
        skips.UNSTATABLE,
        skips.FOLDER_UNREADABLE,
    }
    assert not skips.Skip(skips.UNKNOWN, "unreadable: from an old index").failed


def test_resource_limits_are_configurable_and_reported(tmp_path: Path):
    root = tmp_path / "lib"
    c = root / "c"
    c.mkdir(parents=True)
    (c / "_meta.yaml").write_text("description: limits\n")
    (c / "big.md").write_text("# Big\n\n" + "word " * 800)
    many = "\n\n".join(f"## Part {i}\n\nsection number {i} text" for i in range(50))
    (c / "many.md").write_text(many)
    settings = Settings.from_env({"MEMO_MAX_FILE_BYTES": "3000", "MEMO_MAX_CHUNKS_PER_FILE": "7"})
    assert (settings.max_file_bytes, settings.max_chunks_per_file) == (3000, 7)
    lib = Library(
        root, None, Settings(index_dir=tmp_path / "idx", max_file_bytes=3000, max_chunks_per_file=7)
    )
    rep = lib.index()
    text = "\n".join(w for r in rep.reports for w in r.warnings)
    assert "c/big.md: skipped, too large" in text and "MEMO_MAX_FILE_BYTES" in text
    assert "only the first 7 are indexed (MEMO_MAX_CHUNKS_PER_FILE)" in text
    st = lib.status().to_dict()["collections"][0]
    assert st["chunks"] == 7
    assert st["skipped"][0]["path"] == "c/big.md"


def test_file_growing_past_the_limit_while_read_is_skipped(tmp_path: Path, monkeypatch):
    from memo.collection import sync as cm

    root = tmp_path / "lib"
    (root / "c").mkdir(parents=True)
    (root / "c" / "_meta.yaml").write_text("description: x\n")
    (root / "c" / "n.md").write_text("# n\n\n" + "grow " * 100)
    assert cm.read_capped(root / "c" / "n.md", 100) is None  # never reads past limit + 1
    assert cm.read_capped(root / "c" / "n.md", 10_000) == (root / "c" / "n.md").read_bytes()


@pytest.mark.slow
def test_100k_tiny_notes(tmp_path: Path):
    root = tmp_path / "lib"
    c = root / "tiny"
    c.mkdir(parents=True)
    (c / "_meta.yaml").write_text("description: a hundred thousand tiny notes\n")
    for i in range(100):
        d = c / f"d{i:03d}"
        d.mkdir()
        for j in range(1000):
            (d / f"n{j:04d}.md").write_text(f"# N{i}-{j}\n\ntiny note number t{i}x{j}\n")
    lib = lexical_library(root, tmp_path)
    rep = lib.index()
    assert rep.totals()["new"] == 100_000
    hits = lib.search("tiny", "t42x424", mode="lex").hits
    assert hits and hits[0].path == "tiny/d042/n0424.md"
    assert lib.index().totals()["nothing_to_do"]
    lib.close()


# Python as user `nobody`, with no groups (util-linux setpriv).
AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable)


def closed_to_others(*paths: Path) -> Path | None:
    """The first folder on the way to one of `paths` that other users cannot enter (no x bit
    for others: a 0700 home or temp folder), None when every one is open."""
    for path in paths:
        for folder in [*reversed(path.parents), path]:
            try:
                mode = folder.stat().st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                return folder
    return None


def _nobody_can_run_memo(work: Path) -> str | None:
    """Why the unprivileged part cannot run here, in one sentence, or None when it can."""
    import memo

    if os.geteuid() != 0:
        return "not root: chmod 000 already stops us (covered by the plain test below)"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    probe = subprocess.run(
        [*AS_NOBODY, "-c", "import memo.library"],
        capture_output=True,
        text=True,
        cwd=work,
    )
    if probe.returncode == 0:
        return None
    uses = [Path(sys.prefix), Path(sys.executable).resolve().parent, Path(memo.__file__).parent]
    uses += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    closed = closed_to_others(*uses)
    if closed is not None:
        mode = oct(closed.stat().st_mode & 0o777)[2:]
        return f"user nobody cannot enter {closed} (mode {mode}), where this Python or memo lives"
    said = [line for line in probe.stderr.splitlines() if line.strip()]
    return f"memo does not import as user nobody: {said[-1] if said else probe.returncode}"


def test_unreadable_files_and_folders(tmp_path: Path):
    """Root reads everything, so the part with real EACCES runs memo as `nobody` (setpriv)."""
    # The one folder outside tmp_path, on purpose: `nobody` cannot enter pytest's base folder
    # (mode 0700), so this test makes a private one of its own and removes it at the end.
    work = Path(tempfile.mkdtemp(prefix="memo-perm-"))
    try:
        os.chmod(work, 0o755)
        root = work / "lib"
        c = root / "c"
        (c / "sub").mkdir(parents=True)
        (c / "_meta.yaml").write_text("description: permissions\n")
        (c / "ok.md").write_text("# Ok\n\nreadable wombat\n")
        (c / "secret.md").write_text("# Secret\n\nhidden\n")
        (c / "sub" / "inner.md").write_text("# Inner\n\ninner\n")
        for d in (root, c):
            os.chmod(d, 0o755)
        os.chmod(c / "ok.md", 0o644)
        os.chmod(c / "_meta.yaml", 0o644)
        os.chmod(c / "secret.md", 0o000)
        os.chmod(c / "sub", 0o000)
        idx = work / "idx"
        idx.mkdir(mode=0o777)
        os.chmod(idx, 0o777)
        reason = _nobody_can_run_memo(work)
        if reason:
            pytest.skip(reason)
        before = checksums(root)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "MEMO_INDEX_DIR": str(idx),
            "MEMO_EMBEDDER": "none",
            "HOME": str(work),
        }

        def as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*AS_NOBODY, "-m", "memo", *args],
                env=env,
                capture_output=True,
                text=True,
                cwd=work,
                timeout=120,
            )

        out = as_nobody("index", str(root))
        assert out.returncode == 0, out.stderr
        assert "c/secret.md: skipped, unreadable: Permission denied" in out.stderr
        st = as_nobody("status", str(root))
        assert "failed c/secret.md: unreadable: Permission denied" in st.stdout
        assert "failed c/sub: folder cannot be read: Permission denied" in st.stdout
        found = as_nobody("search", str(root), "wombat", "--mode", "lex")
        assert "c/ok.md:3" in found.stdout, found.stderr
        assert checksums(root) == before
    finally:
        for p in (work / "lib" / "c" / "sub", work / "lib" / "c" / "secret.md"):
            if p.exists():
                os.chmod(p, 0o755)
        shutil.rmtree(work, ignore_errors=True)


def test_an_index_counts_every_note_it_says_it_skipped(tmp_path: Path, monkeypatch):
    """Issue 42: "0 skipped" beside "skipped, symlink leads out of the library root", and
    "nothing to do … 2 files up to date" beside "x.md: skipped, binary". `memo index` counts
    what it warns about, every run, and a note it holds as skipped is not "up to date"."""
    from click.testing import CliRunner

    from memo.cli import cli

    root = tmp_path / "lib"
    c = root / "c"
    c.mkdir(parents=True)
    (c / "_meta.yaml").write_text("description: a good note and two it cannot index\n")
    (c / "good.md").write_text("# Good\n\nwords\n")
    (c / "binary.md").write_bytes(b"bin\x00ary")
    (c / "out.md").symlink_to("/etc/hostname")
    lib = lexical_library(root, tmp_path)
    for run in ("first", "second"):
        report = lib.index()
        totals = report.totals()
        said = [w for r in report.reports for w in r.warnings if "skipped" in w]
        assert sorted(said) == [
            "c/binary.md: skipped, binary: NUL bytes in a .md file",
            "c/out.md: skipped, symlink leads out of the library root",
        ], run
        assert totals["skipped"] == len(said), run
        assert totals["unchanged"] == (0 if run == "first" else 1), run
    lib.close()
    monkeypatch.setenv("MEMO_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    out = CliRunner().invoke(cli, ["index", str(root)])
    assert "nothing to do: 1 collections, 1 files up to date, 2 skipped (above)" in out.output


def test_a_note_mostly_not_utf8_is_skipped_as_binary_with_the_reason(tmp_path: Path, monkeypatch):
    """Issue 50, item 6: random bytes without a NUL were indexed as text (chunks 129 -> 148),
    one decoding warning saying so. Mostly undecodable is binary: skipped, and `memo show`
    refuses it, each saying why; a note with a few bytes of another encoding is still text."""
    from click.testing import CliRunner

    from memo.cli import cli

    root = tmp_path / "lib"
    c = root / "c"
    c.mkdir(parents=True)
    (c / "_meta.yaml").write_text("description: text, and what only looks like it\n")
    (c / "noise.md").write_bytes(noise(20_000))
    (c / "cp1251.md").write_bytes("Заметка в старой кодировке. ".encode("cp1251") * 40)
    (c / "latin1.md").write_bytes(b"# Caf\xe9\n\ncr\xe8me br\xfbl\xe9e, cr\xeape, marzipan\n")
    (c / "short.md").write_bytes(b"\xe9t\xe9\n")  # 2 bytes of 5: too few to be binary
    lib = lexical_library(root, tmp_path)
    report = lib.index()
    said = sorted(w for r in report.reports for w in r.warnings if "skipped" in w)
    assert len(said) == 2, said
    for w, name in zip(said, ("cp1251.md", "noise.md"), strict=True):
        assert w.startswith(f"c/{name}: skipped, binary: ") and "bytes are not UTF-8 text" in w
        assert "save it as UTF-8" in w
    assert [h.path for h in lib.search("c", "marzipan", mode="lex").hits] == ["c/latin1.md"]
    lib.close()
    monkeypatch.setenv("MEMO_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    shown = CliRunner().invoke(cli, ["show", str(c / "noise.md"), "--no-server"])
    assert shown.exit_code == 1
    assert "c/noise.md is binary: " in shown.output and "not UTF-8 text" in shown.output
    short = CliRunner().invoke(cli, ["show", str(c / "short.md"), "--no-server"])
    assert short.exit_code == 0, short.output


def test_the_reason_nobody_cannot_run_memo_is_one_sentence_naming_the_folder(tmp_path: Path):
    """Issue 50, item 6: the skip printed the tail of a traceback; a folder closed to others
    on the way to memo (a 0700 temp folder) is named instead."""
    closed = tmp_path / "private"
    inner = closed / "venv" / "bin"
    inner.mkdir(parents=True)
    closed.chmod(0o700)
    above = closed_to_others(tmp_path)  # pytest's own base folder is 0700 when root runs it
    assert closed_to_others(inner) == (above or closed)
    closed.chmod(0o755)
    assert closed_to_others(inner) == above
