"""Drives `tandem mcp` with the official MCP Python SDK (`mcp`, unchanged): lists the tools, then
calls redact, scan, ask (routed, with a planted IBAN; and local only) and search_files over a
normal and a sensitive folder. Prints one JSON object with what the client saw; the Rust test
(cli/tests) checks it and what reached the loopback provider.

Environment: TANDEM_BIN (the tandem binary); everything else is passed through to it.
"""

import asyncio
import json
import os

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

IBAN = "DE89 3704 0044 0532 0130 00"


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main():
    env = {k: v for k, v in os.environ.items() if k.startswith("TANDEM_") or k in ("HOME", "PATH")}
    params = StdioServerParameters(command=os.environ["TANDEM_BIN"], args=["mcp"], env=env)
    out = {}
    if os.environ.get("ONLY_SEARCH"):
        # The user allowed sensitive excerpts for agents (TANDEM_MCP_SENSITIVE_EXCERPTS=1).
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                r = await session.call_tool("search_files", {"query": "glucose"})
                out["search_sensitive"] = json.loads(text_of(r))
        print(json.dumps(out))
        return
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            r = await session.call_tool("redact", {"text": f"Please check the transfer to {IBAN} for the rent."})
            out["redact"] = json.loads(text_of(r))
            r = await session.call_tool("scan", {"text": f"My IBAN is {IBAN}."})
            out["scan"] = json.loads(text_of(r))
            r = await session.call_tool("ask", {"prompt": f"Please check the transfer to {IBAN} for the rent."})
            out["ask"] = json.loads(text_of(r))
            r = await session.call_tool("ask", {"prompt": "Say hello.", "local_only": True})
            out["ask_local"] = json.loads(text_of(r))
            r = await session.call_tool("search_files", {"query": "zephyrine"})
            out["search"] = json.loads(text_of(r))
            r = await session.call_tool("search_files", {"query": "glucose"})
            out["search_sensitive"] = json.loads(text_of(r))
    print(json.dumps(out))


asyncio.run(main())
