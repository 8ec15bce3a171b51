"""pytest runner for rtl/tt_lane_sum.v: every simulator x a few (N, STAGES, WIDTH) (cocotb module:
tb_tt_lane_sum.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_lane_sum")

SHAPES = {
    "n2": {"N": 2},  # the smallest tree: one stage
    "n8_s2_w8": {"N": 8, "STAGES": 2, "WIDTH": 8, "TAG_W": 5},  # 8 lanes, rows of 4; a narrow word that wraps
    "n8_s3": {"N": 8, "STAGES": 3, "TAG_W": 21},  # digits' (8 lanes, VEC 8), the engine's tag {address, last}
    "n12_s2": {"N": 12, "STAGES": 2, "TAG_W": 21},  # lanes not a power of two (R 2 or 4 divides them)
    "n16_s4": {"N": 16, "STAGES": 4, "TAG_W": 21},  # paper's 16 lanes (VEC 16)
    "n128_s4": {"N": 128, "STAGES": 4, "TAG_W": 21},  # paper's 128 lanes (VEC 16): R 2..16 beside 64..8 outputs
    "n4_s2_w65": {"N": 4, "STAGES": 2, "WIDTH": 65},  # words wider than a 64-bit simulator word
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lane_sum(sim, shape):
    run_block(
        toplevel="tt_lane_sum",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_lane_sum.tb_tt_lane_sum",
    )


BAD_PARAMS = [
    ({"N": 1}, "error_tt_lane_sum_N_must_be_2_to_256"),
    ({"N": 257}, "error_tt_lane_sum_N_must_be_2_to_256"),
    ({"WIDTH": 1}, "error_tt_lane_sum_WIDTH_must_be_at_least_2"),
    ({"TAG_W": 0}, "error_tt_lane_sum_TAG_W_must_be_at_least_1"),
    ({"STAGES": 0}, "error_tt_lane_sum_STAGES_must_be_1_to_8_and_2_pow_STAGES_must_divide_N"),
    ({"N": 12, "STAGES": 3}, "error_tt_lane_sum_STAGES_must_be_1_to_8_and_2_pow_STAGES_must_divide_N"),
    ({"N": 256, "STAGES": 8, "WIDTH": 2}, None),  # legal extremes
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lane_sum_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_lane_sum", SOURCES, params, sim, message)
