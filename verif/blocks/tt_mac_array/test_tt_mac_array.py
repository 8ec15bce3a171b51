"""pytest runner for rtl/tt_mac_array.v: every simulator x a few shapes (cocotb module: tb_tt_mac_array.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SHAPES = {
    "l1": {"LANES": 1},  # defaults: 16 x 16 -> 48
    "l4_core": {"LANES": 4, "A_W": 16, "B_W": 4},  # activations x 4-bit cores
    "l3_narrow": {"LANES": 3, "A_W": 8, "B_W": 8, "ACC_W": 20},  # short runs reach the accumulator's limits
    "l2_direct": {"LANES": 2, "PROD_REG": 0},  # no product register: latency 1
    "l16_in_reg": {"LANES": 16, "B_W": 4, "IN_REG": 1},  # the engine's: operand and product registers
    "l2_in_reg_only": {"LANES": 2, "PROD_REG": 0, "IN_REG": 1},  # operand registers alone: latency 2
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_mac_array(sim, shape):
    run_block(
        toplevel="tt_mac_array",
        sources=sources("tt_mac_array"),
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_mac_array.tb_tt_mac_array",
    )


BAD_PARAMS = [
    ({"LANES": 0}, "error_tt_mac_array_LANES_must_be_at_least_1"),
    ({"A_W": 1}, "error_tt_mac_array_A_W_must_be_2_to_32"),
    ({"B_W": 33, "ACC_W": 64}, "error_tt_mac_array_B_W_must_be_2_to_32"),
    ({"ACC_W": 32}, "error_tt_mac_array_ACC_W_must_exceed_A_W_plus_B_W_and_be_at_most_64"),
    ({"PROD_REG": 2}, "error_tt_mac_array_PROD_REG_must_be_0_or_1"),
    ({"IN_REG": -1}, "error_tt_mac_array_IN_REG_must_be_0_or_1"),
    ({"A_W": 32, "B_W": 31, "ACC_W": 64}, None),  # legal extremes
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_mac_array_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_mac_array", sources("tt_mac_array"), params, sim, message)
