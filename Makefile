# Two commands: `make all` (every study, figure and the report) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
CONFIG ?= config/config.yaml
SNAKEMAKE_ARGS ?=

.PHONY: all test bench smoke dryrun lint clean-venv

# The venv is rebuilt only when the pins change; the stamp marks a complete install.
$(VENV)/.installed: requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	@touch $@

all: $(VENV)/.installed
	@$(BIN)/python -m costlab.server.check --configfile $(CONFIG) $(SNAKEMAKE_CONFIG_ARGS)
	$(BIN)/snakemake all --profile profiles/default --configfile $(CONFIG) $(SNAKEMAKE_ARGS)

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

dryrun: $(VENV)/.installed
	$(BIN)/snakemake -n all --profile profiles/default --configfile $(CONFIG)

lint: $(VENV)/.installed
	$(BIN)/snakemake --lint --profile profiles/default

clean-venv:
	rm -rf $(VENV)
