#!/usr/bin/env bash
# Does speculative decoding pay on this machine? Qwen2.5-Coder-1.5B (the recommended model)
# decoding alone against the same model checking tokens drafted by Qwen2.5-Coder-0.5B (same
# tokenizer), measured with llama.cpp's server (`-md DRAFT --draft-max N`), the faster of the two
# engines here: mistral.rs 0.8.1 cannot run it on GGUF models (its speculative builder takes
# safetensors models only, and a SpeculativePipeline built from two GGUF pipelines never finishes
# its start-up run: bench/RESULTS.md). Greedy, same prompts, same thread count; each
# speculative answer is compared with the plain one (greedy speculative decoding must give the
# same text). Prints a Markdown table.
# Usage: bench/speculative.sh [threads] [rounds] [draft tokens ...]   (default: 2 2 3)
set -euo pipefail
cd "$(dirname "$0")/.."
export TANDEM_MODELS_DIR="${TANDEM_MODELS_DIR:-$PWD/models}"
THREADS="${1:-2}"
ROUNDS="${2:-2}"
shift $(( $# > 2 ? 2 : $# ))
GAMMAS=("$@")
[ ${#GAMMAS[@]} -gt 0 ] || GAMMAS=(3)
GEN=64
PORT=8097
TARGET="${CARGO_TARGET_DIR:-target}"
OUT=bench/out/speculative
rm -rf "$OUT"; mkdir -p "$OUT"
SERVER="$(scripts/llama-cpp.sh llama-server)/llama-server"
cargo build -q --workspace --all-targets
TANDEM="$TARGET/debug/tandem"
for m in qwen2.5-coder-1.5b-instruct qwen2.5-coder-0.5b-instruct; do
  [ -f "$("$TANDEM" models path "$m")" ] || "$TANDEM" models fetch "$m" >/dev/null
done
BIG=$("$TANDEM" models path qwen2.5-coder-1.5b-instruct)
SMALL=$("$TANDEM" models path qwen2.5-coder-0.5b-instruct)

serve() { # label, extra server args...
  local label=$1; shift
  "$SERVER" -m "$BIG" -t "$THREADS" -c 2048 --port "$PORT" "$@" > "$OUT/$label.server.log" 2>&1 &
  PID=$!
  for _ in $(seq 240); do
    curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && return 0
    sleep 0.5
  done
  echo "llama-server ($label) did not start" >&2; kill "$PID"; exit 1
}
ask() { # label
  python3 - "$PORT" "$GEN" >> "$OUT/$1.jsonl" <<'PY'
import json, sys, urllib.request
port, gen = sys.argv[1], int(sys.argv[2])
prompts = {
    "code": "Write a Python function that returns the n-th Fibonacci number iteratively, with a docstring and type hints.",
    "prose": "Write a detailed story about a lighthouse keeper who finds a message in a bottle. Describe the sea, the weather and the keeper's daily routine.",
}
for kind, p in prompts.items():
    body = json.dumps({"messages": [{"role": "user", "content": p}], "max_tokens": gen,
                       "temperature": 0, "cache_prompt": False}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"Content-Type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=600))
    t = r.get("timings", {})
    print(json.dumps({"kind": kind, "text": r["choices"][0]["message"]["content"],
                      "decode_tok_s": t.get("predicted_per_second"),
                      "drafted": t.get("draft_n"), "accepted": t.get("draft_n_accepted")}))
PY
}
for r in $(seq "$ROUNDS"); do
  serve plain; ask plain; kill "$PID"; wait "$PID" 2>/dev/null || true
  for g in "${GAMMAS[@]}"; do
    serve "spec$g" --spec-type draft-simple -md "$SMALL" --spec-draft-n-max "$g" --spec-draft-n-min 0 -td "$THREADS"
    ask "spec$g"; kill "$PID"; wait "$PID" 2>/dev/null || true
  done
  echo "round $r done" >&2
done

echo "speculative decoding, llama.cpp b11434 server: Qwen2.5-Coder-1.5B (Q4_K_M) with Qwen2.5-Coder-0.5B (Q8_0) drafting, $THREADS threads, $GEN tokens, greedy, $ROUNDS rounds (median), $(date -u +%F)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| prompt | draft tokens | 1.5B alone decode tok/s | speculative decode tok/s | ratio | drafted tokens accepted | same text as 1.5B alone |"
echo "|---|---|---|---|---|---|---|"
for g in "${GAMMAS[@]}"; do
  python3 - "$OUT" "$g" <<'PY'
import json, statistics as st, sys
out, g = sys.argv[1:]
rows = lambda l: [json.loads(x) for x in open(f"{out}/{l}.jsonl") if x.strip()]
plain, spec = rows("plain"), rows(f"spec{g}")
for kind in ("code", "prose"):
    p = [r for r in plain if r["kind"] == kind]; s = [r for r in spec if r["kind"] == kind]
    dec = lambda rs: st.median(r["decode_tok_s"] for r in rs)
    acc = sum(r["accepted"] or 0 for r in s) / max(1, sum(r["drafted"] or 0 for r in s))
    same = all(x["text"] == p[0]["text"] for x in s)
    print(f"| {kind} | {g} | {dec(p):.1f} | {dec(s):.1f} | **{dec(s)/dec(p):.2f}x** | {acc:.0%} | {'yes' if same else 'no'} |")
PY
done
