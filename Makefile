# Two entry points for a fresh machine:
#   make demo   set up, then run the seed scenario and write reports/fetch-sessions-1000-partitions/
#   make test   set up, then run the whole test suite (Spark and browser tests included)
# Everything installs into .venv; Java and Chromium come from Debian when missing and run as root.

VENV   ?= .venv
PYTHON ?= python3
BIN    := $(VENV)/bin
SCENARIO ?= scenarios/fetch-sessions-1000-partitions.yaml
# Test processes (pytest-xdist): one per core, at most 4 (each may start a Spark JVM).
JOBS   ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
PYTEST := $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

.PHONY: setup demo test quick explore lint bench java browser clean

setup: $(VENV)/.installed java

# The example plugin package too: its tests (tests/plugins/test_plugins_example.py) run, not skip.
$(VENV)/.installed: pyproject.toml examples/plugins/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-deps -e examples/plugins
	touch $@

# Spark needs Java 17+; install Debian's when it is missing and we may.
java:
	@command -v java >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	  else echo "note: Spark needs Java 17+: install it (Debian: apt-get install openjdk-17-jre-headless)"; fi; }

# The report tests open report.html in headless Chromium (or Google Chrome, as on GitHub's runners).
browser:
	@{ { command -v chromium || command -v google-chrome; } >/dev/null 2>&1 \
	   && command -v chromedriver >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "note: browser tests need Debian's chromium and chromium-driver; without them they are skipped"; fi; }

demo: setup
	$(BIN)/rig run $(SCENARIO)

test: setup browser
	$(PYTEST)

quick: setup
	$(PYTEST) -m "not spark and not browser and not slow"

# The property tests only, with ten times the examples and fresh ones each run; Hypothesis keeps
# what fails in .hypothesis/ and replays it first next time (the nightly explore workflow keeps
# that folder between nights).
PROPERTY_TESTS := $(shell grep -rl --include='test_*.py' 'from hypothesis' tests 2>/dev/null)
explore: setup
	HYPOTHESIS_PROFILE=deep $(PYTEST) $(PROPERTY_TESTS)

lint: setup
	$(BIN)/ruff check rig tests benchmarks
	$(BIN)/mypy

bench: setup
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/round_floor.py
	$(BIN)/python benchmarks/protocol.py
	$(BIN)/python benchmarks/compaction.py
	$(BIN)/python benchmarks/analysis.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
