#!/usr/bin/env python3
"""What the everyday-word check costs on public questions: the development routing sets (GSM8K,
MMLU: questions with no personal data) through `tandem route --jsonl`. Under policy `private`
(unknown words count as identifying): the share of questions that still go to the cloud. Under
`balanced` (unknown words are masked in texts that read as the user's own material): the share
whose cloud payload has a placeholder. The peer in the same run is the same planner with a word
list that knows every word of these questions, i.e. without the check. NER off (rules only).

    python3 bench/eval_words.py [TANDEM_BIN] [EVAL_DIR]
"""
import json, os, pathlib, re, subprocess, sys, tempfile
# tandem never reads ./models on its own: name this checkout's models directory.
os.environ.setdefault("TANDEM_MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

root = pathlib.Path(__file__).resolve().parents[1]
tandem = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("CARGO_TARGET_DIR", root / "target"), "debug", "tandem")
evald = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else root.parent / "shared/eval/dev")

def route(rows, cls, policy, words=None):
    env = dict(os.environ, TANDEM_NER="off")
    if words:
        env["TANDEM_WORDS"] = words
    inp = "".join(json.dumps({"id": r["id"], "prompt": r["question"]}) + "\n" for r in rows)
    out = subprocess.run([tandem, "route", "--jsonl", "--local-class", cls, "--policy", policy],
                         input=inp, capture_output=True, text=True, cwd=root, env=env, check=True)
    return [json.loads(l) for l in out.stdout.split("\n") if l.strip()]

with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as every:
    for f in ["routing_gsm8k.jsonl", "routing_mmlu.jsonl"]:
        rows = [json.loads(l) for l in open(evald / f)]
        words = {w.lower() for r in rows for w in re.findall(r"[^\W_]+(?:['’][^\W_]+)*", r["question"])}
        every.write("".join(w + "\n" for w in sorted(words)))
for f in ["routing_gsm8k.jsonl", "routing_mmlu.jsonl"]:
    rows = [json.loads(l) for l in open(evald / f)]
    for cls in ["small", "large"]:
        bal = sum(o["route"] != "local" for o in route(rows, cls, "balanced"))
        peer = sum(o["route"] != "local" for o in route(rows, cls, "private", every.name))
        priv = sum(o["route"] != "local" for o in route(rows, cls, "private"))
        n = len(rows)
        print(f"{f:20} {cls:5}: cloud under balanced {bal}/{n} ({bal / n:.1%}); under private without the word check {peer} ({peer / n:.1%}), with it {priv} ({priv / n:.1%})")
        masked = lambda res: sum(bool(re.search(r"\[(?:[A-Z]+(?:_[A-Z]+)*_\d+|WITHHELD)\]", (o.get("cloud_payload") or "").split("\n\n", 1)[-1])) for o in res)
        mpeer = masked(route(rows, cls, "balanced", every.name))
        mnow = masked(route(rows, cls, "balanced"))
        print(f"{'':20} {cls:5}: balanced payloads with a placeholder: without the word check {mpeer} ({mpeer / n:.1%}), with it {mnow} ({mnow / n:.1%})")
os.unlink(every.name)
