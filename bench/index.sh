#!/usr/bin/env bash
# Watched folders and the index (src-tauri/core/benches/index.rs): a generated corpus of 10,000
# mixed files with planted identifiers; initial throughput, peak memory, a restart pass, and
# change → re-classified latency through the watcher. Figures go to bench/RESULTS.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -q --profile dev --workspace --bench index
