#!/usr/bin/env python3
"""Self-knowledge routing on the development routing sets, judged on the local model's own
answers: dev MMLU (gold letter in `answer`) and dev GSM8K (`final_answer`).

1. `tandem answer --jsonl --local` with MODEL answers every sampled row on this device and
   reports its confidence: the local model's accuracy, and for each threshold the routed
   result (kept when confident, else the strong model, whose row scores `strong_ok`).
   RouteLLM's PGR = (routed - local) / (strong - local) at the share sent to the cloud; a
   random router recovers as much as it sends.
2. `tandem answer --jsonl` (routed, the real orchestrator) on the first ROUTED rows against a
   loopback provider standing for the strong model (it records every request): checks that the
   shipped thresholds do in a real run what step 1 predicts, and that kept rows send nothing.

    python3 bench/eval_answer.py [--model NAME] [--mmlu N] [--gsm8k N] [--gsm8k-skip K] [--facts N] [--routed N] [TANDEM_BIN]

`--facts N` (0: skip) calibrates short factual questions: dev MMLU rows whose stem is a short
question with a short gold option, asked without the options; the local one-sentence answer
counts as right when it holds the gold option's words.

Rows are sampled by a hash of their id (the same rows every run). Prints the curve; `--json F`
writes the figures.
"""
import argparse, hashlib, http.server, json, os, pathlib, re, subprocess, sys, tempfile, threading, time

root = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("TANDEM_MODELS_DIR", str(root / "models"))

ap = argparse.ArgumentParser()
ap.add_argument("tandem", nargs="?", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", root / "target"), "debug", "tandem"))
ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
ap.add_argument("--mmlu", type=int, default=60)
ap.add_argument("--gsm8k", type=int, default=20)
ap.add_argument("--gsm8k-skip", type=int, default=0,
                help="leave out the first K GSM8K rows by id hash (rows the worked-problem rules were read on)")
ap.add_argument("--facts", type=int, default=0, help="short factual questions (MMLU stems without options)")
ap.add_argument("--routed", type=int, default=16, help="rows of each set for the routed run (0: skip)")
ap.add_argument("--eval-dir", default=str(root.parent / "shared/eval/dev"))
ap.add_argument("--json")
args = ap.parse_args()
evald = pathlib.Path(args.eval_dir)


def sample(name, n, skip=0):
    rows = [json.loads(l) for l in open(evald / name)]
    rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
    return rows[skip:skip + n]


mmlu = sample("routing_mmlu.jsonl", args.mmlu)
gsm = sample("routing_gsm8k.jsonl", args.gsm8k, args.gsm8k_skip)


def fact_rows(n):
    """Dev MMLU rows that read as a short question with a short answer once the options are
    gone ("In 1926 the Harlem Globetrotters were formed in what city?" -> Chicago)."""
    out = []
    for r in sample("routing_mmlu.jsonl", 100_000):
        stem, opts = [], {}
        for line in r["question"].split("\n"):
            m = re.match(r"^([A-J])\. (.*)$", line)
            if m:
                opts[m.group(1)] = m.group(2)
            elif not opts:
                stem.append(line)
        q, gold = " ".join(stem).strip(), opts.get(r["answer"], "")
        if not q.endswith("?") or len(q) > 300:
            continue
        if re.search(r"following|which of|statement|these|above|below|true|false|best|most likely|correct", q, re.I):
            continue
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9 .'-]{0,30}", gold) or len(gold.split()) > 3:
            continue
        out.append({"id": r["id"] + "#fact", "question": q, "gold": gold, "strong_ok": r["strong_ok"]})
    return out[:n]


facts = fact_rows(args.facts) if args.facts else []


def number(s):
    s = s.replace(",", "")
    nums = re.findall(r"-?\d+(?:\.\d+)?", s)
    return nums


def words(s):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", (s or "").lower()).split())


def correct(row, text):
    if "gold" in row:
        return f" {words(row['gold'])} " in f" {words(text)} "
    if "answer" in row and row["id"].startswith("mmlu"):
        m = re.match(r"\s*([A-J])\b", text or "")
        return bool(m) and m.group(1) == row["answer"]
    gold = row["final_answer"].replace(",", "").strip()
    # The line the model was asked to end with, else the last number it wrote.
    m = re.findall(r"answer[^0-9\-]*(-?[\d,]*\.?\d+)", (text or "").lower())
    got = m[-1].replace(",", "") if m else (number(text or "")[-1:] or [None])[0]
    try:
        return got is not None and abs(float(got) - float(gold)) < 1e-6
    except ValueError:
        return False


env = dict(os.environ, TANDEM_NER="off", TANDEM_MODEL=args.model)


def answer(rows, extra, env):
    inp = "".join(json.dumps({"id": r["id"], "prompt": r["question"]}) + "\n" for r in rows)
    t = time.time()
    out = subprocess.run([args.tandem, "answer", "--jsonl", *extra], input=inp, capture_output=True, text=True, cwd=root, env=env)
    if out.returncode != 0:
        sys.exit(f"tandem answer failed: {out.stderr[-2000:]}")
    res = [json.loads(l) for l in out.stdout.split("\n") if l.strip()]
    assert [r["id"] for r in res] == [r["id"] for r in rows], "answers out of order"
    return res, time.time() - t


def curve(name, rows, res):
    local = [correct(r, o.get("text")) for r, o in zip(rows, res)]
    strong = [bool(r["strong_ok"]) for r in rows]
    conf = [o.get("confidence") or 0.0 for o in res]
    # What the router compares with its bar: `keep` (>= 0: kept), else the confidence.
    keep = [o.get("keep") if o.get("keep") is not None else (o.get("confidence") or 0.0) - 1.01 for o in res]
    la, sa = sum(local) / len(rows), sum(strong) / len(rows)
    print(f"\n{name}: n={len(rows)}  local alone {la:.1%}  strong alone {sa:.1%}")
    # AUC of confidence for "the local answer is right"
    pos = [c for c, ok in zip(conf, local) if ok]
    neg = [c for c, ok in zip(conf, local) if not ok]
    auc = (sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / (len(pos) * len(neg))) if pos and neg else float("nan")
    print(f"  confidence AUC (local right vs wrong): {auc:.3f}")
    def point(kept):
        routed = sum(l if k else s for l, s, k in zip(local, strong, kept)) / len(rows)
        sent = 1 - sum(kept) / len(rows)
        return sent, routed, ((routed - la) / (sa - la) if sa != la else float("nan"))
    shipped = point([k >= 0 for k in keep])
    print(f"  as shipped (keep >= 0): sent {shipped[0]:.1%}  routed {shipped[1]:.1%}  PGR {shipped[2]:.2f}")
    pts = []
    # The curve: the same score with its bar moved (the `keep` column, confidence - 1.01 where absent).
    for t in sorted(set([min(keep) - 1, 10.0] + keep)):
        sent, routed, pgr = point([k >= t for k in keep])
        pts.append({"threshold": round(t, 3), "sent": sent, "routed": routed, "pgr": pgr})
    print("  keep bar  sent   routed  PGR")
    for share in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]:
        ok = [p for p in pts if p["sent"] <= share + 1e-9]
        if ok:
            b = max(ok, key=lambda p: (p["pgr"], -p["sent"]))
            print(f"  {b['threshold']:9.3f}  {b['sent']:5.1%}  {b['routed']:6.1%}  {b['pgr']:.2f}   (best with <= {share:.0%} sent)")
    return {"n": len(rows), "local": la, "strong": sa, "auc": auc, "curve": pts, "conf": conf, "keep": keep, "local_ok": local,
            "shipped": {"sent": shipped[0], "routed": shipped[1], "pgr": shipped[2]},
            "ids": [r["id"] for r in rows], "text": [o.get("text") for o in res]}


