#!/usr/bin/env python3
"""Local rewrite (PAPILLON's idea) on a sample of dev PUPA, with a real medium local model.

Each sampled request runs through `tandem answer --jsonl` (the real orchestrator, the model
MODEL loaded, NER on) against a loopback provider that records every request it receives.
With a medium model the plan rewrites personal requests on the device before anything goes;
the recorded payloads are scored with PAPILLON's leakage measure (per request, the share of
its `pii_units` found in what the cloud received, averaged; a request that sent nothing leaks
0) next to the masked payloads `tandem route --jsonl --local-class medium` shows for the same
rows (what goes without the rewrite, or when the rewrite fails a check). Also: how many
rewrites were kept, and seconds per request (rewrite + the answer completed on the device).

    python3 bench/eval_rewrite.py [--model NAME] [--n N] [--max-tokens T] [TANDEM_BIN]

Rows are sampled by a hash of their id (the same rows every run).
"""
import argparse, hashlib, http.server, json, os, pathlib, re, subprocess, sys, tempfile, threading, time

root = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("TANDEM_MODELS_DIR", str(root / "models"))
ap = argparse.ArgumentParser()
ap.add_argument("tandem", nargs="?", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", root / "target"), "debug", "tandem"))
ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
ap.add_argument("--n", type=int, default=12)
ap.add_argument("--max-tokens", type=int, default=96, help="of the answer completed on the device")
ap.add_argument("--eval-dir", default=str(root.parent / "shared/eval/dev"))
ap.add_argument("--show", action="store_true", help="print what the cloud received")
ap.add_argument("--skip", type=int, default=0, help="start at this sampled row")
args = ap.parse_args()

rows = [json.loads(l) for l in open(pathlib.Path(args.eval_dir) / "delegation_pupa.jsonl")]
rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
rows = rows[args.skip : args.skip + args.n]


def share(units, payload):
    units = [u for u in units if u.strip()]
    if payload is None or not units:
        return 0.0, []
    bad = [u for u in units if re.search(r"(?<!\w)" + re.escape(u) + r"(?!\w)", payload, re.I)]
    return len(bad) / len(units), bad


class Provider(http.server.BaseHTTPRequestHandler):
    """The cloud: an OpenAI-compatible endpoint that records each request and answers briefly."""
    seen = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        Provider.seen.append(json.loads(body))
        text = "Here is a short, general answer to the request."
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk in [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}]:
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")


def payload_text(req):
    return "\n\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in req["messages"])


# What goes without the rewrite (and when it fails a check): the masked request.
inp = "".join(json.dumps({"id": r["id"], "prompt": r["user_query"]}) + "\n" for r in rows)
routed = subprocess.run([args.tandem, "route", "--jsonl", "--local-class", "medium"], input=inp, capture_output=True, text=True, cwd=root, check=True)
plans = [json.loads(l) for l in routed.stdout.split("\n") if l.strip()]

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
threading.Thread(target=srv.serve_forever, daemon=True).start()
tmp = tempfile.mkdtemp()
env = dict(os.environ, TANDEM_MODEL=args.model, TANDEM_CONFIG_DIR=f"{tmp}/config", TANDEM_LEDGER=f"{tmp}/ledger.sqlite3", TANDEM_KEY_CLOUD="sk-loopback")
subprocess.run([args.tandem, "cloud", "add", "cloud", "--wire", "openai", "--base-url", f"http://127.0.0.1:{srv.server_port}/v1", "--model", "big"], env=env, check=True, capture_output=True)
masked_sh, rewrite_sh, kept, planned, secs = [], [], 0, 0, []
print(f"{'id':>12}  masked  rewrite  kept  s")
for r, p in zip(rows, plans):
    before = len(Provider.seen)
    t = time.time()
    out = subprocess.run([args.tandem, "answer", "--jsonl", "--max-tokens", str(args.max_tokens)], input=json.dumps({"id": r["id"], "prompt": r["user_query"]}) + "\n", capture_output=True, text=True, cwd=root, env=env)
    secs.append(time.time() - t)
    if out.returncode != 0:
        sys.exit(f"tandem answer failed: {out.stderr[-2000:]}")
    sent = [payload_text(q) for q in Provider.seen[before:]]
    m, _ = share(r["pii_units"], p.get("cloud_payload"))
    w, bad = share(r["pii_units"], "\n".join(sent) if sent else None)
    rewrites = any("local model first rewrites" in x for x in p.get("reasons", []))
    planned += rewrites
    # Kept: what went is not the masked request the plan drafted.
    norm = lambda t: " ".join((t or "").split("\n\n", 1)[-1].split())
    k = rewrites and bool(sent) and norm(sent[-1]) != norm(p.get("cloud_payload"))
    kept += k
    masked_sh.append(m)
    rewrite_sh.append(w)
    if args.show:
        print("   prompt:", r["user_query"][:300].replace("\n", " "))
        for x in sent:
            print("   sent:", x.split("\n\n", 1)[-1][:300].replace("\n", " "))
    print(f"{r['id'][-12:]:>12}  {m:6.2f}  {w:7.2f}  {'yes' if k else 'no':>4}  {secs[-1]:.0f}  {bad if bad else ''}")
srv.shutdown()
n = len(rows)
print(f"\n{n} PUPA dev rows, model {args.model}: rewrite planned for {planned}, kept {kept}")
print(f"PAPILLON leakage: masked request {sum(masked_sh) / n:.3f}, with the local rewrite {sum(rewrite_sh) / n:.3f}; requests leaking: {sum(x > 0 for x in masked_sh)} -> {sum(x > 0 for x in rewrite_sh)}")
print(f"seconds a request (rewrite + completion on the device, {args.max_tokens} tokens at most): median {sorted(secs)[n // 2]:.0f}")
