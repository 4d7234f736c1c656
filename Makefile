# Two entry points for a fresh machine with Python 3.11+ and make:
#   make render   set up .venv with what rendering needs, render every stacks/Pulumi.<env>.yaml
#                 into rendered/<env>/ and validate it
#   make test     set up .venv with the test tools too and run the whole test suite
#   make e2e      build the real programs (cached) and run the e2e tier against them
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Re-install whenever the project metadata or the pinned versions change: kubetrain alone for
# render, validate and diff; with its Pulumi extra and the test tools for the rest.
STAMP      := $(VENV)/.kubetrain-installed
TEST_STAMP := $(VENV)/.kubetrain-test-installed

.PHONY: render test e2e e2e-build validate diff bench lint catalog clean

render: $(STAMP)
	$(BIN)/kubetrain render
	$(BIN)/kubetrain validate rendered

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -n auto -q

# The real-engine tier: builds (or reuses, cached outside the clone by version) the programs of
# e2e/tools.toml from their Go modules, then runs e2e/ against them on 127.0.0.1.
e2e: $(TEST_STAMP)
	$(PYTHON) e2e/build.py
	$(BIN)/python -m pytest e2e -q -p no:cacheprovider --durations=25 -n 2 --dist loadfile --no-loadscope-reorder

e2e-build:
	$(PYTHON) e2e/build.py

validate: $(STAMP)
	$(BIN)/kubetrain validate rendered

diff: $(STAMP)
	$(BIN)/kubetrain diff

bench: $(TEST_STAMP)
	$(BIN)/python bench/run.py

# The catalogue's generated columns (kubetrain/kube/catalog/_generated.py) from the bundled
# schemas and the CRDs of ../shared/crds; tests/test_catalog.py fails when it is stale.
catalog: $(STAMP)
	$(BIN)/python -m kubetrain.kube.catalog.generate

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(TEST_STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
