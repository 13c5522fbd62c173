# One venv for everything; `make lab` and `make test` each set it up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lab: $(STAMP)  ## set up, then open JupyterLab on the notebook series
	$(BIN)/jupyter lab notebooks/

test: $(STAMP)  ## set up, then run every test (unit, theory, properties, CLI, lint)
	$(BIN)/ruff check workbench tests
	$(BIN)/python -m pytest

bench: $(STAMP)  ## speed benchmarks (printed figures, not pass/fail)
	$(BIN)/python tests/benchmarks/bench_simpy.py
	$(BIN)/python tests/benchmarks/bench_compile.py
	$(BIN)/python tests/benchmarks/grader_eval.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis .ruff_cache
