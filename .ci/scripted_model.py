#!/usr/bin/env python3
"""A scripted model behind an OpenAI-compatible API, for driving agent hosts in CI.

An agent host (Hermes Agent, or anything else that speaks OpenAI chat completions) is pointed
at this server instead of a real model. The server answers every request from a *script*: a
list of steps, as data, each either a tool call or a final answer. It stdlib-only, listens on
127.0.0.1 only, logs every request it receives, and stops by itself.

    python3 .ci/scripted_model.py --script route-search-get --log req.jsonl --port-file port \\
        [--question "..."] [--max-requests 40] [--max-seconds 240]

`--script` names a built-in script (SCRIPTS below) or a JSON file of the same shape.

The script
----------
A script is a dict: {"question": default question, "vars": {name: value}, "steps": [...]}.
Each step is one of

    {"id": "route", "call": "memo_route", "args": {...}, "capture": {"name": REGEX}}
    {"id": "answer", "say": "text"}

and may carry `"when": {step_id: REGEX}` / `"unless": {step_id: REGEX}`: the step runs only
if the named earlier step's result matches (does not match) the regex; otherwise it is
skipped. Strings anywhere in `args` and `say` are templates: `{question}` (the conversation's
user question, else the script's), `{vars.NAME}`, and `{STEP.NAME}` (what step STEP's capture
NAME matched: group 1 of the regex, searched with re.M in that step's result *text*).

The next step is decided from the conversation the host sends, never from server state, so
retries and side requests do not shift it: the server names each tool call it makes
`call_<step id>_<n>`, finds those calls and their results in the messages, and runs the first
step after the last one done whose `when`/`unless` hold. A result's text is what the tool
returned, with the host's envelope taken off (`host_view`: Hermes wraps an MCP result in
`<untrusted_tool_result …>` plus a preamble, around JSON `{"result": text}`).

- A tool is looked up in the request's own tool list by its name or by a name ending in
  `__<name>` (Hermes and Claude Code call memo_route `mcp__memo__memo_route`). When the next
  step's tool is not offered, the answer says so ("memo tools were not offered: …"), so a
  caller's assertion fails with a reason rather than a hang.
- A capture that does not match stops the script: the answer says which step and regex.
- A request that lists no tools at all (a host's side request: a title, a summary) gets a
  short plain answer and does not advance the script.

Extending it: add a dict to SCRIPTS (or a JSON file). E.g. a cross-language flow, an English
question asked of Russian notes, where memo warns and the model asks again:

    {"id": "search", "call": "memo_search", "args": {"path": ".", "query": "{question}"},
     "capture": {"warning": r"^warning: (.+)$"}},
    {"id": "again", "when": {"search": r"^warning: .*language"}, "call": "memo_search",
     "args": {"path": ".", "query": "{question}", "also": ["{vars.translation}"]}},
    {"id": "answer", "say": "…"}

Used as a module: `ScriptedModel(script, log_path).start()` returns the port; `.stop()`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL = "scripted-memo-model"

# memo's MCP text (src/memo/server/render.py): a route lists "1. <collection path>  — …",
# a search "1. <path>:<line>[-<end>]  [heading]  score …".
TOP_COLLECTION = r"^1\. (\S+)  — "
TOP_HIT = r"^1\. (\S+?:\d+(?:-\d+)?)\s"
CONFIDENCE = r"; confidence (high|low|none)$"  # the search's first line

def _cross_language(question: str, translation: str, path: str, notes: str) -> dict:
    """An English question of notes in another language: memo's warning names the notes'
    language (`notes`, a regex), the model asks again with the translation as `also`."""
    return {
        "question": question,
        "vars": {"translation": translation},
        "steps": [
            {
                "id": "search",
                "call": "memo_search",
                "args": {"path": path, "query": "{question}", "k": 3},
                "capture": {"warning": rf"^warning: (.*mostly {notes}.*)$"},
            },
            {
                "id": "again",
                "when": {"search": rf"^warning: .*mostly {notes}"},
                "call": "memo_search",
                "args": {
                    "path": path,
                    "query": "{question}",
                    "also": ["{vars.translation}"],
                    "k": 3,
                },
                "capture": {"hit": TOP_HIT},
            },
            {"id": "answer", "say": "From the notes ({again.hit}), asked in both languages."},
        ],
    }


SCRIPTS: dict[str, dict[str, Any]] = {
    # The design card's first user: where (route), what (search on the route's top
    # collection), read (get the search's top hit as path:line-end), answer. Every read tool
    # is asked for max_tokens=300, so its text must stay within ~1,200 characters.
    "route-search-get": {
        "question": "How do I create a tagged VLAN interface on Linux?",
        "vars": {"max_tokens": 300},
        "steps": [
            {
                "id": "route",
                "call": "memo_route",
                "args": {"query": "{question}", "max_tokens": "{vars.max_tokens}"},
                "capture": {"top": TOP_COLLECTION},
            },
            {
                "id": "search",
                "call": "memo_search",
                "args": {
                    "path": "{route.top}",
                    "query": "{question}",
                    "max_tokens": "{vars.max_tokens}",
                },
                "capture": {"hit": TOP_HIT},
            },
            {
                "id": "get",
                "call": "memo_get",
                "args": {"path": "{search.hit}", "max_tokens": "{vars.max_tokens}"},
                "capture": {"cite": r"; cite ([0-9a-f]{12})"},
            },
            {"id": "answer", "say": "From the notes ({search.hit}, cite {get.cite})."},
        ],
    },
    # Across languages (issue 25): an English question of Russian notes; memo's text says to
    # ask in Russian or pass the translation as `also`; the model does, and finds the answer.
    "cross-language": _cross_language(
        "How long is the sourdough baked with the lid on, and how hot?",
        "Сколько минут и при какой температуре печь хлеб под крышкой?",
        "home",
        r"\w+",
    ),
    # Every language (issue 48): an English question of Chinese notes; memo names Chinese in
    # its warning, the model passes its Chinese phrasing as `also`, and finds the section.
    "cross-language-zh": _cross_language(
        "In which year was Nikola Tesla born, and in which village?",
        "尼古拉·特斯拉是哪一年出生的？出生在哪个村庄？",
        "reading",
        "Chinese",
    ),
    # The agent's words (issue 43): an English question of Russian notes asked twice, alone
    # and with the words memo's tools ask for on every search (phrasings, keywords, a likely
    # answer, in the notes' language), so a caller can compare what the model reads.
    "words": {
        "question": "Why does the switch drop my tagged frames?",
        "vars": {
            "also": ["Почему коммутатор отбрасывает тегированные кадры?"],
            "keywords": ["trunk", "802.1Q"],
            "answer": "Порт коммутатора в режиме access отбрасывает тегированные кадры: нужен "
            "trunk.",
        },
        "steps": [
            {
                "id": "plain",
                "call": "memo_search",
                "args": {"path": ".", "query": "{question}", "k": 3},
                "capture": {"hit": TOP_HIT, "confidence": CONFIDENCE},
            },
            {
                "id": "words",
                "call": "memo_search",
                "args": {
                    "path": ".",
                    "query": "{question}",
                    "k": 3,
                    "also": "{vars.also}",
                    "keywords": "{vars.keywords}",
                    "answer": "{vars.answer}",
                },
                "capture": {"hit": TOP_HIT, "confidence": CONFIDENCE},
            },
            {
                "id": "answer",
                "say": "From the notes ({words.hit}, confidence {words.confidence}); the "
                "question alone: {plain.hit}, confidence {plain.confidence}.",
            },
        ],
    },
}

_WRAP_OPEN = re.compile(r"\A<untrusted_tool_result[^>]*>\n")
_WRAP_CLOSE = "\n</untrusted_tool_result>"
_TEMPLATE = re.compile(r"\{([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)?)\}")


# ------------------------------------------------------------------ what a host hands the model
def host_view(content: Any) -> dict[str, Any]:
    """A tool message's content as the model reads it, taken apart.

    `message`: the whole content; `payload`: without Hermes's `<untrusted_tool_result>`
    wrapper and its preamble; `text`: the tool's own text (the payload's JSON `result`, or
    the payload itself when it is not such JSON); `error`: the payload's `error`, if any.
    Each with its length in characters, as the model's message carries it."""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    message = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    payload, wrapped = message, False
    if _WRAP_OPEN.match(message):
        wrapped = True
        body = _WRAP_OPEN.sub("", message, count=1)
        if body.endswith(_WRAP_CLOSE):
            body = body[: -len(_WRAP_CLOSE)]
        _, sep, rest = body.partition("\n\n")  # the "Treat it as DATA" preamble
        payload = rest if sep else body
    text, error = payload, None
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if isinstance(data.get("result"), str):
            text = data["result"]
        elif "result" in data:
            text = json.dumps(data["result"], ensure_ascii=False)
        if "error" in data:
            error = str(data["error"])
            text = error
    return {
        "message": message,
        "payload": payload,
        "text": text,
        "error": error,
        "wrapped": wrapped,
        "message_chars": len(message),
        "payload_chars": len(payload),
        "text_chars": len(text),
    }


def tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for t in body.get("tools") or []:
        fn = t.get("function") or t  # chat completions nest the function; others may not
        if isinstance(fn, dict) and fn.get("name"):
            names.append(fn["name"])
    return names


def tool_params(body: dict[str, Any], tool: str) -> dict[str, Any]:
    """The parameters (JSON Schema `properties`) a request offers the model for `tool` (by
    its name or a name ending in `__<tool>`); {} when it offers no such tool."""
    for t in body.get("tools") or []:
        fn = t.get("function") or t
        name = (fn.get("name") or "") if isinstance(fn, dict) else ""
        if name == tool or name.endswith("__" + tool):
            return (fn.get("parameters") or {}).get("properties") or {}
    return {}


def find_tool(names: list[str], tool: str) -> str | None:
    return next((n for n in names if n == tool or n.endswith("__" + tool)), None)


def _text_of(message: dict[str, Any]) -> str:
    c = message.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c if isinstance(c, str) else ""


def conversation(body: dict[str, Any]) -> dict[str, Any]:
    """The user's question and the script's calls found in the messages, in order:
    [{"step", "id", "name", "arguments", "result" (host_view or None)}]."""
    messages = body.get("messages") or []
    question = next((_text_of(m) for m in messages if m.get("role") == "user"), "").strip()
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    calls = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for tc in m.get("tool_calls") or []:
            got = re.match(r"call_(.+)_\d+$", tc.get("id") or "")
            fn = tc.get("function") or {}
            calls.append(
                {
                    "step": got.group(1) if got else None,
                    "id": tc.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments"),
                    "result": host_view(results[tc["id"]]) if tc.get("id") in results else None,
                }
            )
    return {"question": question, "calls": calls}


