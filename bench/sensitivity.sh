#!/usr/bin/env bash
# The sensitivity engine, measured: quality on the labelled development data (through the CLI
# contracts) and speed (criterion + plain timings, peer: one memchr-driven regex pass).
# Usage: bench/sensitivity.sh [path/to/shared/eval/dev]
set -euo pipefail
cd "$(dirname "$0")/.."
# tandem never reads ./models on its own: name this checkout's models directory.
export TANDEM_MODELS_DIR="${TANDEM_MODELS_DIR:-$PWD/models}"
target="${CARGO_TARGET_DIR:-target}"
# Same invocation shape as every other build (feature unification), dev profile (the core is
# optimized there; see Cargo.toml).
cargo build -q --workspace --all-targets
scripts/fetch-ner.sh models >/dev/null
data="${1:-../shared/eval/dev}"
mkdir -p bench/out
python3 bench/eval_sensitivity.py --tandem "$target/debug/tandem" --data "$data" --json bench/out/sensitivity-eval.json
cargo bench -q --profile dev --workspace --bench sensitivity 2>&1 | grep -E "thrpt|rule stage|NER" || true
