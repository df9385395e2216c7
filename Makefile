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
# The coding-memory benchmark's data: the `cases` folder of a copy of SWE-ContextBench
# (git clone https://github.com/jiayuanz3/SWEContextBench; never copied into this repository).
SWECB ?=
SWECB_IDS ?= ../shared/data/swecontextbench/dev-related-ids.txt

# The exact versions the set-up installs (every package, the extras dev and setup included);
# `make lock` makes it anew from pyproject.toml (docs/upgrading.md).
LOCK   := requirements.lock
TORCH  := $(shell grep -m1 '^torch==' $(LOCK) 2>/dev/null)
# The torch of pyproject.toml's setup extra, for a fresh resolve.
SETUP_TORCH := $(shell grep -o -m1 'torch==[0-9.]*' pyproject.toml)

.PHONY: setup sandbox-tool browser run test docs lint format bench clean lock

# pip, with one harmless warning left out: a pip configuration whose index names a folder per
# package (file:///opt/pypi/simple) warns "Location '...' is ignored: it is neither a file nor a
# directory" for every package the folder lacks (146 lines on a set-up here), drowning what
# matters. Everything else pip says is shown (after it ends), and its exit status is kept.
IGNORED_LOCATION := ^WARNING: Location '[^']*' is ignored: it is neither a file nor a directory\.$$
pip = log=$$(mktemp) && { $(PY) -m pip $(1) >&2 2>"$$log"; status=$$?; \
	grep -v "$(IGNORED_LOCATION)" "$$log" >&2; rm -f "$$log"; exit $$status; }

$(VENV)/.installed: pyproject.toml $(LOCK)
	@echo "setting up $(VENV) (about two minutes, then the embedding model: under a minute; 2.5 GB)" >&2
	@$(PYTHON) -m venv $(VENV)
	@$(call pip,install --quiet --upgrade pip)
	@$(call pip,install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH)")
	@$(call pip,install --quiet -r $(LOCK))
	@$(call pip,install --quiet --no-deps -e .)
	@$(PY) -m pip check >&2
	@touch $@

# A fresh resolve of pyproject.toml (torch first, the CPU build, as the set-up installs it)
# in a throw-away venv, frozen. Then `make test` installs it and says whether it holds.
lock:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  echo "resolving pyproject.toml afresh in $$tmp (a few minutes)" >&2; \
	  $(PYTHON) -m venv "$$tmp/venv"; \
	  "$$tmp/venv/bin/pip" install --quiet --upgrade pip >&2; \
	  "$$tmp/venv/bin/pip" install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) $(SETUP_TORCH) >&2; \
	  "$$tmp/venv/bin/pip" install --quiet ".[dev,setup]" >&2; \
	  { echo "# Made by \`make lock\` from pyproject.toml (.[dev,setup], $(SETUP_TORCH) first): do not edit."; \
	    "$$tmp/venv/bin/pip" freeze --exclude executive; } > $(LOCK).new; \
	  mv $(LOCK).new $(LOCK); echo "$(LOCK): $$(grep -c '==' $(LOCK)) packages" >&2

# The embedding model, exported once to ONNX inside the venv (torch is a set-up tool only).
# The target is the default model's file: a venv set up before it existed gets it added.
# The folder is named, so an EXECUTIVE_MODELS_DIR in the shell cannot send it elsewhere.
$(VENV)/share/executive/models/all-MiniLM-L6-v2/model_int8_smooth.onnx: $(VENV)/.installed
	@$(PY) -m executive.setup.models --models-dir $(VENV)/share/executive/models >&2
	@touch $@

setup: $(VENV)/.installed $(VENV)/share/executive/models/all-MiniLM-L6-v2/model_int8_smooth.onnx sandbox-tool

# Workers run in a bubblewrap sandbox. Root with apt-get (CI, a fresh container) gets it
# installed here; anyone else is told, and the daemon falls back (`executive doctor` says
# which isolation is active and why). Never fails the build.
sandbox-tool:
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >&2; } \
		|| echo "bubblewrap is not installed: workers run without a sandbox (sudo apt-get install bubblewrap)" >&2

# Set everything up, make a demo home if there is none, run the daemon in the foreground.
run: setup
	@test -d $(DEMO) || $(BIN)/executive init --demo $(DEMO) >&2
	@echo "running the daemon on $(DEMO) in the foreground (its log on stdout; Ctrl-C stops it)" >&2
	@EXECUTIVE_HOME=$(abspath $(DEMO)) $(BIN)/executive run

# The dashboard's browser tests drive Debian's Chromium (never a downloaded browser). With
# apt-get and root (CI on a fresh machine) or password-less sudo it is installed here;
# elsewhere we say what to run.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	  else sudo=none; fi; \
	  if [ "$$sudo" != none ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium and chromium-driver for the dashboard's browser tests" >&2; \
	    $$sudo apt-get update -qq >&2 && $$sudo env DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2; \
	  else \
	    echo "chromium/chromedriver missing: sudo apt-get install chromium chromium-driver" >&2; \
	  fi; \
	fi

# The documentation site (mkdocs.yml over docs/), built with --strict into a temporary folder
# and thrown away: a page left out of the nav, a broken link or a missing anchor fails it.
# `make test` runs it, so CI does; `.venv/bin/mkdocs serve` shows the site while you edit.
docs: setup
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(BIN)/mkdocs build --strict --site-dir "$$tmp/site"

# The whole suite: lint, format, architecture contracts, the docs site, tests. The suite starts ~100
# interpreters (daemons, workers, the CLI), so our modules' bytecode is cached (__pycache__,
# ignored by git) even where the shell says not to write any (PYTHONDONTWRITEBYTECODE).
test: setup browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	@$(MAKE) --no-print-directory docs
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	$(PY) bench/idle.py
	$(PY) bench/pack.py
	$(PY) bench/store.py
	$(PY) bench/durability.py
	$(PY) bench/leftovers.py
	@if [ -n "$(SWECB)" ] && [ -d "$(SWECB)/SWEContextBench Lite Past Experience" ]; then \
	  $(PY) bench/experience.py "$(SWECB)" $(if $(wildcard $(SWECB_IDS)),--related-ids $(SWECB_IDS)); \
	else \
	  echo "bench/experience.py skipped: it needs SWE-ContextBench's cases folder. Run" >&2; \
	  echo "  git clone https://github.com/jiayuanz3/SWEContextBench /tmp/swecb" >&2; \
	  echo "  make bench SWECB=/tmp/swecb/cases" >&2; \
	fi

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .import_linter_cache