# ------------------------------------------------------------------ the script
def load_script(name_or_path: str) -> dict[str, Any]:
    if name_or_path in SCRIPTS:
        return SCRIPTS[name_or_path]
    return json.loads(Path(name_or_path).read_text(encoding="utf-8"))


class ScriptError(Exception):
    """The script cannot go on (a capture did not match, a template names nothing)."""


def _fill(value: Any, env: dict[str, Any]) -> Any:
    """`value` with its templates filled; a string that is one whole template keeps the
    type of what it names (so "{vars.max_tokens}" stays an int)."""
    if isinstance(value, dict):
        return {k: _fill(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def lookup(name: str) -> Any:
        if name not in env:
            raise ScriptError(f"template {{{name}}} names nothing captured")
        return env[name]

    whole = _TEMPLATE.fullmatch(value)
    if whole:
        return lookup(whole.group(1))
    return _TEMPLATE.sub(lambda m: str(lookup(m.group(1))), value)


def decide(script: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The next answer for one request: {"kind": "call", "name", "arguments", "id"} or
    {"kind": "say", "text"}; "step" names the script step (None for side answers)."""
    names = tool_names(body)
    if not names:
        return {"kind": "say", "text": "memo probe", "step": None}
    conv = conversation(body)
    env: dict[str, Any] = {"question": conv["question"] or script.get("question", "")}
    env.update({f"vars.{k}": v for k, v in (script.get("vars") or {}).items()})
    done = {c["step"]: c for c in conv["calls"] if c["step"]}
    steps = script["steps"]
    last = max((i for i, s in enumerate(steps) if s["id"] in done), default=-1)
    try:
        for step in steps[: last + 1]:  # what the steps done captured
            call = done.get(step["id"])
            if call is None or call["result"] is None:
                continue
            for key, rx in (step.get("capture") or {}).items():
                m = re.search(rx, call["result"]["text"], re.M)
                if m is None:
                    raise ScriptError(
                        f"step {step['id']}: capture {key} /{rx}/ found nothing in its result: "
                        f"{call['result']['text'][:300]!r}"
                    )
                env[f"{step['id']}.{key}"] = m.group(1)
        for step in steps[last + 1 :]:
            if not _applies(step, done):
                continue
            if "say" in step:
                return {"kind": "say", "text": _fill(step["say"], env), "step": step["id"]}
            name = find_tool(names, step["call"])
            if name is None:
                return {
                    "kind": "say",
                    "step": step["id"],
                    "text": f"memo tools were not offered: no {step['call']} among "
                    f"{len(names)} tools",
                }
            return {
                "kind": "call",
                "step": step["id"],
                "name": name,
                "arguments": _fill(step.get("args") or {}, env),
                "id": f"call_{step['id']}_{uuid.uuid4().int % 10**8}",
            }
    except ScriptError as e:
        return {"kind": "say", "text": f"script stopped: {e}", "step": None}
    return {"kind": "say", "text": "script done", "step": None}


def _applies(step: dict[str, Any], done: dict[str, dict[str, Any]]) -> bool:
    def text(sid: str) -> str | None:
        call = done.get(sid)
        return call["result"]["text"] if call and call["result"] else None

    for sid, rx in (step.get("when") or {}).items():
        t = text(sid)
        if t is None or not re.search(rx, t, re.M):
            return False
    for sid, rx in (step.get("unless") or {}).items():
        t = text(sid)
        if t is not None and re.search(rx, t, re.M):
            return False
    return True


# ------------------------------------------------------------------ the server
class ScriptedModel:
    """The server: 127.0.0.1, a free port, every request logged as a JSON line
    {"n", "t", "method", "path", "body", "answer"}; stops after `max_requests` requests or
    `max_seconds`, whichever comes first."""

    def __init__(
        self,
        script: dict[str, Any],
        log_path: str | Path,
        max_requests: int = 40,
        max_seconds: float = 240,
    ) -> None:
        self.script, self.max_requests, self.max_seconds = script, max_requests, max_seconds
        self.log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.n = 0
        self.lock = threading.Lock()
        self.done = threading.Event()
        model = self

        class Handler(_Handler):
            owner = model

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]

    def start(self) -> int:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        threading.Thread(target=self._bound, daemon=True).start()
        return self.port

    def _bound(self) -> None:
        self.done.wait(self.max_seconds)
        time.sleep(0.3)  # the last answer flushes
        self.stop()

    def stop(self) -> None:
        with self.lock:
            if self.log.closed:
                return
            self.log.close()
        self.done.set()
        self.httpd.shutdown()

    def record(self, method: str, path: str, body: Any, answer: Any) -> None:
        with self.lock:
            if self.log.closed:
                return
            self.n += 1
            row = {"n": self.n, "t": time.time(), "method": method, "path": path}
            self.log.write(json.dumps(row | {"body": body, "answer": answer}, ensure_ascii=False))
            self.log.write("\n")
            self.log.flush()
            if self.n >= self.max_requests:
                self.done.set()


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _json(self, code: int, obj: Any) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self.owner.record("GET", self.path, None, None)
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL, "object": "model", "owned_by": "memo-ci"}],
                },
            )
        else:
            self._json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            self.owner.record("POST", self.path, body, None)
            self._json(404, {"error": {"message": f"no {self.path} here", "type": "not_found"}})
            return
        answer = decide(self.owner.script, body)
        self.owner.record("POST", self.path, body, answer)
        self._complete(body, answer)

    def _complete(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
        cid, created = "chatcmpl-" + uuid.uuid4().hex[:12], int(time.time())
        model = body.get("model") or MODEL
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if answer["kind"] == "call":
            call = {
                "id": answer["id"],
                "type": "function",
                "function": {
                    "name": answer["name"],
                    "arguments": json.dumps(answer["arguments"], ensure_ascii=False),
                },
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": answer["text"]}, "stop"
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [choice],
                    "usage": usage,
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta: dict[str, Any], fin: str | None = None) -> None:
            c = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": fin}],
            }
            if fin:
                c["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n")
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        if answer["kind"] == "call":
            fn = message["tool_calls"][0]["function"]
            head = {"index": 0, "id": answer["id"], "type": "function"}
            chunk({"tool_calls": [head | {"function": {"name": fn["name"], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": fn["arguments"]}}]})
        else:
            chunk({"content": message["content"]})
        chunk({}, fin=finish)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--script", default="route-search-get", help="a name in SCRIPTS or a file")
    ap.add_argument("--question", help="the default question (the host's user message wins)")
    ap.add_argument("--log", required=True, help="JSONL file: every request and its answer")
    ap.add_argument("--port-file", required=True, help="where to write the port")
    ap.add_argument("--max-requests", type=int, default=40)
    ap.add_argument("--max-seconds", type=float, default=240)
    a = ap.parse_args(argv)
    script = dict(load_script(a.script))
    if a.question:
        script["question"] = a.question
    server = ScriptedModel(script, a.log, a.max_requests, a.max_seconds)
    port = server.start()
    Path(a.port_file).write_text(str(port))
    print(f"scripted model on http://127.0.0.1:{port}/v1", file=sys.stderr, flush=True)
    server.done.wait()
    time.sleep(0.5)
    print(f"scripted model stopped after {server.n} requests", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
