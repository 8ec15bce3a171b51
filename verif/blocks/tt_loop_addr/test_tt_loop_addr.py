"""pytest runner for rtl/tt_loop_addr.v: every simulator x a sweep of nest shapes (cocotb module:
tb_tt_loop_addr.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SHAPES = {
    "engine": {"NLOOPS": 10, "NRED": 4, "CNT_W": 16, "ADDR_W": 20},  # the contraction engine's nest
    "n1_r0": {"NLOOPS": 1, "NRED": 0, "CNT_W": 4, "ADDR_W": 6},  # no reduction: every beat completes
    "n3_r3": {"NLOOPS": 3, "NRED": 3, "CNT_W": 3, "ADDR_W": 5},  # only reductions; counts up to 7, wrap
    "n6_r2": {"NLOOPS": 6, "NRED": 2, "CNT_W": 2, "ADDR_W": 7},
    # tt_contract's lane buffer load at 16 lanes: a walks the lane index, o the buffer word; both wrap early
    "narrow": {"NLOOPS": 10, "NRED": 4, "CNT_W": 16, "ADDR_W": 20, "A_AW": 4, "O_AW": 12},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_loop_addr(sim, shape):
    run_block(
        toplevel="tt_loop_addr",
        sources=sources("tt_loop_addr"),
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_loop_addr.tb_tt_loop_addr",
    )


BAD_PARAMS = [
    ({"NLOOPS": 0, "NRED": 0}, "error_tt_loop_addr_NLOOPS_must_be_1_to_10"),
    ({"NLOOPS": 11}, "error_tt_loop_addr_NLOOPS_must_be_1_to_10"),
    ({"NLOOPS": 3, "NRED": 4}, "error_tt_loop_addr_NRED_must_be_0_to_NLOOPS"),
    ({"CNT_W": 33}, "error_tt_loop_addr_CNT_W_must_be_1_to_32"),
    ({"ADDR_W": 0}, "error_tt_loop_addr_ADDR_W_must_be_1_to_32"),
    ({"A_AW": 0}, "error_tt_loop_addr_A_AW_and_O_AW_must_be_1_to_ADDR_W"),
    ({"ADDR_W": 8, "O_AW": 9}, "error_tt_loop_addr_A_AW_and_O_AW_must_be_1_to_ADDR_W"),
    ({"NLOOPS": 1, "NRED": 1, "CNT_W": 32, "ADDR_W": 32}, None),  # legal extremes
    ({"ADDR_W": 8, "A_AW": 1, "O_AW": 8}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_loop_addr_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_loop_addr", sources("tt_loop_addr"), params, sim, message)
