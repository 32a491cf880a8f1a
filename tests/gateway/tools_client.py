"""Tool calling through `tandem serve` with the official `openai` and `anthropic` packages,
unchanged: a request with two tools and a planted IBAN, whole and streamed; the calls the cloud
asks for come back with the real IBAN where the client's tool needs it (and the placeholder kept
inside a link); the client runs its tool and sends a result that repeats the IBAN; the answer
comes back restored. Prints one JSON object with what the clients saw; the Rust test checks it
and the bytes the loopback provider recorded.

Environment: TANDEM_GATEWAY_URL (http://127.0.0.1:PORT/v1), TANDEM_GATEWAY_TOKEN, AGENT (an
agent whose provider speaks the OpenAI wire), AGENT_ANTHROPIC (one on the Anthropic wire).
"""

import json
import os

import anthropic
import openai

IBAN = "DE89 3704 0044 0532 0130 00"
url = os.environ["TANDEM_GATEWAY_URL"]
token = os.environ["TANDEM_GATEWAY_TOKEN"]
agent = os.environ["AGENT"]
agent_a = os.environ["AGENT_ANTHROPIC"]
out = {}

prompt = f"Look up the account {IBAN} and tell me its owner."
result_text = f"Account {IBAN} belongs to the rent office; balance 1200 EUR."
tools = [
    {
        "type": "function",
        "function": {
            "name": "lookup_account",
            "description": "Finds the owner of a bank account",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "the account"}},
                "required": ["text"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "fetch_page",
            "description": "Downloads a web page",
            "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
        },
    },
]

# ---- OpenAI wire ------------------------------------------------------------------------------
client = openai.OpenAI(base_url=url, api_key=token, max_retries=0)
messages = [{"role": "user", "content": prompt}]
first = client.chat.completions.create(model=agent, messages=messages, tools=tools)
choice = first.choices[0]
calls = choice.message.tool_calls or []
out["openai_whole"] = {
    "finish_reason": choice.finish_reason,
    "calls": [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in calls],
    "tandem": (first.model_extra or {}).get("tandem"),
}

# Streamed: the SDK's chunks, calls joined by index as any client does.
joined = {}
finish = None
for chunk in client.chat.completions.create(model=agent, messages=messages, tools=tools, stream=True):
    for ch in chunk.choices:
        finish = ch.finish_reason or finish
        for d in ch.delta.tool_calls or []:
            c = joined.setdefault(d.index, {"id": None, "name": "", "arguments": ""})
            c["id"] = d.id or c["id"]
            if d.function:
                c["name"] += d.function.name or ""
                c["arguments"] += d.function.arguments or ""
out["openai_stream"] = {"finish_reason": finish, "calls": [joined[i] for i in sorted(joined)]}

# The client runs its tools and sends the results back (the first repeats the IBAN).
follow = messages + [
    choice.message.model_dump(exclude_none=True),
    {"role": "tool", "tool_call_id": calls[0].id, "content": result_text},
    {"role": "tool", "tool_call_id": calls[1].id, "content": "404 not found"},
]
second = client.chat.completions.create(model=agent, messages=follow, tools=tools)
out["openai_result"] = {
    "finish_reason": second.choices[0].finish_reason,
    "content": second.choices[0].message.content,
}

# ---- Anthropic wire (the gateway's Messages endpoint, an Anthropic-wire provider behind it) ----
ac = anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key=token, max_retries=0)
a_tools = [
    {
        "name": t["function"]["name"],
        "description": t["function"]["description"],
        "input_schema": t["function"]["parameters"],
    }
    for t in tools
]
a_msgs = [{"role": "user", "content": prompt}]
msg = ac.messages.create(model=agent_a, max_tokens=64, messages=a_msgs, tools=a_tools)
uses = [b for b in msg.content if b.type == "tool_use"]
out["anthropic_whole"] = {
    "stop_reason": msg.stop_reason,
    "calls": [{"id": b.id, "name": b.name, "input": b.input} for b in uses],
}
with ac.messages.stream(model=agent_a, max_tokens=64, messages=a_msgs, tools=a_tools) as s:
    final = s.get_final_message()
out["anthropic_stream"] = {
    "stop_reason": final.stop_reason,
    "calls": [{"id": b.id, "name": b.name, "input": b.input} for b in final.content if b.type == "tool_use"],
}
a_follow = a_msgs + [
    {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": uses[0].id, "content": result_text},
            {"type": "tool_result", "tool_use_id": uses[1].id, "content": "404 not found", "is_error": True},
        ],
    },
]
answer = ac.messages.create(model=agent_a, max_tokens=64, messages=a_follow, tools=a_tools)
out["anthropic_result"] = {
    "stop_reason": answer.stop_reason,
    "text": "".join(b.text for b in answer.content if b.type == "text"),
}
try:
    ac.messages.create(
        model=agent_a,
        max_tokens=8,
        messages=[{"role": "user", "content": "What is new?"}],
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
    )
    out["server_tool"] = "accepted"
except anthropic.BadRequestError as e:
    out["server_tool"] = [e.status_code, e.body["error"].get("code") if isinstance(e.body, dict) else None]

print(json.dumps(out))
