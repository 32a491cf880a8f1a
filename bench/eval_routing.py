#!/usr/bin/env python3
"""Routing quality on the development routing sets (GSM8K, MMLU; labels: did Mixtral-8x7B match
GPT-4?) through `tandem route --jsonl --local-class C` for each class: the share of
`weak_sufficient` questions kept local and of `needs_strong` questions sent to the cloud.
Targets (issue 5) apply to `large`: >= 40% kept local and >= 95% sent. Rows are also split by
a hash of their id into the half the model was fitted on and the other half.

    python3 bench/eval_routing.py [TANDEM_BIN] [EVAL_DIR]
"""
import hashlib, json, os, pathlib, subprocess, sys
# tandem never reads ./models on its own: name this checkout's models directory.
os.environ.setdefault("TANDEM_MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

root = pathlib.Path(__file__).resolve().parents[1]
tandem = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("CARGO_TARGET_DIR", root / "target"), "debug", "tandem")
evald = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else root.parent / "shared/eval/dev")
rows = [json.loads(l) for f in ["routing_gsm8k.jsonl", "routing_mmlu.jsonl"] for l in open(evald / f)]
inp = "".join(json.dumps({"id": r["id"], "prompt": r["question"]}) + "\n" for r in rows)
env = dict(os.environ, TANDEM_NER="off")
for cls in ["small", "medium", "large"]:
    out = subprocess.run([tandem, "route", "--jsonl", "--local-class", cls], input=inp, capture_output=True, text=True, cwd=root, env=env, check=True)
    res = [json.loads(l) for l in out.stdout.split("\n") if l.strip()]
    for part in ["fit half", "other half", "all"]:
        sel = [(r, o) for r, o in zip(rows, res)
               if part == "all" or (int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 2 == 1) == (part == "other half")]
        weak = [o for r, o in sel if r["route_label"] == "weak_sufficient"]
        strong = [o for r, o in sel if r["route_label"] == "needs_strong"]
        kept = sum(o["route"] == "local" for o in weak) / max(1, len(weak))
        sent = sum(o["route"] != "local" for o in strong) / max(1, len(strong))
        print(f"{cls:6} {part:10}: weak_sufficient kept local {kept:.1%} (n={len(weak)}), needs_strong sent to cloud {sent:.1%} (n={len(strong)})")
