"""pytest runner of verif/top/tb_accel_errors.py: error paths and corner cases of rtl/tt_accel.v on the tiny model,
on both simulators. The program memory is 1000 words (not a power of two), so START_PC and the program window can
point past it, and the banks are built from 256-bit block memories, so every error path also crosses block edges."""

import os

import pytest

from golden import program as P
from golden.compiler import compile_network
from verif.runner import BUILD, SIMS, run_block
from verif.top.accel_env import hdl_parameters, model_config
from verif.top.tb_accel_errors import PROG_DEPTH
from verif.top.test_tt_accel import SOURCES


@pytest.mark.parametrize("sim", SIMS)
def test_accel_errors(sim):
    comp = compile_network(model_config("tiny"))
    # 256-bit RAM blocks: every bank copy is several block memories, the last one partial (rtl/tt_bank.v)
    params = hdl_parameters(P.params_for(comp, prog_depth=PROG_DEPTH)) | {"RAM_BLOCK_BITS": 256}
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=params,
        sim=sim,
        build_dir=BUILD / "tt_accel_errors" / (sim + ("-waves" if os.environ.get("WAVES") == "1" else "")),
        test_module="verif.top.tb_accel_errors",
    )


@pytest.mark.parametrize("sim", SIMS)
def test_accel_errors_missing_rows(sim):
    """tb_accel_errors.rows_missing on a build with rows (4 lanes, rows of 4, a drain of 2, tiny-lanes' build): ops
    that need rows of a bank built without them stop with the port error."""
    comp = compile_network(model_config("tiny"))
    params = hdl_parameters(P.params_for(comp, prog_depth=PROG_DEPTH, lanes=4, buf_depth=64, vec=4, drain=2))
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=params,
        sim=sim,
        build_dir=BUILD / "tt_accel_errors_rows" / (sim + ("-waves" if os.environ.get("WAVES") == "1" else "")),
        test_module="verif.top.tb_accel_errors",
        testcase="rows_missing",
    )
