"""pytest runner for rtl/tt_lane_sum.v: every simulator x a few (N, WIDTH) (cocotb module: tb_tt_lane_sum.py)."""
import pytest

from verif.runner import assert_elaboration, param_tag, RTL, run_block, SIMS

SOURCES = [RTL / "tt_lane_sum.v", RTL / "tt_delay.v"]

SHAPES = {
    "n2": {"N": 2},                                # the smallest tree: one stage
    "n3_w8": {"N": 3, "WIDTH": 8, "TAG_W": 5},     # not a power of two (a zero leaf), a narrow word that wraps
    "n8": {"N": 8, "TAG_W": 21},                   # digits' lane sum (VEC 8), the engine's tag {address, last}
    "n16": {"N": 16, "TAG_W": 21},                 # paper's (VEC 16)
    "n5_w65": {"N": 5, "WIDTH": 65, "TAG_W": 1},   # words wider than a 64-bit simulator word
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lane_sum(sim, shape):
    run_block(toplevel="tt_lane_sum", sources=SOURCES, parameters=SHAPES[shape], sim=sim,
              test_module="verif.blocks.tt_lane_sum.tb_tt_lane_sum")


BAD_PARAMS = [
    ({"N": 1}, "error_tt_lane_sum_N_must_be_2_to_256"),
    ({"N": 257}, "error_tt_lane_sum_N_must_be_2_to_256"),
    ({"WIDTH": 1}, "error_tt_lane_sum_WIDTH_must_be_at_least_2"),
    ({"TAG_W": 0}, "error_tt_lane_sum_TAG_W_must_be_at_least_1"),
    ({"N": 256, "WIDTH": 2}, None),  # legal extremes
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lane_sum_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_lane_sum", SOURCES, params, sim, message)
