"""pytest runner for rtl/tt_ewise.v: every simulator x two memory latencies (cocotb module: tb_tt_ewise.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_ewise")

SHAPES = {
    "lat1": {"MEM_LAT": 1},  # inferred synchronous RAMs
    "lat3": {"MEM_LAT": 3},  # registered address and data around the RAM
    "adam": {"MEM_LAT": 3, "ADAM": 1, "X_W": 32, "Z_W": 32, "OUT_W": 32},  # the Adam ops, 32-bit second moments
    "norank": {"MEM_LAT": 3, "RANK": 0},  # built without MASK and PENALTY, which it must refuse
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_ewise(sim, shape):
    run_block(
        toplevel="tt_ewise",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_ewise.tb_tt_ewise",
    )


BAD_PARAMS = [
    ({"ADDR_W": 7}, "error_tt_ewise_ADDR_W_must_be_8_to_32"),
    ({"X_W": 1}, "error_tt_ewise_X_W_and_Z_W_must_be_2_to_32"),
    ({"Z_W": 33}, "error_tt_ewise_X_W_and_Z_W_must_be_2_to_32"),
    ({"OUT_W": 33}, "error_tt_ewise_OUT_W_must_be_2_to_32"),
    ({"ACC_W": 31}, "error_tt_ewise_ACC_W_must_be_32_to_64"),
    ({"ACC_W": 65}, "error_tt_ewise_ACC_W_must_be_32_to_64"),
    ({"ADAM": 2}, "error_tt_ewise_ADAM_must_be_0_or_1_and_needs_OUT_W_at_least_16"),
    ({"ADAM": 1, "OUT_W": 15}, "error_tt_ewise_ADAM_must_be_0_or_1_and_needs_OUT_W_at_least_16"),
    ({"ADAM": 1, "X_W": 2, "Z_W": 2, "OUT_W": 16, "ACC_W": 32}, None),  # legal extremes with Adam
    ({"RANK": 2}, "error_tt_ewise_RANK_must_be_0_or_1"),
    ({"RANK": 0}, None),  # without MASK and PENALTY (the accelerator without rank adaptation; tb_accel_errors)
    ({"X_W": 32, "Z_W": 32}, None),
    ({"MEM_LAT": 0}, "error_tt_ewise_MEM_LAT_must_be_1_to_8"),
    ({"MEM_LAT": 9}, "error_tt_ewise_MEM_LAT_must_be_1_to_8"),
    ({"MASK_N": 17}, "error_tt_ewise_MASK_N_must_be_1_to_16"),
    ({"MASK_N": 1, "MEM_LAT": 8, "OUT_W": 32, "X_W": 31, "Z_W": 2, "ADDR_W": 8}, None),  # legal extremes
    ({"X_W": 2, "Z_W": 30}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_ewise_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_ewise", SOURCES, params, sim, message)
