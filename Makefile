# One venv for everything; `make lab` and `make test` each set it up first (README: what the set-up's time goes to).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test fuzz bench notebooks book clean

# The kernels' ahead-of-time build (python -m workbench.aot, 65-73 s) runs beside `pip install`: the install's
# own build hook (setup.py) finds it under way and leaves it be (no build isolation: the venv has numba
# already, no second copy downloaded). Nothing compiles twice: runs import the build; numba's JIT compiles
# only for the tests of the JIT path, on first use.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)  # its own pip is new enough (PEP 660 editable installs): no upgrade
	[ ! -e $(BIN)/workbench ] || $(BIN)/python -m pip uninstall --quiet --yes workbench  # the dist's old name
	$(BIN)/python -m pip install --quiet numba 'setuptools>=68'  # the build's needs ([build-system]), first
	$(BIN)/python -m workbench.aot & $(BIN)/python -m pip install --quiet --no-build-isolation -e '.[test]' && wait $$!
	$(BIN)/python -m compileall -q workbench  # bytecode written once, even where PYTHONDONTWRITEBYTECODE is set: start-up
	touch $(STAMP)

lab: $(STAMP)  ## set up, then open JupyterLab on the notebook series
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

NBVAL := --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
# the tests on every core, up to four (pytest-xdist), a file's tests on one worker (module fixtures, a notebook
# whole); one process on its own took 883 s on 2 cores and kept the second core idle (user time = wall time)
XDIST := --numprocesses=auto --maxprocesses=4 --dist loadfile

test: $(STAMP)  ## set up, then run every test: lint, unit, theory, properties, CLI, drills, notebooks (nbval), the book
	$(BIN)/ruff check workbench tests
	$(BIN)/python tests/notebook_tools.py check
	$(BIN)/python tests/build_book.py  # the static book: every chapter executed (before pytest: its offline test reads it)
	$(BIN)/python -m pytest -rs $(XDIST) tests notebooks $(NBVAL)

FUZZ_EXAMPLES ?= 5000

fuzz: $(STAMP)  ## the long fuzz: FUZZ_EXAMPLES (5000) mutated inputs through the CLI, then the property tests on fresh draws
	@# 2/5 request-mode scenarios, 1/5 each token scenarios, drill files, interview and practice input; each surface
	@# in its own process prints one line: how its cases ended, its peak memory and its slowest case
	WORKBENCH_FUZZ_EXAMPLES=$$(( $(FUZZ_EXAMPLES) * 2 / 5 )) $(BIN)/python -m pytest -q -s -p no:cacheprovider \
		-p tests.fuzz_support tests/test_fuzz.py
	for surface in tokens drills interview; do \
		WORKBENCH_FUZZ_EXAMPLES=$$(( $(FUZZ_EXAMPLES) / 5 )) $(BIN)/python -m pytest -q -s -p no:cacheprovider \
			tests/test_fuzz_$$surface.py || exit 1; \
	done
	WORKBENCH_HYPOTHESIS=explore $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_compiled.py \
		tests/test_properties.py tests/test_cost_table.py tests/test_serving_compiled.py

notebooks: $(STAMP)  ## re-execute the notebooks and keep only the outputs nbval checks
	$(BIN)/python tests/notebook_tools.py refresh

book: $(STAMP)  ## execute the series and write a static HTML book (build/book/index.html); checks every figure
	$(BIN)/python tests/build_book.py

bench: $(STAMP)  ## speed benchmarks (printed figures, not pass/fail)
	$(BIN)/python tests/benchmarks/bench_simpy.py
	$(BIN)/python tests/benchmarks/bench_compile.py
	$(BIN)/python tests/benchmarks/grader_eval.py
	$(BIN)/python tests/benchmarks/bench_panels.py
	$(BIN)/python tests/benchmarks/bench_serving.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis .ruff_cache workbench/aot/_build
