# Two entry points for a fresh machine with Python 3.11+ and make:
#   make render   set up .venv, render every stacks/Pulumi.<env>.yaml into rendered/<env>/ and validate it
#   make test     set up .venv and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Re-install whenever the project metadata or the pinned versions change.
STAMP  := $(VENV)/.kubetrain-installed

.PHONY: render test validate diff bench lint clean

render: $(STAMP)
	$(BIN)/kubetrain render
	$(BIN)/kubetrain validate rendered

test: $(STAMP)
	$(BIN)/python -m pytest -n auto -q

validate: $(STAMP)
	$(BIN)/kubetrain validate rendered

diff: $(STAMP)
	$(BIN)/kubetrain diff

bench: $(STAMP)
	$(BIN)/python bench/run.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
