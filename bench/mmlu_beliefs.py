#!/usr/bin/env python3
"""Issue 20 routing study: the recommended model's letter beliefs on dev MMLU through llama-server
(plain-text MMLU form, as Tandem reads a question that stands alone), one JSON line a row.
Usage: llama-server -m QWEN_1.5B.gguf -t 2 --port 8099 & python3 bench/mmlu_beliefs.py N OUT.jsonl
Then: python3 bench/mmlu_gain.py OUT.jsonl (numpy) for the routing curves (bench/RESULTS.md).
With --reverse the options are read in reverse order (a second reading; mmlu_gain.py --second)."""
import json, hashlib, sys, urllib.request, time
# --reverse: the options in reverse order (relabelled A, B, ...), the beliefs mapped back to the
# original letters: a second reading of the same question (the option-order test).
REV="--reverse" in sys.argv; sys.argv=[a for a in sys.argv if a!="--reverse"]
N=int(sys.argv[1]); out=open(sys.argv[2],'a')
done=set()
try:
    for l in open(sys.argv[2]): done.add(json.loads(l)['id'])
except Exception: pass
rows=[json.loads(l) for l in open(__import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..", "shared", "eval", "dev", "routing_mmlu.jsonl"))]
rows.sort(key=lambda r: hashlib.sha256(r['id'].encode()).hexdigest())
rows=rows[:N]
H="The following are multiple choice questions (with answers).\n\n"
for r in rows:
    if r['id'] in done: continue
    q=r['question'].strip()
    if q.endswith("Answer:"): q=q[:-len("Answer:")].rstrip()
    back={}
    if REV:
        lines=q.split("\n")
        # the option lines are the trailing "X. text" lines
        k=len(lines)
        while k>0 and len(lines[k-1])>=3 and lines[k-1][1] in ".)" and lines[k-1][0] in "ABCDEFGHIJ": k-=1
        opts=lines[k:]
        rev=list(reversed(opts))
        new=[f"{'ABCDEFGHIJ'[i]}.{o[2:]}" for i,o in enumerate(rev)]
        back={'ABCDEFGHIJ'[i]:o[0] for i,o in enumerate(rev)}
        q="\n".join(lines[:k]+new)
    q+="\nAnswer:"
    body={"prompt":H+q,"n_predict":1,"temperature":0,"n_probs":40,"cache_prompt":True}
    req=urllib.request.Request("http://127.0.0.1:8099/completion",data=json.dumps(body).encode(),headers={"Content-Type":"application/json"})
    t=time.time()
    resp=json.load(urllib.request.urlopen(req,timeout=600))
    probs={}
    import math
    for tp in resp["completion_probabilities"][0]["top_logprobs"]:
        probs[tp["token"]]=math.exp(tp["logprob"])
    letters={L:probs.get(" "+L,0.0) for L in "ABCDEFGHIJ"}
    if REV: letters={back[L]:v for L,v in letters.items() if L in back}
    out.write(json.dumps({"id":r["id"],"gold":r["answer"],"strong_ok":r["strong_ok"],"letters":letters,"top":[(t["token"],round(math.exp(t["logprob"]),4)) for t in resp["completion_probabilities"][0]["top_logprobs"][:5]],"n_prompt":resp.get("tokens_evaluated"),"s":time.time()-t,"question":r["question"],"category":r["category"]})+"\n"); out.flush()
