#!/usr/bin/env bash
# The gateway's overhead and throughput (src-tauri/core/benches/gateway.rs): added latency per
# request against the loopback provider called directly, and wrk (Debian package, installed
# here when missing) against both. Figures go to bench/RESULTS.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq wrk >/dev/null || echo "bench: wrk could not be installed; the throughput figure is skipped" >&2
fi
cargo bench -q --profile dev --workspace --bench gateway
