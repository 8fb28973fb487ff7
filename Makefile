# Every target creates the virtualenv it needs; only python3 (>= 3.10) must exist.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo test bench eval clean

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## fingerprint and cluster the bundled examples
	$(BIN)/simdedup fingerprint --silent examples/en examples/zh | $(BIN)/simdedup cluster --k 3

test: $(STAMP)  ## run the tests
	$(BIN)/python -m pytest -q -n 2 2>/dev/null || $(BIN)/python -m pytest -q

clean:  ## remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
