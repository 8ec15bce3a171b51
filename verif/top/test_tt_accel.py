"""pytest runner for the accelerator top (rtl/tt_accel.v): lock-step training steps on both simulators."""
import os

import pytest

from golden import program as P
from golden.compiler import compile_network
from verif.runner import BUILD, RTL, SIMS, run_block
from verif.top.accel_env import hdl_parameters, model_config

SOURCES = [RTL / f"{m}.v" for m in ("tt_accel", "tt_axil_slave", "tt_seq", "tt_banks", "tt_bank", "tt_contract",
                                    "tt_ewise", "tt_sce", "tt_loop_addr", "tt_mac_array", "tt_requant", "tt_lfsr",
                                    "tt_writeback")]

# model, mini-batch (None: the config's), updates, test inferences
CASES = {"tiny": ("tiny", None, 3, 8), "digits": ("digits", 2, 1, 2)}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_accel_train_steps(sim, case, monkeypatch):
    model, batch, updates, tests = CASES[case]
    comp = compile_network(model_config(model, batch))
    params = hdl_parameters(P.params_for(comp), comp)
    monkeypatch.setenv("MODEL", model)
    monkeypatch.setenv("BATCH", str(batch or ""))
    monkeypatch.setenv("UPDATES", str(updates))
    monkeypatch.setenv("TEST_SAMPLES", str(tests))
    run_block(toplevel="tt_accel", sources=SOURCES, parameters=params, sim=sim,
              build_dir=BUILD / "tt_accel" / case / (sim + ("-waves" if os.environ.get("WAVES") == "1" else "")),
              test_module="verif.top.tb_tt_accel", testcase="train_steps")
