"""Drives a running `tandem serve` with the official `openai` package, unchanged: a model list,
a whole and a streamed completion with a planted IBAN, the local model, and two errors. Prints
one JSON object with what the client saw; the Rust test (cli/tests) checks it and what reached
the loopback provider.

Environment: TANDEM_GATEWAY_URL (http://127.0.0.1:PORT/v1), TANDEM_GATEWAY_TOKEN, AGENT.
"""

import json
import os

import openai
from openai import OpenAI

IBAN = "DE89 3704 0044 0532 0130 00"
url = os.environ["TANDEM_GATEWAY_URL"]
agent = os.environ["AGENT"]
client = OpenAI(base_url=url, api_key=os.environ["TANDEM_GATEWAY_TOKEN"], max_retries=0)
out = {"openai_version": openai.__version__}

out["models"] = [m.id for m in client.models.list()]

prompt = f"Please check the transfer to {IBAN} for the rent."
raw = client.chat.completions.with_raw_response.create(
    model=agent, messages=[{"role": "user", "content": prompt}]
)
whole = raw.parse()
out["whole"] = {
    "route_header": raw.headers.get("x-tandem-route"),
    "content": whole.choices[0].message.content,
    "finish_reason": whole.choices[0].finish_reason,
    "total_tokens": whole.usage.total_tokens,
    "tandem": (whole.model_extra or {}).get("tandem"),
}

pieces, usage, finish = [], None, None
stream = client.chat.completions.create(
    model=agent,
    messages=[{"role": "user", "content": prompt}],
    stream=True,
    stream_options={"include_usage": True},
)
for chunk in stream:
    if chunk.choices:
        if chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        finish = chunk.choices[0].finish_reason or finish
    if chunk.usage:
        usage = chunk.usage.total_tokens
out["stream"] = {"content": "".join(pieces), "chunks": len(pieces), "finish_reason": finish, "total_tokens": usage}

local = client.chat.completions.create(
    model="tandem-local", messages=[{"role": "user", "content": "Say hello."}], max_tokens=8
)
out["local"] = {
    "content": local.choices[0].message.content,
    "route": (local.model_extra or {}).get("tandem", {}).get("route"),
}

try:
    OpenAI(base_url=url, api_key="tdm-wrong", max_retries=0).models.list()
    out["bad_token"] = "accepted"
except openai.AuthenticationError as e:
    out["bad_token"] = e.status_code
try:
    client.chat.completions.create(model="gpt-nope", messages=[{"role": "user", "content": "hi"}])
    out["unknown_model"] = "accepted"
except openai.NotFoundError as e:
    out["unknown_model"] = e.status_code

print(json.dumps(out))
