# rackpulse developer commands. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 9842
# Write bytecode caches even where the environment says not to (some CI images set
# PYTHONDONTWRITEBYTECODE=1): every pytest worker and every rackpulse a test starts would compile
# the project's modules again (collection 8.3 s without them, 3.8 s with, measured).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: calendar slow-tests demo test quick install install-test assets lint bench mutation screenshots clean dist docs docs-site

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Once per change of pyproject.toml, not on every `make demo`. PYTHONWARNINGS: setuptools warns on
# every editable install that a folder named like a package could shadow it, which is this
# repository's layout by design, and it was the first thing `make demo` printed.
install: $(VENV)/.installed assets
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/pip install --quiet -e .
	@touch $@

install-test: $(BIN)/python assets
	PYTHONWARNINGS=ignore $(BIN)/pip install --quiet -e '.[test]'

# htmx, uPlot and Swagger UI come from the npm registry through package-lock.json (install scripts off:
# swagger-ui-dist's analytics dependency would phone home).
assets: static/vendor/.built
static/vendor/.built: package.json package-lock.json
	@command -v npm >/dev/null || { echo "installing npm from Debian's packages"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; }
	$(PYTHON) scripts/vendor_assets.py --force

# An sdist and a wheel in dist/ that carry the built assets: installing either needs no npm.
dist: install-test assets
	rm -rf dist
	$(BIN)/python -m build --outdir dist
	@ls -l dist

demo: install
	$(BIN)/rackpulse demo --port $(PORT)

# The tests that start no peer (FRR, OpenVPN, upsd, snmpd, a browser), on every core.
# Dead code: vulture's sure findings (80 %+); paho's callback signature names the arguments it passes.
# The manual's site (mkdocs.yml): --strict fails on a broken link. Material's banner about MkDocs 2 is not ours.
MKDOCS = NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs
VULTURE = $(BIN)/vulture app collectors --min-confidence 80 --ignore-names userdata,props

quick: install-test
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(VULTURE)
	$(BIN)/pytest -m "not peers and not slow" -n auto --dist loadgroup

# Re-measure which tests `make quick` leaves out (tests/slow-tests.txt); on a quiet machine.
slow-tests: install-test
	$(BIN)/python scripts/slow_tests.py

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(VULTURE)

# The whole suite on four workers (pytest-xdist, --dist loadgroup): tests/conftest.py keeps on
# one worker, in order, a file whose tests share a peer started once for the module (FRR, snmpd,
# upsd, a browser module's demo server). The two browser modules run at once, on two workers,
# mostly waiting on their demos' story, so two more run the rest. Measured on this 2-core machine
# on one day: 8 min 36 s and 10 min 13 s so; 12 min 36 s with them apart on three workers (one
# left for everything else), 11 min 13 s with both on one worker of three (the old way). The ten
# slowest are named at the end.
test: install-test
	bash scripts/ensure-postgres.sh
	bash scripts/install-test-peers.sh
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(VULTURE)
	$(MKDOCS) build --strict --quiet
	$(BIN)/python -m pytest -n 4 --dist loadgroup --durations=10
	@# the pinned mutants run in a scratch copy beside the calendar sweep, which leaves a quarter of
	@# the cores idle (its moments wait on PostgreSQL and timers); each one's words, then both verdicts
	log=$$(mktemp); $(BIN)/python scripts/pinned_mutants.py > $$log 2>&1 & pinned=$$!; \
	  $(BIN)/python scripts/calendar_sweep.py; sweep=$$?; \
	  wait $$pinned; caught=$$?; cat $$log; rm -f $$log; \
	  test $$sweep -eq 0 && test $$caught -eq 0

# The tests that touch dates (tests/calendar-sweep.txt) again with the wall clock at the 1st of a
# month, 1 January, 29 February, both DST changes of Europe/Berlin and a late evening in UTC+4.
calendar: install-test
	$(BIN)/python scripts/calendar_sweep.py

bench: install-test
	bash bench/run-all.sh

# Every page on a desktop, a phone and in dark mode, drawn by Chromium against `rackpulse demo`:
# test-artifacts/screens/<mode>/<page>.png for a person to look at (not committed).
screenshots: install-test
	bash scripts/install-test-peers.sh
	$(BIN)/python -m pytest tests/e2e/test_every_page.py -p no:randomly
	@echo "screenshots: $$(find test-artifacts/screens -name '*.png' | wc -l) in test-artifacts/screens/"

# Mutation testing (mutmut 3): slow, not part of `make test`; prints the killed share per package.
mutation: install-test
	$(BIN)/pip install --quiet "mutmut>=3.8,<4"
	$(BIN)/python scripts/mutation.py

clean:
	rm -rf $(VENV) node_modules static/vendor .pytest_cache

# docs/metrics.md, rackpulse.example.toml and each plug-in's README.md from the installed
# plug-ins (a test fails when one is stale).
# The manual as a site in site/ (served by a checkout's `rackpulse serve` at /help).
docs-site: install-test
	$(MKDOCS) build --strict

docs: install
	$(BIN)/python -m app.docs
