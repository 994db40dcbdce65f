"""memo through Hermes Agent's own code, no model: run with the Python of Hermes's venv.

    HERMES_HOME=… python .ci/hermes_tools.py [--max-tokens 300] [--question Q]

Reads `$HERMES_HOME/config.yaml` with Hermes's config loader, connects the servers with its
MCP client (`tools.mcp_tool.discover_mcp_tools`), and calls memo_route → memo_search on the
route's top collection → memo_get on the search's top hit (`path:line-end`) through Hermes's
tool registry, the way its agent loop dispatches a model's call; measures each result as the
registry returns it and as Hermes's `<untrusted_tool_result>` wrapper hands it to the model.
Then ChatGPT's pair the same way: `search` with the question, `fetch` of its first id.
Then builds Hermes's skill index with and without memo's toolset, to see
`requires_toolsets: [mcp-memo]` at work. Prints one JSON object; asserts nothing (the probe
does).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scripted_model import SCRIPTS, TOP_COLLECTION, TOP_HIT, host_view  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=300)
    ap.add_argument("--question", default=SCRIPTS["route-search-get"]["question"])
    a = ap.parse_args()
    out: dict = {}

    from hermes_cli.config import load_config
    from hermes_cli.mcp_startup import _resolve_discovery_timeout
    from tools import mcp_tool
    from tools.registry import registry

    config = load_config()
    out["config_mcp_servers"] = config.get("mcp_servers")
    out["loaded_mcp_servers"] = mcp_tool._load_mcp_config()  # interpolated, as connected
    out["discovery_timeout_s"] = _resolve_discovery_timeout(None)

    t = time.monotonic()
    names = sorted(mcp_tool.discover_mcp_tools())
    out["discover_s"] = round(time.monotonic() - t, 3)
    out["tools"] = names
    out["toolsets"] = sorted({registry.get_toolset_for_tool(n) or "" for n in names})

    from agent.tool_dispatch_helpers import _maybe_wrap_untrusted

    def call(tool: str, args: dict) -> dict:
        name = f"mcp__memo__{tool}"
        t = time.monotonic()
        result = registry.dispatch(name, args)
        seconds = round(time.monotonic() - t, 3)
        result = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        view = host_view(_maybe_wrap_untrusted(name, result))
        return {
            "tool": tool,
            "arguments": args,
            "seconds": seconds,
            "registry_chars": len(result),
            **{k: view[k] for k in ("message_chars", "payload_chars", "text_chars", "error")},
            "text": view["text"],
        }

    calls = []
    if "mcp__memo__memo_route" in names:
        mt = a.max_tokens
        route = call("memo_route", {"query": a.question, "max_tokens": mt})
        calls.append(route)
        top = re.search(TOP_COLLECTION, route["text"], re.M)
        if top:
            search = call(
                "memo_search", {"path": top.group(1), "query": a.question, "max_tokens": mt}
            )
            calls.append(search)
            hit = re.search(TOP_HIT, search["text"], re.M)
            if hit:
                calls.append(call("memo_get", {"path": hit.group(1), "max_tokens": mt}))
    out["calls"] = calls
    out["deep"] = deep_research(call, a.question, names)

    from agent.prompt_builder import build_skills_system_prompt, clear_skills_system_prompt_cache

    def index(toolsets: set[str]) -> str:
        clear_skills_system_prompt_cache()
        return build_skills_system_prompt(available_tools=set(names), available_toolsets=toolsets)

    out["skill_listed_with_memo"] = "memo-notes" in index(set(out["toolsets"]) - {""})
    out["skill_listed_without_memo"] = "memo-notes" in index(set())
    mcp_tool.shutdown_mcp_servers()
    print(json.dumps(out, ensure_ascii=False))
    return 0


def deep_research(call, question: str, names: list[str]) -> list[dict]:
    """ChatGPT's two tools as its deep research calls them: `search` with the question, then
    `fetch` of the first result's id (each answers one JSON object as text)."""
    if "mcp__memo__search" not in names:
        return [{"tool": "search", "error": f"not discovered among {len(names)} tools"}]
    found = call("search", {"query": question})
    out = [found]
    try:
        first = json.loads(found["text"])["results"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return out
    out.append(call("fetch", {"id": first["id"]}))
    return out


if __name__ == "__main__":
    sys.exit(main())
