# nandstack: one target per habit. `make` (or `make help`) lists them.
#
# Python work happens in the current interpreter ($(PYTHON)); no virtualenv is required. `make deps`
# installs the build/test tools only when they are missing, so every target stays quick to re-run.

# bash with pipefail: `make build` filters pip's output and must still fail when pip fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

PYTHON ?= python3
CARGO  ?= cargo
PIP    := $(PYTHON) -m pip
# Extra arguments for `make run` / `make bench`, e.g. make run RUN_ARGS="--set workload.requests=100000".
RUN_ARGS   ?=
BENCH_ARGS ?=

export PIP_DISABLE_PIP_VERSION_CHECK ?= 1
export PIP_ROOT_USER_ACTION ?= ignore
# Installing into a system Python as root, without a venv (PEP 668 would refuse it otherwise).
export PIP_BREAK_SYSTEM_PACKAGES ?= 1

.DEFAULT_GOAL := help
# `make reproduce EXP=gc-policies-vs-op` (REPRO_ARGS=--quick for the one-minute version).
EXP        ?= gc-policies-vs-op
REPRO_ARGS ?=

.PHONY: help deps build build-pgo run test test-rust test-py bench reproduce lint fmt docs clean

help: ## list the targets
	@echo "usage: make <target>   (PYTHON=$(PYTHON))"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deps: ## install maturin, pytest, ruff and matplotlib (report figures) into the current python if missing
	@$(PYTHON) -c "import maturin, pytest, ruff, matplotlib" 2>/dev/null || \
		$(PIP) install "maturin>=1.5,<2" pytest ruff "matplotlib>=3.6"

# pip shows cargo's progress only with -v; the filter drops pip's own chatter (dependency checks, the
# uninstall of the previous build) and keeps cargo's `Compiling …` lines, warnings and errors.
PIP_NOISE := ^ *(Requirement already satisfied|Using pip |Looking in links|Obtaining file|Checking for Rust|Running `maturin|Attempting uninstall|Found existing|Uninstalling|Successfully uninstalled|Removing file|changing mode|Stored in directory|Created wheel|Running command|Checking if build|Preparing editable|Building editable|nandstack-0|/.*/target/wheels/|Installing collected|Building wheels for|Successfully built)

build: deps ## build the extension (release) and install nandstack editable (current python)
	@echo "building the Rust engine (release): a first build takes a few minutes; cargo's progress follows"
	@$(PIP) install -v --no-build-isolation --editable . 2>&1 | grep --line-buffered -v -E '$(PIP_NOISE)'
	@echo "building the live-mode daemon (target/release/nandstack-live; docs/live.md)"
	@$(CARGO) build --release -p nandstack-live

# Profile-guided: an instrumented build trains on the quick experiments, then a release build uses the counts
# (about 8.5 min; the same results, ~10 % fewer CPU seconds on host and hybrid runs: docs/benchmarks.md). Run
# python -m nandstack ... afterwards: `make run`/`make test` depend on `build`, which puts the normal one back.
build-pgo: build ## build the extension profile-guided (slower build, faster runs, same results)
	PYTHON=$(PYTHON) CARGO=$(CARGO) tools/pgo-build

run: build ## build, then run the default simulation (results in results/latest; RUN_ARGS=...)
	$(PYTHON) -m nandstack run $(RUN_ARGS)

test: test-rust test-py ## cargo tests, then build the extension and run pytest

# The Rust property tests draw their cases from this seed, so `make test` (and CI) runs the same cases
# every time; `make test PROPTEST_SEED=n` explores others, the `--ignored` fuzzers many more (docs/testing.md).
PROPTEST_SEED ?= 20261126

test-rust: ## cargo tests of the engine crates (default members: no PyO3)
	PROPTEST_RNG_SEED=$(PROPTEST_SEED) $(CARGO) test

test-py: build ## build the extension and run pytest
	$(PYTHON) -m pytest

reproduce: build ## run an experiment and write its report (EXP=name, REPRO_ARGS=--quick; --list to see them)
	$(PYTHON) -m nandstack reproduce $(EXP) $(REPRO_ARGS)

bench: build ## run the built-in benchmark (BENCH_ARGS=--quick for a smoke run)
	$(PYTHON) -m nandstack bench $(BENCH_ARGS)

lint: deps ## clippy (warnings are errors), rustfmt --check, ruff check and ruff format --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m ruff format --check python tests

fmt: deps ## format Rust and Python sources, apply ruff's safe fixes
	$(CARGO) fmt --all
	$(PYTHON) -m ruff format python tests
	$(PYTHON) -m ruff check --fix python tests

docs: build ## regenerate docs/config-reference.md from the config types
	@mkdir -p docs
	$(PYTHON) -m nandstack config --reference > docs/config-reference.md.tmp
	mv docs/config-reference.md.tmp docs/config-reference.md

clean: ## remove the built extension and Python caches (not target/: use cargo clean)
	rm -f python/nandstack/_core*.so
	rm -rf .pytest_cache .ruff_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
