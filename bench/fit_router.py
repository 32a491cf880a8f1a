#!/usr/bin/env python3
"""Fits the router's complexity model: a logistic regression over named, transparent features
of a prompt, predicting whether a Mixtral-8x7B-class model answers as well as GPT-4
(`route_label == weak_sufficient`) on ../shared/eval/dev/routing_*.jsonl (both_fail rows are
left out: no route helps them). Plain Python, no dependencies.

The features must match `router::complexity::features` in Rust exactly; this script prints
the weights to paste into `src-tauri/core/src/router/complexity.rs` and measures the chosen
thresholds on a held-out half (rows split by a hash of their id).

    python3 bench/fit_router.py [EVAL_DIR]
"""
import hashlib, json, math, re, sys, pathlib
import os
# tandem never reads ./models on its own: name this checkout's models directory.
os.environ.setdefault("TANDEM_MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

EVAL = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2] / "shared/eval/dev")

def has(text, words):
    return 1.0 if any(w in text for w in words) else 0.0

MATH = ["how many", "how much", "total", "percent", "%", "$", "each", "per ", "remaining", "left"]
CODE = ["code", "function", "python", "javascript", "rust", "```", "implement", "bug", "compile", "sql", "regex"]
REASON = ["prove", "why", "derive", "step by step", "statement 1", "which of the following", "must be true", "implies"]
LOCAL = ["summarize", "summarise", "summary", "extract", "rewrite", "rephrase", "translate", "classify", "grammar", "proofread", "list the", "tl;dr"]
LONG = ["essay", "story", "article", "report", "blog post", "cover letter", "poem", "write a", "draft a"]
FRESH = ["latest", "today", "current", "news", "this week", "2025", "2026", "recent"]
STEM = ["algebra", "calculus", "integral", "derivative", "matrix", "eigen", "probability", "physics", "chemistry", "equation", "theorem", "polynomial", "group", "field extension", "mod "]

NAMES = ["bias", "log_chars", "log_numbers", "math_words", "multiple_choice", "code", "reasoning",
         "local_task", "long_form", "fresh_knowledge", "stem", "non_ascii"]

def features(prompt):
    t = prompt.lower()
    n_num = len(re.findall(r"\d+(?:\.\d+)?", t))
    mc = 1.0 if re.search(r"(?m)^\s*[A-D][.)]\s", prompt) else 0.0
    non_ascii = sum(1 for c in prompt if ord(c) > 127) / max(1, len(prompt))
    return [1.0, math.log1p(len(prompt)) / 8.0, math.log1p(n_num) / 3.0, has(t, MATH), mc, has(t, CODE),
            has(t, REASON), has(t, LOCAL), has(t, LONG), has(t, FRESH), has(t, STEM), non_ascii]

def load():
    rows = []
    for f in ["routing_gsm8k.jsonl", "routing_mmlu.jsonl"]:
        for line in open(EVAL / f):
            r = json.loads(line)
            if r["route_label"] == "both_fail":
                continue
            held = int(hashlib.sha256(r["id"].encode()).hexdigest(), 16) % 2 == 1
            rows.append((features(r["question"]), 1.0 if r["route_label"] == "weak_sufficient" else 0.0, held))
    return rows

def fit(rows, l2=0.01, epochs=400, lr=0.5):
    w = [0.0] * len(NAMES)
    n = len(rows)
    for _ in range(epochs):
        g = [0.0] * len(w)
        for x, y, _ in rows:
            p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, x))))
            for i, xi in enumerate(x):
                g[i] += (p - y) * xi
        for i in range(len(w)):
            w[i] -= lr * (g[i] / n + (l2 * w[i] if i else 0.0))
    return w

def prob(w, x):
    return 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, x))))

def measure(w, rows, threshold):
    weak = [r for r in rows if r[1] == 1.0]
    strong = [r for r in rows if r[1] == 0.0]
    kept = sum(prob(w, x) >= threshold for x, _, _ in weak) / max(1, len(weak))
    sent = sum(prob(w, x) < threshold for x, _, _ in strong) / max(1, len(strong))
    return kept, sent

def auc(w, rows):
    pos = [prob(w, x) for x, y, _ in rows if y == 1.0]
    neg = [prob(w, x) for x, y, _ in rows if y == 0.0]
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))

rows = load()
train = [r for r in rows if not r[2]]
test = [r for r in rows if r[2]]
w = fit(train)
# The threshold that sends >= 95% of needs_strong to the cloud on the training half.
probs = sorted(prob(w, x) for x, y, _ in train if y == 0.0)
threshold = probs[min(len(probs) - 1, int(len(probs) * 0.95))]
print("weights:")
for n_, v in zip(NAMES, w):
    print(f"  {n_:16} {v:+.4f}")
print(f"threshold (large, 95% of needs_strong to cloud on the fit half): {threshold:.4f}")
print(f"AUC fit half {auc(w, train):.3f}, held-out half {auc(w, test):.3f}")
for name, part in [("fit half", train), ("held-out half", test)]:
    kept, sent = measure(w, part, threshold)
    print(f"{name}: weak_sufficient kept local {kept:.3f}, needs_strong sent to cloud {sent:.3f}")
