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

.PHONY: install system-deps run index ask serve test lint dev bench clean

# Python dependencies (pinned in pyproject.toml) into a local virtualenv.
$(BIN)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

install: $(BIN)/.installed

# Chromium for the real-browser tests, Node/npm for the site's vendored runtime.
system-deps:
	@if ! command -v chromium >/dev/null || ! command -v npm >/dev/null; then \
	  echo "installing chromium, nodejs and npm with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium nodejs npm >/dev/null; \
	fi

$(DAGSTER_HOME)/dagster.yaml: dagster.yaml
	@mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $@

# The main job: index REPO (default: this repository), build its wiki, answer a sample question, serve it.
run: install system-deps $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/oya build $(REPO) --out $(OUT) --site
	$(BIN)/oya ask "$(QUESTION)" --index $(OUT)
	$(BIN)/oya serve $(OUT)/site --port $(PORT)

index: install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/oya build $(REPO) --out $(OUT)

# Every test, the slow real-model and real-browser ones included, plus the static checks.
test: install system-deps $(DAGSTER_HOME)/dagster.yaml lint
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Dagster's UI with the asset graph (OYA_REPO / OYA_OUT / OYA_EMBEDDER configure it).
dev: install $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev -m pipelines.definitions -h 127.0.0.1

bench: install
	$(BIN)/python bench/index_bench.py

clean:
	rm -rf $(OUT) .dagster_home .pytest_cache .mypy_cache .ruff_cache
