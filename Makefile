# Every target creates (or reuses) the project's own virtualenv in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: venv demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## demo: ingest the bundled fixture sources into a catalog, then validate it
demo: $(STAMP)
	rm -rf build/demo-catalog
	$(BIN)/risutools ingest fixtures/sources -o build/demo-catalog
	$(BIN)/risutools validate build/demo-catalog

## test: lint, type-check and run the test suite
test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check risutools tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

## bench: print the figures (see bench/RESULTS.md)
bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build .mypy_cache .pytest_cache .ruff_cache
