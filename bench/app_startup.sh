#!/usr/bin/env bash
# Time from launch to an interactive window: the page's script has run and its first IPC call
# reached the shell (the app logs "window interactive" with the milliseconds since `run`
# began). The peer in the same run is the native window being mapped on the X server (what a
# bare webview window costs before any page work). Five launches; the model loads in the
# background and is not waited for. Usage: bench/app_startup.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
. bench/app_common.sh
echo "| run | native window mapped (peer) | window interactive (page ran, IPC answered) |"
echo "|---|---|---|"
for i in $(seq "$RUNS"); do
  data=$(mktemp -d); log="$data/log"
  t0=$(date +%s%N)
  DISPLAY=$display TANDEM_LOG=info TANDEM_MODEL="${TANDEM_MODEL:-smollm2-135m-instruct}" TANDEM_MODELS_DIR="$PWD/models" TANDEM_LEDGER="$data/l" \
    TANDEM_CONVERSATIONS="$data/c" TANDEM_PREFS="$data/p.json" TANDEM_INDEX="$data/i" "$APP" >"$log" 2>&1 & app=$!
  mapped=""
  for _ in $(seq 600); do
    if [ -z "$mapped" ] && DISPLAY=$display xdotool search --onlyvisible --name '^Tandem$' >/dev/null 2>&1; then
      mapped=$(( ($(date +%s%N) - t0) / 1000000 ))
    fi
    grep -q "window interactive" "$log" && [ -n "$mapped" ] && break
    sleep 0.02
  done
  ready=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -o 'window interactive.*' | grep -o 'ms=[0-9]*' | head -1 | cut -d= -f2)
  echo "| $i | ${mapped:-?} ms | ${ready:-?} ms |"
  kill "$app" 2>/dev/null; wait "$app" 2>/dev/null || true
  rm -rf "$data"
done
