"""Drives a running `tandem serve` with the official `anthropic` package, unchanged: a whole and a
streamed Message with a planted IBAN (system prompt, two turns), the local model, and errors
(wrong key, unknown model, a server-side tool). Prints one JSON object with what the client saw; the Rust test
(cli/tests) checks it and what reached the loopback provider.

Environment: TANDEM_GATEWAY_BASE (http://127.0.0.1:PORT), TANDEM_GATEWAY_TOKEN, AGENT.
"""

import json
import os

import anthropic
from anthropic import Anthropic

IBAN = "DE89 3704 0044 0532 0130 00"
base = os.environ["TANDEM_GATEWAY_BASE"]
agent = os.environ["AGENT"]
client = Anthropic(base_url=base, api_key=os.environ["TANDEM_GATEWAY_TOKEN"], max_retries=0)
out = {"anthropic_version": anthropic.__version__}

turns = [
    {"role": "user", "content": "I pay my rent by bank transfer."},
    {"role": "assistant", "content": "Understood."},
    {"role": "user", "content": [{"type": "text", "text": f"Please check the transfer to {IBAN} for the rent."}]},
]
raw = client.messages.with_raw_response.create(
    model=agent, max_tokens=64, system="Be brief.", messages=turns
)
whole = raw.parse()
out["whole"] = {
    "route_header": raw.headers.get("x-tandem-route"),
    "type": whole.type,
    "role": whole.role,
    "text": "".join(b.text for b in whole.content if b.type == "text"),
    "stop_reason": whole.stop_reason,
    "output_tokens": whole.usage.output_tokens,
    "tandem": (whole.model_extra or {}).get("tandem"),
}

kinds = []
with client.messages.stream(model=agent, max_tokens=64, system="Be brief.", messages=turns) as stream:
    for ev in stream:
        kinds.append(ev.type)
    final = stream.get_final_message()
out["stream"] = {
    "text": "".join(b.text for b in final.content if b.type == "text"),
    "events": kinds,
    "stop_reason": final.stop_reason,
    "output_tokens": final.usage.output_tokens,
}

local = client.messages.create(
    model="tandem-local", max_tokens=8, messages=[{"role": "user", "content": "Say hello."}]
)
out["local"] = {
    "text": "".join(b.text for b in local.content if b.type == "text"),
    "route": (local.model_extra or {}).get("tandem", {}).get("route"),
}

try:
    Anthropic(base_url=base, api_key="tdm-wrong", max_retries=0).messages.create(
        model=agent, max_tokens=8, messages=[{"role": "user", "content": "hi"}]
    )
    out["bad_token"] = "accepted"
except anthropic.AuthenticationError as e:
    out["bad_token"] = [e.status_code, e.body["error"]["type"] if isinstance(e.body, dict) else None]
try:
    client.messages.create(model="claude-nope", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    out["unknown_model"] = "accepted"
except anthropic.NotFoundError as e:
    out["unknown_model"] = [e.status_code, e.body["error"]["type"] if isinstance(e.body, dict) else None]
try:
    client.messages.create(
        model=agent,
        max_tokens=8,
        messages=[{"role": "user", "content": "What is the weather?"}],
        # Anthropic's server-side tools run in Anthropic's cloud: the gateway offers client
        # tools only (tools_client.py drives those).
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
    )
    out["tools"] = "accepted"
except anthropic.BadRequestError as e:
    out["tools"] = [e.status_code, e.body["error"].get("code") if isinstance(e.body, dict) else None]

print(json.dumps(out))
