# Arbiter: `make demo` serves the demo project, `make test` runs the test suite.
# Both create ./.venv and install the project first when needed (Python 3.11+): the demo only
# its runtime dependencies, the test, lint and bench targets the development tools as well.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& echo $$p && break; done)
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# The suite runs on every core (pytest-xdist); each worker has its own test database and, with
# REDIS_URL, its own Redis database (tests/conftest.py). Tests that measure a judge's pace
# against real time (marked judge_clock) take a lock across the workers: never two at once.
PYTEST_WORKERS ?= auto
HOST ?= 127.0.0.1:8000

.PHONY: install demo serve test lint format messages bench bench-import bench-annotate bench-judges bench-judge-workers bench-dashboards bench-dashboards-10x bench-export bench-label-efficiency bench-pair-browser bench-next-pair bench-predictions clean

# One stamp per install: the runtime dependencies (what the demo and the image need), then the
# `dev` and `compare` extras on top (pytest, Playwright, ruff, datasets, pandas, ...: a ~1.3 GB
# virtualenv in all), then the reference packages the metrics are compared against, without
# their declared dependencies (transformers, numba: pyproject.toml's `compare` says why).
COMPARE := 'crowd-kit>=1.4.2,<2' 'ppi-python>=0.2.3,<0.3'
$(BIN)/.installed-runtime: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is needed (python3.11, python3.12, ...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed-runtime
	$(BIN)/python -m pip install --quiet -e '.[dev,compare]'
	$(BIN)/python -m pip install --quiet --no-deps $(COMPARE)
	touch $@

install: $(BIN)/.installed-dev

demo: $(BIN)/.installed-runtime
	$(BIN)/python manage.py init_embedded
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo --host $(HOST)
	$(BIN)/python manage.py runserver $(HOST)

test: install
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check --no-cache .
	$(BIN)/ruff format --check --no-cache .
	$(BIN)/lint-imports --no-cache
# mypy (mypy.ini) loads the settings: the SQLite ones, whatever the environment says.
	env -u DATABASE_URL -u REDIS_URL $(BIN)/mypy config core projects content annotation setup imports judging metrics exports dashboards api demo operations notifications webhooks audit
	$(BIN)/python manage.py makemigrations --check --dry-run
# The documentation site (mkdocs.yml, into var/site): a broken link or anchor fails. Not
# --quiet, which in MkDocs 1.6 drops the very warnings --strict counts.
	$(BIN)/mkdocs build --strict

# The translation catalogs (locale/): gather the strings of the templates, the Python
# code and the scripts, then compile them (GNU gettext). Both django.mo files are committed, so
# a fresh machine needs no gettext; tests/i18n checks that they are complete and current.
I18N_IGNORE := --ignore='.venv/*' --ignore='var/*' --ignore='tests/*' --ignore='bench/*' --ignore='devtools/*' --ignore='static/vendor/*'
messages: install
	$(BIN)/python manage.py makemessages -l zh_Hans --no-location --no-obsolete $(I18N_IGNORE)
	$(BIN)/python manage.py makemessages -l zh_Hans -d djangojs --no-location --no-obsolete $(I18N_IGNORE)
	$(BIN)/python manage.py compilemessages -l zh_Hans $(I18N_IGNORE)

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Every benchmark (PostgreSQL needed; the judge one needs Redis too); each prints its figures.
bench: bench-import bench-predictions bench-annotate bench-judges bench-judge-workers bench-dashboards bench-dashboards-10x bench-export bench-label-efficiency bench-pair-browser bench-next-pair

bench-import: install
	$(BIN)/python -m bench.importing

# One 23 MiB prediction entry read until it is refused: time and memory, old reader and new.
bench-predictions: install
	$(BIN)/python -m bench.predictions

bench-judges: install
	$(BIN)/python -m bench.judges

# One and two Celery workers against providers whose capacity is the limit (Redis needed).
bench-judge-workers: install
	$(BIN)/python -m bench.judge_workers

bench-dashboards: install
	$(BIN)/python -m bench.dashboards

# Ten times MMRB2 (40,000 pairs, 120,000 ratings, 1.84 M verdicts): the targets' size.
bench-dashboards-10x: install
	$(BIN)/python -m bench.dashboards --scale 10 --repeat 2

bench-export: install
	$(BIN)/python -m bench.export

# The pair browser at ten times MMRB2 (40,000 pairs): filter, search and sort, under 300 ms a page.
bench-pair-browser: install
	$(BIN)/python -m bench.pair_browser

# Enter to the next pair on the demo server (runserver, SQLite), timed in Chromium at 1366x768
# (target: median within 150 ms); needs Chromium at /usr/bin/chromium, not PostgreSQL.
bench-next-pair: install
	$(BIN)/python -m bench.next_pair

# Replays on real data: expert ratings saved by prediction-powered judge accuracy (../shared).
bench-label-efficiency: install
	$(BIN)/python -m bench.label_efficiency

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache

bench-annotate: install
	$(BIN)/python -m bench.annotate --explain
	$(BIN)/python -m bench.load
