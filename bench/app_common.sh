# Sourced by the app benchmarks: the built app in $APP and an Xvfb display in $display; the app
# started as $app and Xvfb are stopped on exit.
APP="${CARGO_TARGET_DIR:-target}/debug/tandem-app"
[ -x "$APP" ] || cargo build -q --workspace --all-targets
display=":$(( RANDOM % 300 + 400 ))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & xvfb=$!
app=""
trap 'kill $app $xvfb 2>/dev/null || true' EXIT
sleep 1
