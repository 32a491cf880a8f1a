# The two commands of the README: `make run` and `make test`. Both install what is
# missing first (scripts/setup.sh) and are quiet when everything is in place.
# CARGO_TARGET_DIR is honoured (CI keeps one under ~/.cache).
#
# Every build is `cargo build --workspace --all-targets`: cargo unifies dependency
# features over the packages and targets of one invocation, so building the CLI, the
# app and the tests separately would compile mistral.rs and its dependencies two or
# three times with different feature sets (25 minutes each on 2 cores).

CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
# This checkout's models (tandem never looks in the working directory on its own: a cloned
# repository's models/ could carry a library of its author's choosing).
export TANDEM_MODELS_DIR ?= $(CURDIR)/models

.PHONY: deb deb-debug run test setup setup-test app models check-core-gui-free test-rust test-ui test-e2e bench clean-models

run: setup app
	$(TARGET_DIR)/debug/tandem-app

test: setup-test check-core-gui-free test-ui test-rust test-e2e

setup:
	@scripts/setup.sh run

setup-test:
	@scripts/setup.sh test

app:
	$(CARGO) build -q --workspace --all-targets

models: app
	$(TARGET_DIR)/debug/tandem models fetch
	scripts/fetch-ner.sh models

# The core must never depend on tauri (it is hosted by the CLI and tested headless).
check-core-gui-free:
	@if $(CARGO) tree -q -p tandem-core -e normal | grep -q ' tauri'; then \
	  echo "tandem-core depends on tauri" >&2; exit 1; fi
	@if $(CARGO) tree -q -p tandem-sensitivity -e normal | grep -qE ' (tauri|tandem-core)'; then \
	  echo "tandem-sensitivity depends on tauri or the rest of the core" >&2; exit 1; fi

test-ui:
	@cd ui && npx vitest run --silent

test-rust:
	$(CARGO) test -q --workspace --all-targets

# The real window under Xvfb, driven over WebDriver: a question in, a streamed local answer out.
test-e2e:
	@python3 tests/e2e/window.py "$(abspath $(TARGET_DIR))/debug/tandem-app"

bench:
	@bench/local_engine.sh
	@bench/sensitivity.sh
	@bench/gateway.sh
	@bench/index.sh
	@bench/app_startup.sh
	@bench/app_memory.sh
	@bench/app_responsive.py

# Packages: the release build takes ~25 min cold on 2 cores; the debug one reuses `make run`'s.
# The package carries the NER model and ONNX Runtime (fetched and sha256-checked by setup) as
# resources: a new user scans names without fetching anything (tauri.bundle-ner.json).
deb: setup
	ui/node_modules/.bin/tauri build --bundles deb --config tauri.bundle-ner.json

deb-debug: setup
	ui/node_modules/.bin/tauri build --debug --bundles deb --config tauri.bundle-ner.json
