"""Drives `tandem mcp --http` (MCP's streamable HTTP) with the official MCP Python SDK (`mcp`,
unchanged): with the gateway's bearer token it lists the tools and calls scan and redact; with a
wrong token it is refused. Prints one JSON object with what the client saw.

Environment: TANDEM_MCP_URL (http://127.0.0.1:PORT/mcp), TANDEM_GATEWAY_TOKEN.
"""

import asyncio
import json
import os
import urllib.error
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

IBAN = "DE89 3704 0044 0532 0130 00"
URL = os.environ["TANDEM_MCP_URL"]


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def session_with(token, out):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client:
        async with streamable_http_client(URL, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.server_info.name
                tools = await session.list_tools()
                out["tools"] = sorted(t.name for t in tools.tools)
                r = await session.call_tool("scan", {"text": f"My IBAN is {IBAN}."})
                out["scan"] = json.loads(text_of(r))
                r = await session.call_tool("redact", {"text": f"Please check the transfer to {IBAN} for the rent."})
                out["redact"] = json.loads(text_of(r))


async def main():
    out = {}
    await session_with(os.environ["TANDEM_GATEWAY_TOKEN"], out)
    try:
        await asyncio.wait_for(session_with("tdm-wrong", {}), 30)
        out["wrong_token"] = "accepted"
    except Exception:  # the SDK reports the refused session as an error (an exception group)
        out["wrong_token"] = "refused"
    # And the status a wrong or missing token gets, read plainly.
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    for name, headers in (("wrong", {"Authorization": "Bearer tdm-wrong"}), ("missing", {})):
        req = urllib.request.Request(URL, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
        try:
            urllib.request.urlopen(req, timeout=10)
            out[f"status_{name}"] = 200
        except urllib.error.HTTPError as e:
            out[f"status_{name}"] = e.code
    print(json.dumps(out))


asyncio.run(main())
