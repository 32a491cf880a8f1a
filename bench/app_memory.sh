#!/usr/bin/env bash
# The desktop app's idle memory: start it under Xvfb, wait until the local model is
# loaded, let it settle, then sum the resident memory (RSS and PSS) of the app and
# its WebKit helper processes. The peer in the same run is the same app with no
# model available (the shell and webview alone), so the model's share is visible.
# Usage: bench/app_memory.sh [settle_seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
SETTLE="${1:-10}"
. bench/app_common.sh

measure() { # label models_dir wait_for_load
  local log; log=$(mktemp)
  DISPLAY=$display TANDEM_LOG=info TANDEM_MODELS_DIR="$2" "$APP" >"$log" 2>&1 & app=$!
  if [ "$3" = yes ]; then
    for _ in $(seq 300); do grep -q "local model loaded" "$log" && break; sleep 0.2; done
    grep -q "local model loaded" "$log" || { echo "app_memory: the model did not load" >&2; cat "$log" >&2; exit 1; }
  fi
  sleep "$SETTLE"
  local pids="$app $(pgrep -d ' ' -P "$app" || true)"
  for p in $pids; do pids="$pids $(pgrep -d ' ' -P "$p" || true)"; done
  python3 - "$1" $(echo "$pids" | tr ' ' '\n' | sort -u) <<'PY'
import sys
label, pids = sys.argv[1], sys.argv[2:]
rss = pss = 0
names = []
for pid in pids:
    try:
        name = open(f"/proc/{pid}/comm").read().strip()
        r = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
        p = sum(int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.startswith("Pss:"))
    except (FileNotFoundError, StopIteration, ProcessLookupError):
        continue
    rss += r; pss += p; names.append(f"{name} {r/1024:.0f}")
print(f"| {label} | {rss/1024:.0f} MB | {pss/1024:.0f} MB | {', '.join(names)} |")
PY
  kill "$app" 2>/dev/null; wait "$app" 2>/dev/null || true
}

echo "| app, idle ${SETTLE} s | RSS | PSS | per process (RSS MB) |"
echo "|---|---|---|---|"
measure "shell + webview, no model (peer)" "$(mktemp -d)" no
measure "with the default model loaded" "$PWD/models" yes