figures = {"model": args.model}
res_m, res_g = [], []
if mmlu:
    res_m, secs_m = answer(mmlu, ["--local"], env)
    print(f"MMLU --local: {secs_m:.0f} s ({secs_m / max(1, len(mmlu)):.1f} s a question)")
    figures["mmlu"] = curve("MMLU", mmlu, res_m)
if gsm:
    res_g, secs_g = answer(gsm, ["--local"], env)
    print(f"GSM8K --local: {secs_g:.0f} s ({secs_g / max(1, len(gsm)):.1f} s a question)")
    figures["gsm8k"] = curve("GSM8K", gsm, res_g)
both_rows, both_res = mmlu + gsm, res_m + res_g
if mmlu and gsm:
    figures["both"] = curve("MMLU + GSM8K", both_rows, both_res)
if facts:
    res_f, secs_f = answer(facts, ["--local"], env)
    print(f"short facts --local: {secs_f:.0f} s ({secs_f / len(facts):.1f} s a question)")
    figures["facts"] = curve("short facts (MMLU stems, no options)", facts, res_f)


class Provider(http.server.BaseHTTPRequestHandler):
    """The strong model: an OpenAI-compatible chat endpoint that records each request."""
    seen = []

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        Provider.seen.append(body)
        req = json.loads(body)
        text = "STRONG MODEL ANSWER"
        if req.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for chunk in [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                          {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}]:
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
        else:
            out = json.dumps({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)


if args.routed:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    renv = dict(env, TANDEM_CONFIG_DIR=f"{tmp}/config", TANDEM_LEDGER=f"{tmp}/ledger.sqlite3", TANDEM_KEY_STRONG="sk-loopback")
    subprocess.run([args.tandem, "cloud", "add", "strong", "--wire", "openai", "--base-url", f"http://127.0.0.1:{srv.server_port}/v1", "--model", "strong"], env=renv, check=True, capture_output=True)
    rows = mmlu[: args.routed] + gsm[: args.routed]
    res, secs = answer(rows, [], renv)
    local_pass = dict(zip([r["id"] for r in both_rows], both_res))
    score, sent, agree = 0, 0, 0
    for r, o in zip(rows, res):
        if o.get("answered_by") == "cloud":
            sent += 1
            score += bool(r["strong_ok"])
        else:
            score += correct(r, o.get("text"))
        # What step 1 predicted for this row at the shipped threshold (the plan reports it).
        agree += (o.get("answered_by") == "local") == (not o.get("escalated") and o.get("answered_by") != "cloud")
    la = sum(correct(r, local_pass[r["id"]].get("text")) for r in rows) / len(rows)
    sa = sum(bool(r["strong_ok"]) for r in rows) / len(rows)
    routed = score / len(rows)
    pgr = (routed - la) / (sa - la) if sa != la else float("nan")
    print(f"\nrouted run (real orchestrator, loopback strong model), {len(rows)} rows in {secs:.0f} s:")
    print(f"  sent to the cloud {sent / len(rows):.1%} ({len(Provider.seen)} requests recorded), routed {routed:.1%}, local alone {la:.1%}, strong {sa:.1%}, PGR {pgr:.2f}")
    print(f"  escalated rows: {sum(bool(o.get('escalated')) for o in res)}; kept locally: {sum(o.get('answered_by') == 'local' for o in res)}")
    figures["routed"] = {"n": len(rows), "sent": sent / len(rows), "requests": len(Provider.seen), "routed": routed, "local": la, "strong": sa, "pgr": pgr, "seconds": secs}
    srv.shutdown()

if args.json:
    pathlib.Path(args.json).write_text(json.dumps(figures, indent=1))
