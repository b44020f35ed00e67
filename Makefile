# The two commands the README promises: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow install bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "needs $(PYTHON) on PATH"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and pinned, so nothing resolves it to a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# The embedding model's ONNX graph, exported once from the bundled weights (no download).
	$(BIN)/python -m core.history.onnx_export
	touch $(STAMP)

install: $(STAMP)

# Opens the workbench on the sample users with the offline demo models.
demo: $(STAMP)
	$(BIN)/prefscope demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --config pyproject.toml
	$(BIN)/python -m pytest -q -n auto -m "not slow"
	# The docs site, strict: a broken link or anchor, a page missing from the nav, fails (~2 s).
	# Not --quiet: it silences the warnings, and strict mode then fails on none.
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $$site; \
	  status=$$?; rm -rf $$site; exit $$status

# The suites marked slow (subprocesses killed and resumed, locked databases, real embedding
# models, Pilot sessions of hundreds of keys): CI runs them after `make test`.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# Every bench/*.py, then one table: figure, goal, now and the baseline measured in the same run.
bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
