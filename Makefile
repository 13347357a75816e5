# Every target creates (or reuses) the project's own virtualenv in .venv.
# `make demo` installs only what risutools needs to run; `make test` adds the dev tools.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUNTIME_STAMP := $(VENV)/.installed
DEV_STAMP     := $(VENV)/.installed-dev

.PHONY: venv demo demo-check test lint typecheck unit package bench clean

# Logs are plain when they do not go to a terminal (CI, `make ... > log`): tools that colour
# (pip, build, twine: rich) are told so by NO_COLOR; on a terminal they colour as they like.
PLAIN = [ -t 1 ] || export NO_COLOR=1 TERM=dumb;

$(RUNTIME_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PLAIN) $(BIN)/python -m pip install -q --upgrade pip
	$(PLAIN) $(BIN)/python -m pip install -q -e .
	touch $@

$(DEV_STAMP): $(RUNTIME_STAMP)
	$(PLAIN) $(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

venv: $(DEV_STAMP)

## demo: ingest the bundled fixture sources into a catalog (Korean sentences, curator notes),
##       replay the context cutter, validate and verify the catalog; then review it, show a
##       promotion refused for a missing approval, sign approvals with a throwaway SSH key,
##       promote the cutter to approved (replay evidence while pending, a packet-bound signed
##       approval), activate it (signed), catch a forged status with validate, and validate +
##       verify + review again (its interactions: the Board family of fixtures/interactions,
##       an unsatisfied toggle, a version pair with its drift, a repost)
DEMO := build/demo-catalog
DEMO_CUTTER := module.risu.174678332.context-cutter
demo: demo-check $(RUNTIME_STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO) && cp -r fixtures/notes $(DEMO)/notes
	$(BIN)/risutools ingest fixtures/sources -o $(DEMO) --lang ko
	$(BIN)/risutools ingest fixtures/interactions -o $(DEMO) --lang ko -q  # a backend, its extension in two versions
	$(BIN)/risutools replay run $(DEMO)/module.risu.174678332.context-cutter.json \
		--fixture fixtures/replay/anchor-edit.yaml --update
	cp fixtures/replay/anchor-edit.yaml $(DEMO)/replays/  # (kept beside its report: gate G6 replays it again)
	$(BIN)/risutools validate $(DEMO)
	$(BIN)/risutools verify $(DEMO) --sources fixtures/sources
	@echo "--- review, then promotion of the context cutter (docs/catalog.md)"
	printf 'catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n' > $(DEMO)/.risutools.yaml
	rm -f build/demo-key build/demo-key.pub && ssh-keygen -q -t ed25519 -N '' -C demo -f build/demo-key
	echo "demo $$(cut -d' ' -f1,2 build/demo-key.pub)" > $(DEMO)/.allowed_signers
	$(BIN)/risutools review $(DEMO) --sources fixtures/sources -q
	$(BIN)/risutools promote $(DEMO_CUTTER) --catalog $(DEMO) --sources fixtures/sources --to pending_human_review; test $$? -eq 1
	$(BIN)/risutools approve $(DEMO_CUTTER) --catalog $(DEMO) --action request_review --reviewer demo --sign build/demo-key
	$(BIN)/risutools promote $(DEMO_CUTTER) --catalog $(DEMO) --sources fixtures/sources --to pending_human_review
	@echo "--- evidence while pending (a logged line), a packet-bound signed approval, a signed activation"
	$(BIN)/risutools replay run $(DEMO)/$(DEMO_CUTTER).json --fixture fixtures/replay/anchor-edit.yaml --update
	rm -rf build/demo-packets && $(BIN)/risutools packet $(DEMO_CUTTER) --catalog $(DEMO) --lane light -o build/demo-packets
	$(BIN)/risutools approve $(DEMO_CUTTER) --catalog $(DEMO) --action approve --reviewer demo --sign build/demo-key --packet build/demo-packets/$(DEMO_CUTTER)--light--*.json
	$(BIN)/risutools promote $(DEMO_CUTTER) --catalog $(DEMO) --sources fixtures/sources --to approved
	$(BIN)/risutools approve $(DEMO_CUTTER) --catalog $(DEMO) --action activate --reviewer demo --sign build/demo-key
	$(BIN)/risutools activate $(DEMO_CUTTER) --catalog $(DEMO)
	$(BIN)/risutools validate $(DEMO) --allowed-signers $(DEMO)/.allowed_signers
	@echo "--- a forged status (edited by hand, no signed record) is caught by validate (exit 1)"
	rm -rf build/demo-forged && cp -r $(DEMO) build/demo-forged
	sed -i 's/"review_status": "approved"/"review_status": "promoted"/' build/demo-forged/$(DEMO_CUTTER).json
	$(BIN)/risutools validate build/demo-forged --allowed-signers $(DEMO)/.allowed_signers -f concise; test $$? -eq 1
	$(BIN)/risutools verify $(DEMO) --sources fixtures/sources
	$(BIN)/risutools review $(DEMO) --sources fixtures/sources -q -f html -o build/demo-review.html
	$(BIN)/risutools review $(DEMO) --sources fixtures/sources -q
	@echo
	@echo "demo catalog: $(DEMO)  (replay report: $(DEMO)/replays/*.html; review page: build/demo-review.html)"
	@echo "expected: 12 documents, 0 errors, 3 warnings: the 9 of fixtures/sources complete (fixtures/notes"
	@echo "writes every narrative) and every digest verified; the 3 of fixtures/interactions without notes"
	@echo "(MC600) and with their sources not in the store (MC202 not at hand); the first promotion refused"
	@echo "(no approval), the signed ones accepted: the cutter is approved and active; the forged copy"
	@echo "(build/demo-forged) fails validate"

## demo-check: what `make demo` needs besides make: python3 (with venv) and ssh-keygen; each
##             missing one is named before anything is built
demo-check:
	@missing=""; \
	command -v $(PYTHON) >/dev/null 2>&1 && $(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 \
		|| missing="$$missing $(PYTHON) (3.10+, with its venv module)"; \
	command -v ssh-keygen >/dev/null 2>&1 || missing="$$missing ssh-keygen (OpenSSH, signs the demo's approvals)"; \
	if [ -n "$$missing" ]; then echo "make demo needs:$$missing; install it and run make demo again" >&2; exit 1; fi

## test: lint, type-check, run the test suite, and check the wheel builds and its metadata renders
test: lint typecheck unit package

lint: $(DEV_STAMP)
	$(BIN)/ruff check risutools tests bench

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

unit: $(DEV_STAMP)
	$(BIN)/pytest -q

## package: build the sdist and wheel into build/dist and check them with twine
package: $(DEV_STAMP)
	rm -rf build/dist
	$(PLAIN) $(BIN)/python -m build --no-isolation --outdir build/dist . >/dev/null
	$(PLAIN) $(BIN)/twine $$([ -t 1 ] || echo --no-color) check --strict build/dist/*

## bench: print the figures (see bench/RESULTS.md)
bench: $(DEV_STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build .mypy_cache .pytest_cache .ruff_cache
