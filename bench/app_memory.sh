#!/usr/bin/env bash
# The desktop app's idle memory: start it under Xvfb, wait until the local model is
# loaded, let it settle, then sum the resident memory (RSS and PSS) of the app and
# its WebKit helper processes. Peers in the same run: the same app with no model available
# (the shell and webview alone), so the model's share is visible; and a bare WebKitGTK window
# with an empty page (bench/bare_webview.py), the floor any WebKitGTK app starts from.
# RSS counts shared libraries in full in every process (WebKit, and Mesa's LLVM when there is
# no GPU driver); PSS splits them among the processes sharing them; USS is private memory only
# (closest to what macOS and Windows report as an app's memory).
# Usage: bench/app_memory.sh [settle_seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
SETTLE="${1:-10}"
. bench/app_common.sh

measure() { # label models_dir wait_for_load [command]
  local log; log=$(mktemp)
  DISPLAY=$display TANDEM_LOG=info TANDEM_MODEL="${TANDEM_MODEL:-smollm2-135m-instruct}" TANDEM_MODELS_DIR="$2" "${4:-$APP}" >"$log" 2>&1 & app=$!
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
rss = pss = uss = 0
names = []
for pid in pids:
    try:
        name = open(f"/proc/{pid}/comm").read().strip()
        r = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
        roll = {l.split(":")[0]: int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.split()[1:2] and l.split()[1].isdigit()}
        p, u = roll["Pss"], roll["Private_Clean"] + roll["Private_Dirty"]
    except (FileNotFoundError, StopIteration, ProcessLookupError, KeyError):
        continue
    rss += r; pss += p; uss += u; names.append(f"{name} {r/1024:.0f}/{p/1024:.0f}/{u/1024:.0f}")
print(f"| {label} | {rss/1024:.0f} MB | {pss/1024:.0f} MB | {uss/1024:.0f} MB | {', '.join(names)} |")
PY
  kill "$app" 2>/dev/null; wait "$app" 2>/dev/null || true
}

echo "| app, idle ${SETTLE} s | RSS | PSS | USS (private) | per process (RSS/PSS/USS MB) |"
echo "|---|---|---|---|---|"
# The floor: WebKitGTK with an empty page and no Tandem code (Debian's python3-gi, WebKit2 4.1).
if /usr/bin/python3 -c 'import gi; gi.require_version("WebKit2", "4.1")' 2>/dev/null; then
  measure "bare WebKitGTK window, empty page (floor peer)" "$(mktemp -d)" no "$PWD/bench/bare_webview.py"
fi
measure "shell + webview, no model (peer)" "$(mktemp -d)" no
measure "with the default model loaded" "$PWD/models" yes
