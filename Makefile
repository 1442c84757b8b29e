# Two entry points for a fresh machine: `make bench` (the main job) and `make test`.
# Both create the virtual environment on first use; nothing is installed outside .venv.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

.PHONY: bench test lint

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet 'torch==2.13.0'
	$(VENV)/bin/pip install --quiet -e '.[dev,train]'
	touch $(STAMP)

bench: $(STAMP)
	$(VENV)/bin/sv bench

test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/pytest -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy src
