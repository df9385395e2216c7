# The two commands of the quick start are `make run` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
DEMO   ?= demo-home
PYTHON ?= python3

.PHONY: setup run test lint format bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: a CPU build. Unpinned, the embedder's dependencies pull a
	# multi-GB CUDA build (see ../shared/reference/mem0-offline.md, pitfall 4).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

setup: $(VENV)/.installed

# Set everything up, make a demo home if there is none, run the daemon in the foreground.
run: setup
	@test -d $(DEMO) || $(BIN)/executive init --demo $(DEMO)
	EXECUTIVE_HOME=$(abspath $(DEMO)) $(BIN)/executive run

# The whole suite: lint, format, architecture contracts, tests.
test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(PY) -m pytest

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	$(PY) bench/idle.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
