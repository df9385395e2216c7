# The two commands of the quick start are `make run` and `make test`.
# Recipes are silent (@) and setup talks on stderr: `make run | jq` sees only the daemon.
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
DEMO   ?= demo-home
PYTHON ?= python3
# Where torch comes from. This machine's pip finds a CPU build of torch 2.13.0 on disk;
# elsewhere, point this at a CPU index (https://download.pytorch.org/whl/cpu), or the
# embedder's dependencies pull a multi-GB CUDA build.
TORCH_INDEX ?=

.PHONY: setup run test lint format bench clean

$(VENV)/.installed: pyproject.toml
	@echo "setting up $(VENV) (about a minute)" >&2
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip >&2
	@$(PY) -m pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) torch==2.13.0 >&2
	@$(PY) -m pip install --quiet -e ".[dev,setup]" >&2
	@touch $@

# The embedding model, exported once to ONNX inside the venv (torch is a set-up tool only).
$(VENV)/share/executive/models/all-MiniLM-L6-v2/model_int8.onnx: $(VENV)/.installed
	@$(PY) -m executive.memory.store.model_setup >&2
	@touch $@

setup: $(VENV)/.installed $(VENV)/share/executive/models/all-MiniLM-L6-v2/model_int8.onnx

# Set everything up, make a demo home if there is none, run the daemon in the foreground.
run: setup
	@test -d $(DEMO) || $(BIN)/executive init --demo $(DEMO) >&2
	@EXECUTIVE_HOME=$(abspath $(DEMO)) $(BIN)/executive run

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
	$(PY) bench/pack.py
	$(PY) bench/store.py
	$(PY) bench/durability.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache
