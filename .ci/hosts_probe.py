#!/usr/bin/env python3
"""memo under the agent hosts' own code: Hermes Agent, Claude Code, Codex (`.ci/hosts-probe`).

Run with the Python that has memo installed (CI's venv). Everything happens in a scratch
folder: a copy of examples/notes indexed under its own MEMO_INDEX_DIR, a venv with Hermes, an
npm prefix with Claude Code and Codex, and each host's home. What it checks:

docs/agents.md, each block as documented (paths localized, .ci/host_docs.py):
  - Hermes: its config loader reads the stdio, HTTP and discovery-wait entries as written;
    `hermes mcp test memo` prints "✓ Connected" and "Tools discovered: 8" over stdio and over
    HTTP with the token (it exits 0 either way, so its output is read), and not with a wrong
    token; the skill install block writes a skill Hermes lists only with memo connected.
  - Claude Code: `claude mcp add` writes exactly the documented `.mcp.json`; once approved,
    `claude mcp get memo` starts memo and says "✔ Connected", over stdio and over HTTP with
    `${MEMO_TOKEN}` expanded by Claude Code; `MCP_TIMEOUT` from the block is taken.
  - Codex: `codex mcp get memo --json` reads the stdio and the HTTP entries as documented.
Hermes, through its own registry and MCP client (.ci/hermes_tools.py): discovery lists memo's
  tools in toolset mcp-memo; memo_route → memo_search → memo_get (path:line-end) answer; so do
  ChatGPT's pair, `search` (JSON results) → `fetch` of the first result's id (its cited lines).
Hermes's real loop, `hermes chat -q` with Hermes's default settings (only the model endpoint
  set), against .ci/scripted_model.py, over stdio and over HTTP with a token:
  - the first request the model gets already lists memo's tools (and the memo skill), and
    memo_search and memo_route with the agent's words (`also`, `keywords`, `answer`),
    each with its description;
  - the results of memo_route, memo_search, memo_get (all with max_tokens=300) reach the
    model, and each takes at most 1.1 × 4 × 300 characters of the model's message, counted
    without Hermes's own <untrusted_tool_result> wrapper (a constant Hermes adds to every MCP
    result: reported, not asserted, since memo cannot bound it);
  - the script reaches its answer;
  - the agent's words (script `words`): an English question of the Russian notes asked alone,
    then with phrasings, keywords and a likely answer through Hermes's loop; with them the
    model reads the section first, with confidence high.

Offline parts of Hermes (it fetches a `tirith` binary from GitHub, lazy-installs edge-tts)
fail on their own without failing the probe: every host command has a timeout and its
process group is killed at it; the scripted model stops itself.

The Hermes venv is built once per pin under ~/.cache/memo-ci/ (XDG_CACHE_HOME) and reused
while it holds that version; HOSTS_PROBE_VENV=DIR puts it elsewhere. HOSTS_PROBE_KEEP=1 keeps
the scratch folder; HOSTS_PROBE_JSON=FILE writes the report as JSON.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import host_docs  # noqa: E402
import scripted_model  # noqa: E402

HERMES = "hermes-agent[mcp]==0.19.0"
EDGE_TTS = "edge-tts==7.2.7"  # what Hermes 0.19.0 lazy-installs when it lists its TTS tool
CLAUDE = "@anthropic-ai/claude-code@2.1.332"
CODEX = "@openai/codex@0.171.0"
MAX_TOKENS = 300
LIMIT = round(1.1 * 4 * MAX_TOKENS)  # characters a tool result may take in the model's message
READ_TOOLS = ("memo_route", "memo_search", "memo_get")
MEMO_TOOLS = (
    *READ_TOOLS,
    "memo_related",
    "memo_status",
    "memo_why",
    "memo_reindex",
    "search",
    "fetch",
)
TOOLS = len(MEMO_TOOLS)
WORDS = ("also", "keywords", "answer")  # what memo_search and memo_route ask of every call
TOOLS_BUDGET = 2_500  # tokens of memo's tools in the model's request, every turn (issue 50)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Probe:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.failures: list[str] = []
        self.lines: list[str] = []
        self.report: dict[str, Any] = {"pins": [HERMES, EDGE_TTS, CLAUDE, CODEX], "phases": {}}
        self.t0 = time.monotonic()

    # ------------------------------------------------------------------ bookkeeping
    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        self.lines.append(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
        print(self.lines[-1], flush=True)
        if not ok:
            self.failures.append(what)
        return ok

    def phase(self, name: str, started: float) -> None:
        self.report["phases"][name] = round(time.monotonic() - started, 1)

    def run(
        self,
        cmd: list[str],
        env: dict[str, str],
        timeout: float,
        cwd: Path | None = None,
        log: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a host command in its own process group; at `timeout` the group is killed and
        the result says so (rc -9), rather than the probe hanging."""
        p = subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd or self.work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            err += f"\n[hosts-probe: killed after {timeout:.0f} s]"
        if log:
            (self.work / "logs").mkdir(exist_ok=True)
            (self.work / "logs" / log).write_text(
                f"$ {' '.join(cmd)}\n--- rc {p.returncode}\n{out}\n--- stderr\n{err}"
            )
        return subprocess.CompletedProcess(cmd, p.returncode, ANSI.sub("", out), err)

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        t = time.monotonic()
        venv = Path(os.environ.get("HOSTS_PROBE_VENV") or _cache() / HERMES.replace("[mcp]==", "-"))
        self.hermes_py = venv / "bin" / "python"
        installs = []
        self.report["hermes_venv"] = f"{venv} ({'reused' if self._has_hermes(venv) else 'built'})"
        if not self._has_hermes(venv):
            venv.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            installs.append(
                subprocess.Popen(
                    [str(self.hermes_py), "-m", "pip", "install", "-q", "--no-input",
                     "--disable-pip-version-check", HERMES, EDGE_TTS],
                    stdout=subprocess.DEVNULL,
                    stderr=(self.work / "pip.log").open("w"),
                )
            )  # fmt: skip
        npm = self.work / "npm"
        installs.append(
            subprocess.Popen(
                ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(npm),
                 CLAUDE, CODEX],
                stdout=subprocess.DEVNULL,
                stderr=(self.work / "npm.log").open("w"),
            )
        )  # fmt: skip
        # Meanwhile: the library, indexed under its own MEMO_INDEX_DIR (so a memo that did
        # not get the env block would find no index, and build one beside the notes).
        self.memo = shutil.which("memo") or str(Path(sys.executable).with_name("memo"))
        self.root = self.work / "notes"
        shutil.copytree(REPO / "examples" / "notes", self.root)
        # a collection in Chinese, for an English question asked of it (cross-language-zh)
        (self.root / "reading").mkdir()
        (self.root / "reading" / "_meta.yaml").write_text(
            "description: 读书笔记：科学家和发明家的生平\n", encoding="utf-8"
        )
        (self.root / "reading" / "tesla.md").write_text(
            "# 尼古拉·特斯拉\n\n## 童年\n\n尼古拉·特斯拉于1856年7月10日出生在斯米良村，"
            "父亲是一位东正教神父。\n\n## 发明\n\n特斯拉发明了交流感应电动机和特斯拉线圈。\n",
            encoding="utf-8",
        )
        self.index_dir = self.work / "indexes"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMO_")}
        memo_env = self.env | {"MEMO_INDEX_DIR": str(self.index_dir)}
        subprocess.run(
            [self.memo, "index", str(self.root)], env=memo_env, check=True, capture_output=True
        )
        self.memo_env = memo_env
        self.memo_env_only = {"MEMO_INDEX_DIR": str(self.index_dir)}
        for p in installs:
            try:
                p.wait(timeout=600)
            except subprocess.TimeoutExpired:
                p.kill()  # reported below as a missing host
        self.check(
            self._has_hermes(venv), f"install {HERMES} {EDGE_TTS}", _tail(self.work / "pip.log")
        )
        self.bin = self.work / "bin"  # what the doc blocks call by name
        self.bin.mkdir()
        for name, target in (
            ("hermes", venv / "bin" / "hermes"),
            ("claude", npm / "node_modules" / ".bin" / "claude"),
            ("codex", npm / "node_modules" / ".bin" / "codex"),
            ("memo", Path(self.memo)),
        ):
            self.check(target.exists(), f"{name} installed", str(target))
            (self.bin / name).symlink_to(target)
        self.env["PATH"] = f"{self.bin}:{self.env.get('PATH', '')}"
        self.cwd = self.work / "cwd"  # hosts read context files from their folder: an empty one
        self.cwd.mkdir()
        self.phase("setup (venv, npm, index)", t)
        self.report["versions"] = {
            "hermes": self._version([str(self.bin / "hermes"), "--version"]),
            "claude": self._version([str(self.bin / "claude"), "--version"]),
            "codex": self._version([str(self.bin / "codex"), "--version"]),
        }

    def _has_hermes(self, venv: Path) -> bool:
        want = HERMES.split("==")[1]
        py = venv / "bin" / "python"
        if not py.exists():
            return False
        got = subprocess.run(
            [str(py), "-c", "import importlib.metadata as m; print(m.version('hermes-agent'))"],
            capture_output=True,
            text=True,
        )
        return got.stdout.strip() == want

    def _version(self, cmd: list[str]) -> str:
        home = self.work / "version-home"  # each host writes into its home, even for this
        home.mkdir(exist_ok=True)
        homes = {"HERMES_HOME": str(home), "CODEX_HOME": str(home), "HOME": str(home)}
        r = self.run(cmd, self.env | homes, 60)
        return (r.stdout.strip().splitlines() or ["?"])[0][:80]

    def block(self, name: str, port: int = 8765) -> str:
        lang, body = host_docs.blocks()[name]
        return host_docs.localize(
            body, self.memo, str(self.root), str(self.index_dir), f"127.0.0.1:{port}"
        )

    def sh(self, name: str, env: dict[str, str], cwd: Path, timeout: float = 120, port: int = 8765):
        return self.run(
            ["bash", "-euo", "pipefail", "-c", self.block(name, port)], env, timeout, cwd, log=name
        )

    # ------------------------------------------------------------------ Hermes
    def hermes_home(self, label: str, blocks: list[str], port: int, model_port: int = 0) -> dict:
        home = self.work / "hermes" / label
        home.mkdir(parents=True)
        parts = [self.block(b, port) for b in blocks]
        if model_port:  # the one setting the chat runs change: the model endpoint
            parts.append(
                "model:\n  provider: custom\n  default: scripted-memo-model\n"
                f"  base_url: http://127.0.0.1:{model_port}/v1\n"
            )
        (home / "config.yaml").write_text("\n".join(parts))
        env = self.env | {"HERMES_HOME": str(home)}
        # The skill is installed from the user's shell, where the MEMO_* settings are set
        r = self.sh("hermes-skill", env | self.memo_env_only, self.cwd)
        skill = home / "skills" / "memo-notes" / "SKILL.md"
        self.check(
            r.returncode == 0
            and skill.exists()
            and "requires_toolsets: [mcp-memo]" in skill.read_text(),
            f"hermes {label}: the skill install block writes SKILL.md with requires_toolsets",
            r.stderr.strip()[-200:],
        )
        return env

    def hermes_test(self, label: str, env: dict[str, str], expect: bool) -> None:
        r = self.sh("hermes-test", env, self.cwd, timeout=150)
        (self.work / "logs" / f"hermes-test-{label}.txt").write_text(r.stdout + r.stderr)
        out = r.stdout
        connected = "✓ Connected" in out and f"Tools discovered: {TOOLS}" in out
        ms = re.search(r"Connected \((\d+)ms\)", out)
        what = f"hermes mcp test memo ({label})"
        if expect:
            self.check(
                connected, what + f": ✓ Connected, {TOOLS} tools", ms.group(0) if ms else out[-300:]
            )
        else:
            self.check(not connected and "✗" in out, what + ": refused", out.strip()[-120:])

    def hermes_registry(self) -> None:
        t = time.monotonic()
        env = self.hermes_home("registry", ["hermes-stdio", "hermes-discovery"], 8765)
        cfg = self.work / "hermes" / "registry" / "config.yaml"
        import yaml  # memo depends on PyYAML

        documented = yaml.safe_load(cfg.read_text())
        r = self.run(
            [str(self.hermes_py), str(HERE / "hermes_tools.py"), "--max-tokens", str(MAX_TOKENS)],
            env,
            240,
            self.cwd,
            log="hermes-registry",
        )
        try:
            got = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            self.check(False, "hermes registry run", (r.stdout + r.stderr)[-600:])
            return
        self.check(
            got["config_mcp_servers"] == documented["mcp_servers"]
            and got["loaded_mcp_servers"] == documented["mcp_servers"],
            "hermes config loader: reads the hermes-stdio block as documented",
        )
        self.check(
            got["discovery_timeout_s"] == documented["mcp_discovery_timeout"],
            "hermes config loader: mcp_discovery_timeout from the hermes-discovery block",
            str(got["discovery_timeout_s"]),
        )
        # memo's own: Hermes adds its utility tools (prompts, resources) under the same prefix
        memo_tools = [n for n in got["tools"] if n.split("__")[-1] in MEMO_TOOLS]
        self.check(
            sorted(memo_tools) == sorted(f"mcp__memo__{t}" for t in MEMO_TOOLS)
            and got["toolsets"] == ["mcp-memo"],
            f"hermes registry: discovers memo's {TOOLS} tools in toolset mcp-memo",
            f"{len(got['tools'])} tools in {got['toolsets']}, {got['discover_s']} s",
        )
        calls = {c["tool"]: c for c in got["calls"]}
        for tool in READ_TOOLS:
            c = calls.get(tool)
            ok = c is not None and c["error"] is None and c["payload_chars"] <= LIMIT
            self.check(
                ok,
                f"hermes registry: {tool}(max_tokens={MAX_TOKENS}) answers within {LIMIT} chars",
                f"{c['payload_chars']} chars, {c['message_chars']} wrapped, {c['seconds']} s"
                if c
                else "not called",
            )
        self.check(
            got["skill_listed_with_memo"] and not got["skill_listed_without_memo"],
            "hermes skill index: memo-notes listed with mcp-memo, hidden without",
        )
        self.deep_research(got.get("deep") or [])
        self.report["registry"] = {
            c["tool"]: {k: c[k] for k in ("payload_chars", "message_chars", "seconds")}
            for c in got["calls"]
        }
        self.phase("hermes registry", t)

    def deep_research(self, calls: list[dict]) -> None:
        """ChatGPT's pair through Hermes's registry: `search` answers JSON results, and `fetch`
        of the first one's id answers that hit's lines, the id and url round-tripped."""
        found = calls[0] if calls else {}
        results = (_loads(found.get("text") or "") or {}).get("results") or []
        self.check(
            bool(results) and set(results[0]) >= {"id", "title", "url"},
            "hermes registry: search answers JSON results of id, title, url",
            (found.get("error") or found.get("text") or "not called")[:200],
        )
        doc = _loads(calls[1]["text"]) if len(calls) > 1 else None
        ok = isinstance(doc, dict) and bool(results) and doc.get("id") == results[0]["id"]
        ok = ok and doc.get("url") == results[0]["url"] and bool(doc.get("text"))
        self.check(
            ok,
            "hermes registry: fetch of the first result's id answers its lines",
            json.dumps(doc, ensure_ascii=False)[:200] if doc else "not called",
        )

    def hermes_chat(self, transport: str, port: int = 8765, token: str = "") -> None:
        t = time.monotonic()
        label = f"chat-{transport}"
        log = self.work / "logs" / f"{label}-model.jsonl"
        log.parent.mkdir(exist_ok=True)
        model = scripted_model.ScriptedModel(
            scripted_model.SCRIPTS["route-search-get"], log, max_requests=40, max_seconds=200
        )
        model_port = model.start()
        block = "hermes-stdio" if transport == "stdio" else "hermes-http"
        env = self.hermes_home(label, [block], port, model_port)
        if token:
            env["MEMO_TOKEN"] = token
        if transport == "http":
            self.hermes_test("http", env, expect=True)
            self.hermes_test("http, wrong token", env | {"MEMO_TOKEN": "wrong-" + token}, False)
        else:
            self.hermes_test("stdio", env, expect=True)
        question = scripted_model.SCRIPTS["route-search-get"]["question"]
        r = self.run(
            [str(self.bin / "hermes"), "chat", "-q", question], env, 240, self.cwd, log=label
        )
        time.sleep(1.0)  # a trailing side request (the session title) lands
        model.stop()
        rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        self.analyse_chat(transport, rows, r)
        self.phase(f"hermes chat -q ({transport})", t)

    def analyse_chat(
        self, transport: str, rows: list[dict], r: subprocess.CompletedProcess
    ) -> None:
        what = f"hermes chat -q ({transport}, default settings)"
        chats = [
            x for x in rows if x["method"] == "POST" and x["path"].endswith("/chat/completions")
        ]
        agent = [x for x in chats if (x["body"] or {}).get("tools")]
        if not self.check(
            bool(agent), f"{what}: the model was asked", f"rc {r.returncode}, {r.stderr[-300:]}"
        ):
            return
        first = chats[0]["body"]  # the very first request the model gets, side ones included
        names = scripted_model.tool_names(first)
        memo = sorted(n for n in names if n.startswith("mcp__memo__"))
        self.check(
            all(f"mcp__memo__{t}" in names for t in READ_TOOLS),
            f"{what}: the first model request lists memo's tools",
            f"{len(memo)} of its {len(names)} tools are memo's",
        )
        listed, whole = listed_tokens(first)
        self.check(
            0 < listed <= TOOLS_BUDGET,
            f"{what}: memo's tools as Hermes lists them take ≤ {TOOLS_BUDGET} tokens",
            f"{listed} (name, description, parameters; {whole} as Hermes's function objects)",
        )
        for tool in ("memo_search", "memo_route"):  # the agent's words, declared (issue 43)
            props = scripted_model.tool_params(first, tool)
            words = {w: (props.get(w) or {}).get("description", "") for w in WORDS}
            self.check(
                all(words.values()),
                f"{what}: the model is offered {tool} with {', '.join(WORDS)}, each described",
                "; ".join(f"{w}: {d[:40]!r}" for w, d in words.items()),
            )
        system = next(
            (m.get("content") or "" for m in first["messages"] if m["role"] == "system"), ""
        )
        self.check(
            "memo-notes" in str(system), f"{what}: the first request's skill index lists memo-notes"
        )
        steps = [x["answer"]["step"] for x in agent if x.get("answer")]
        self.check(
            steps[-1:] == ["answer"] and "From the notes" in r.stdout,
            f"{what}: the script ran route → search → get → answer",
            f"steps {steps}, chat rc {r.returncode}",
        )
        conv = scripted_model.conversation(agent[-1]["body"])
        seen = {c["step"]: c for c in conv["calls"] if c["result"]}
        sizes = {}
        for step, tool in zip(("route", "search", "get"), READ_TOOLS, strict=True):
            c = seen.get(step)
            if not self.check(
                c is not None and c["result"]["error"] is None,
                f"{what}: {tool}'s result reached the model",
                (c["result"]["error"] or "") if c else "no result in the last request",
            ):
                continue
            v = c["result"]
            sizes[tool] = {"payload_chars": v["payload_chars"], "message_chars": v["message_chars"]}
            self.check(
                v["payload_chars"] <= LIMIT,
                f"{what}: {tool}(max_tokens={MAX_TOKENS}) takes ≤ {LIMIT} chars of the message",
                f"{v['payload_chars']} chars; {v['message_chars']} with Hermes's wrapper; "
                f"args {c['arguments']}",
            )
        self.report[f"chat_{transport}"] = {
            "memo_tools_tokens": listed,
            "memo_tools_tokens_as_sent": whole,
            "first_request_tools": len(names),
            "first_request_memo_tools": len(memo),
            "steps": steps,
            "sizes": sizes,
            # from Hermes's first contact with the endpoint (its model probes) to its first turn
            "first_turn_s": round(chats[0]["t"] - rows[0]["t"], 1),
        }

    def hermes_cross_language(
        self,
        name: str = "cross-language",
        notes: str = "Russian",
        hit: str = "home/cooking/sourdough.md:15",
    ) -> None:
        """An English question of Russian (or Chinese) notes through Hermes: memo's warning,
        naming the notes' language, reaches the model, which asks again with the translation
        as `also`, and finds the section."""
        t = time.monotonic()
        label = f"chat-{name}"
        log = self.work / "logs" / f"{label}-model.jsonl"
        script = scripted_model.SCRIPTS[name]
        model = scripted_model.ScriptedModel(script, log, max_requests=40, max_seconds=200)
        env = self.hermes_home(label, ["hermes-stdio"], 8765, model.start())
        r = self.run(
            [str(self.bin / "hermes"), "chat", "-q", script["question"]],
            env,
            240,
            self.cwd,
            log=label,
        )
        time.sleep(1.0)
        model.stop()
        rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        agent = [x for x in rows if x["method"] == "POST" and (x["body"] or {}).get("tools")]
        steps = [x["answer"]["step"] for x in agent if x.get("answer")]
        what = f"hermes chat -q, an English question of {notes} notes"
        self.check(
            steps[-1:] == ["answer"] and "again" in steps,
            f"{what}: memo's warning led the model to ask again with also",
            f"steps {steps}, chat rc {r.returncode}",
        )
        conv = scripted_model.conversation(agent[-1]["body"]) if agent else {"calls": []}
        again = next((c for c in conv["calls"] if c["step"] == "again" and c["result"]), None)
        text = again["result"]["text"] if again else ""
        self.check(
            f"1. {hit}" in text,
            f"{what}: the search with also found the section ({hit})",
            text[:300],
        )
        self.report[name.replace("-", "_")] = {"steps": steps}
        self.phase(f"hermes chat -q ({name})", t)

    def hermes_words(self) -> None:
        """The agent's words through Hermes's loop (issue 43): an English question of Russian
        notes asked alone, then with phrasings, keywords and a likely answer; the model reads
        the section first, confidence high, only with them."""
        t = time.monotonic()
        label = "chat-words"
        log = self.work / "logs" / f"{label}-model.jsonl"
        script = scripted_model.SCRIPTS["words"]
        model = scripted_model.ScriptedModel(script, log, max_requests=40, max_seconds=200)
        env = self.hermes_home(label, ["hermes-stdio"], 8765, model.start())
        r = self.run(
            [str(self.bin / "hermes"), "chat", "-q", script["question"]],
            env,
            240,
            self.cwd,
            log=label,
        )
        time.sleep(1.0)
        model.stop()
        rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        agent = [x for x in rows if x["method"] == "POST" and (x["body"] or {}).get("tools")]
        steps = [x["answer"]["step"] for x in agent if x.get("answer")]
        what = "hermes chat -q, the agent's words"
        conv = scripted_model.conversation(agent[-1]["body"]) if agent else {"calls": []}
        read = {c["step"]: c["result"]["text"] for c in conv["calls"] if c["result"]}
        sent = next((c["arguments"] for c in conv["calls"] if c["step"] == "words"), "{}")
        self.check(
            steps[-1:] == ["answer"] and all(w in json.loads(sent or "{}") for w in WORDS),
            f"{what}: the words reached memo_search through Hermes's loop",
            f"steps {steps}, args {sent}, chat rc {r.returncode}",
        )
        heads = {k: v.split("\n")[0] for k, v in read.items()}
        with_words = read.get("words", "")
        self.check(
            "1. work/networking/vlan.md:11" in with_words and heads["words"].endswith("high"),
            f"{what}: with them the model reads the section first, confidence high",
            f"alone: {heads.get('plain', '')[-20:]!r} {_top(read.get('plain', ''))}; "
            f"with words: {heads.get('words', '')[-20:]!r} {_top(with_words)}",
        )
        self.report["words"] = {
            "alone": _top(read.get("plain", "")),
            "with_words": _top(with_words),
            "confidence": {k: v.rsplit(" ", 1)[-1] for k, v in heads.items()},
        }
        self.phase("hermes chat -q (words)", t)

    def hermes(self) -> None:
        self.hermes_registry()
        self.hermes_chat("stdio")
        self.hermes_cross_language()
        self.hermes_cross_language("cross-language-zh", "Chinese", "reading/tesla.md:5")
        self.hermes_words()
        self.check(
            not (self.root / ".memo").exists(),
            "hermes stdio: the env block reached memo (no index built beside the notes)",
        )

    # ------------------------------------------------------------------ memo serve
    def serve(self) -> tuple[subprocess.Popen, int, str]:
        token = secrets.token_urlsafe(16)
        port = _free_port()
        p = subprocess.Popen(
            [self.memo, "serve", str(self.root), "--port", str(port), "--token", token,
             "--log-level", "warning"],
            env=self.memo_env,
            stdout=(self.work / "logs" / "serve.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        end = time.monotonic() + 120
        while time.monotonic() < end and p.poll() is None:
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/health", headers={"Authorization": f"Bearer {token}"}
            )
            try:
                with urllib.request.urlopen(req, timeout=2) as resp:
                    if json.loads(resp.read()).get("model_loaded", True):
                        break
            except OSError:
                pass
            time.sleep(0.3)
        self.check(p.poll() is None, "memo serve --token runs", f"port {port}")
        return p, port, token

    # ------------------------------------------------------------------ Claude Code
    def claude(self, port: int, token: str) -> None:
        t = time.monotonic()
        home = self.work / "claude" / "home"
        (home / ".claude").mkdir(parents=True)
        # Approval of a project's .mcp.json servers, as the docs say (the prompt `claude` shows)
        (home / ".claude" / "settings.json").write_text('{"enabledMcpjsonServers": ["memo"]}\n')
        # Claude Code keeps its logs in XDG_CACHE_HOME: a scratch one, where memo (which
        # Claude Code starts with its own environment) still finds the model memo built
        cache = home / ".cache"
        cache.mkdir()
        real = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memo"
        (cache / "memo").symlink_to(real, target_is_directory=True)
        env = self.env | {
            "HOME": str(home),
            "XDG_CACHE_HOME": str(cache),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "TMPDIR": str(home),  # Claude Code leaves a folder in its TMPDIR
            "MEMO_INDEX_DIR": str(self.index_dir),
        }
        timeout = re.search(r"MCP_TIMEOUT=(\d+)", self.block("claude-timeout"))
        env["MCP_TIMEOUT"] = timeout.group(1) if timeout else ""
        proj = self.work / "claude" / "stdio"
        proj.mkdir()
        r = self.sh("claude-add", env, proj, timeout=60)
        written = _json(proj / ".mcp.json")
        self.check(
            r.returncode == 0 and written == json.loads(self.block("claude-mcp-json")),
            "claude mcp add writes the documented .mcp.json",
            (r.stderr or json.dumps(written))[-300:],
        )
        get = self.run(
            [str(self.bin / "claude"), "mcp", "get", "memo"], env, 120, proj, "claude-get"
        )
        self.check(
            "✔ Connected" in get.stdout,
            f"claude mcp get memo (stdio, MCP_TIMEOUT={env['MCP_TIMEOUT']}): ✔ Connected",
            _status(get.stdout),
        )
        proj = self.work / "claude" / "http"
        proj.mkdir()
        r = self.sh("claude-http", env, proj, timeout=60, port=port)
        server = (_json(proj / ".mcp.json") or {}).get("mcpServers", {}).get("memo", {})
        self.check(
            r.returncode == 0
            and server.get("headers") == {"Authorization": "Bearer ${MEMO_TOKEN}"}
            and server.get("url") == f"http://127.0.0.1:{port}/mcp",
            "claude mcp add --transport http keeps ${MEMO_TOKEN} unexpanded in .mcp.json",
            json.dumps(server),
        )
        for tok, expect in ((token, True), ("wrong-" + token, False)):
            get = self.run(
                [str(self.bin / "claude"), "mcp", "get", "memo"],
                env | {"MEMO_TOKEN": tok},
                120,
                proj,
                "claude-get-http",
            )
            ok = ("✔ Connected" in get.stdout) == expect
            what = "✔ Connected" if expect else "refused with a wrong token"
            self.check(ok, f"claude mcp get memo (http): {what}", _status(get.stdout))
        self.phase("claude code", t)

    # ------------------------------------------------------------------ Codex
    def codex(self, port: int) -> None:
        t = time.monotonic()
        for name, expect in (
            (
                "codex-stdio",
                {
                    "type": "stdio",
                    "command": self.memo,
                    "args": ["mcp", str(self.root)],
                    "env": {"MEMO_INDEX_DIR": str(self.index_dir)},
                },
            ),
            (
                "codex-http",
                {
                    "type": "streamable_http",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "bearer_token_env_var": "MEMO_TOKEN",
                },
            ),
        ):
            home = self.work / "codex" / name
            home.mkdir(parents=True)
            text = self.block(name, port)
            (home / "config.toml").write_text(text)
            documented = tomllib.loads(text)["mcp_servers"]["memo"]
            r = self.run(
                [str(self.bin / "codex"), "mcp", "get", "memo", "--json"],
                self.env | {"CODEX_HOME": str(home)},
                60,
                self.cwd,
                log=name,
            )
            got = _loads(r.stdout) or {}
            transport = got.get("transport") or {}
            ok = all(transport.get(k) == v for k, v in expect.items()) and got.get(
                "startup_timeout_sec"
            ) == documented.get("startup_timeout_sec")
            self.check(
                ok,
                f"codex mcp get memo --json reads the {name} block as documented",
                json.dumps(got)[:300] if not ok else "",
            )
        self.phase("codex", t)


def _cache() -> Path:
    """Where the Hermes venv is kept between runs: built once per pin, since deleting its
    13,000 files took longer here (~50 s) than the rest of a warm probe's cleanup."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memo-ci"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def listed_tokens(body: dict[str, Any]) -> tuple[int, int]:
    """Tokens of memo's tools in a request to the model, counted with memo's tokenizer (what
    docs/agents.md counts): each tool's name as memo names it, description and parameters,
    as JSON; and the whole function objects Hermes sends (its `mcp__memo__` prefix and
    wrapper included). Hermes's own tools for memo's resources and prompts are not counted."""
    from memo.config import Settings
    from memo.embed import embedder_for

    count = embedder_for(Settings()).count_tokens  # type: ignore[union-attr]
    memo = {f"mcp__memo__{t}" for t in MEMO_TOOLS}  # not the resource/prompt tools Hermes adds
    mine = [t for t in body.get("tools") or [] if (t.get("function") or t).get("name") in memo]
    fns = [t.get("function") or t for t in mine]
    listed = [
        {"name": f["name"].removeprefix("mcp__memo__"), "description": f.get("description"),
         "parameters": f.get("parameters")}
        for f in fns
    ]  # fmt: skip
    empty = count("")
    as_json = lambda x: json.dumps(x, ensure_ascii=False)  # noqa: E731
    return count(as_json(listed)) - empty, count(as_json(mine)) - empty


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _status(out: str) -> str:
    m = re.search(r"Status: (.*)", out)
    return m.group(1).strip() if m else out.strip()[-200:]


def _top(text: str) -> str:
    """The first hit of a search's text (`path:line`), or ''."""
    m = re.search(scripted_model.TOP_HIT, text, re.M)
    return m.group(1) if m else ""


def _tail(path: Path) -> str:
    try:
        lines = [x for x in path.read_text().splitlines() if x.strip() and "WARNING" not in x]
    except OSError:
        return ""
    return " | ".join(lines[-3:])[-300:]


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="memo-hosts-probe-"))
    probe = Probe(work)
    serve = None
    try:
        probe.setup()
        if probe.failures:
            return 1
        probe.hermes()
        serve, port, token = probe.serve()
        probe.hermes_chat("http", port, token)
        probe.claude(port, token)
        probe.codex(port)
    finally:
        if serve is not None:
            os.killpg(serve.pid, signal.SIGTERM)
            try:
                serve.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(serve.pid, signal.SIGKILL)
        total = round(time.monotonic() - probe.t0, 1)
        probe.report |= {"total_s": total, "loadavg": os.getloadavg(), "failures": probe.failures}
        print(_summary(probe.report), flush=True)
        if os.environ.get("HOSTS_PROBE_JSON"):
            Path(os.environ["HOSTS_PROBE_JSON"]).write_text(json.dumps(probe.report, indent=1))
        if os.environ.get("HOSTS_PROBE_KEEP") or probe.failures:
            print(f"hosts-probe: scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        print(f"hosts-probe: done in {time.monotonic() - probe.t0:.1f} s", flush=True)
    return 1 if probe.failures else 0


def _summary(rep: dict[str, Any]) -> str:
    out = [f"hosts-probe: {rep.get('versions', {})}; venv {rep.get('hermes_venv')}"]
    for transport in ("stdio", "http"):
        chat = rep.get(f"chat_{transport}")
        if chat:
            sizes = ", ".join(
                f"{t} {s['payload_chars']} ({s['message_chars']} wrapped)"
                for t, s in chat["sizes"].items()
            )
            out.append(
                f"hosts-probe: chat {transport}: memo's tools {chat['memo_tools_tokens']} tokens "
                f"({chat['memo_tools_tokens_as_sent']} as sent)"
            )
            out.append(
                f"hosts-probe: chat {transport}: first request {chat['first_request_memo_tools']}"
                f"/{chat['first_request_tools']} memo tools; chars of {LIMIT}: {sizes}"
            )
    words = rep.get("words")
    if words:
        conf = words["confidence"]
        out.append(
            f"hosts-probe: words: alone {words['alone']} ({conf.get('plain')}), with words "
            f"{words['with_words']} ({conf.get('words')})"
        )
    phases = ", ".join(f"{k} {v} s" for k, v in rep["phases"].items())
    load = " ".join(f"{x:.2f}" for x in rep["loadavg"])
    out.append(f"hosts-probe: {rep['total_s']} s ({phases}); load average {load}")
    out.append(
        "hosts-probe: "
        + ("FAILED: " + "; ".join(rep["failures"]) if rep["failures"] else "all checks passed")
    )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
