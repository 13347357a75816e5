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

## demo: ingest the bundled fixture sources into a catalog (Korean sentences, curator notes),
##       replay the context cutter, then validate and verify the catalog
DEMO := build/demo-catalog
demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO) && cp -r fixtures/notes $(DEMO)/notes
	$(BIN)/risutools ingest fixtures/sources -o $(DEMO) --lang ko
	$(BIN)/risutools replay run $(DEMO)/module.risu.174678332.context-cutter.json \
		--fixture fixtures/replay/anchor-edit.yaml --update
	$(BIN)/risutools validate $(DEMO)
	$(BIN)/risutools verify $(DEMO) --sources fixtures/sources
	@echo
	@echo "demo catalog: $(DEMO)  (replay report: $(DEMO)/replays/*.html)"

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
