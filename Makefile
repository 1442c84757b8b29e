# Two entry points for a fresh machine: `make bench` (the main job) and `make test`.
# Both create the virtual environment on first use, and install the Debian packages the project needs
# outside Python (below) when they are missing; nothing else is installed outside .venv.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

# Debian packages needed outside Python, one list so it can grow:
#   chromium-headless-shell  the headless browser that renders view.html in tests/report/test_view.py
#   fonts-dejavu-core        a font for it: without any, the page's text renders as nothing
#   bubblewrap               bwrap, the sandbox that runs model-written code (engines/sandbox; its helpers
#                            prlimit and setpriv come with util-linux, which every Debian system has)
DEBIAN_PACKAGES := chromium-headless-shell fonts-dejavu-core bubblewrap

.PHONY: bench test lint debian-packages

# Installs the missing ones with apt-get, as root or through sudo; otherwise stops with the command to run.
debian-packages:
	@missing=""; \
	if ! command -v dpkg-query >/dev/null 2>&1; then \
		echo "make: not a Debian system: install the equivalents of $(DEBIAN_PACKAGES) yourself" \
			"(the browser tests fail without a headless Chromium, the sandbox tests without bwrap)" >&2; exit 0; \
	fi; \
	for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	else echo "make: missing Debian package(s):$$missing; install them as root: apt-get install$$missing" >&2; exit 1; fi; \
	echo "make: installing Debian package(s):$$missing"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing

# The wheels the code-repair importer's test cases need (tests/envs/code_repair/data/cases/*/requirements.txt),
# pinned: tests/envs/code_repair/test_cases_import.py installs them offline from this wheelhouse, as a user's
# `sv data import code-repair --format cases DIR --wheelhouse WHEELS` does.
WHEELHOUSE := $(VENV)/wheelhouse
CASE_WHEELS := pyyaml==6.0.4 jinja2==3.1.6 markupsafe==3.0.4 pyjwt==2.3.0 cryptography==50.0.2 cffi==2.1.1 \
	pycparser==3.12
WHEELS_STAMP := $(WHEELHOUSE)/.downloaded

# semgrep is pinned in engines/semgrep.py (SEMGREP_VERSION), not in pyproject.toml: `sv engines install` gives it a
# virtualenv of its own, $(VENV)/engines/semgrep, since its pins clash with verifiers'; it does nothing when it is there.
SEMGREP_PIN := src/security_verifiers/engines/semgrep.py
SEMGREP_STAMP := $(VENV)/.semgrep-stamp

$(STAMP): pyproject.toml | debian-packages
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet 'torch==2.13.0'
	$(VENV)/bin/pip install --quiet -e '.[dev,train,agentdojo,tracking,verifiers,inspect,ray]'
	$(VENV)/bin/sv engines install
	$(VENV)/bin/pip download --quiet --only-binary :all: --no-deps -d $(WHEELHOUSE) $(CASE_WHEELS)
	touch $(WHEELS_STAMP) $(SEMGREP_STAMP) $(STAMP)

# For a virtual environment made before the wheelhouse existed, or a changed pin (the stamp follows this file).
$(WHEELS_STAMP): Makefile | $(STAMP)
	$(VENV)/bin/pip download --quiet --only-binary :all: --no-deps -d $(WHEELHOUSE) $(CASE_WHEELS)
	touch $(WHEELS_STAMP)

# For a changed semgrep pin (or a virtual environment made before semgrep had its own).
$(SEMGREP_STAMP): $(SEMGREP_PIN) | $(STAMP)
	$(VENV)/bin/sv engines install
	touch $(SEMGREP_STAMP)

bench: $(STAMP) $(SEMGREP_STAMP)
	$(VENV)/bin/sv bench

test: $(STAMP) $(WHEELS_STAMP) $(SEMGREP_STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/pytest -n 2 --dist loadgroup

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/mypy src
