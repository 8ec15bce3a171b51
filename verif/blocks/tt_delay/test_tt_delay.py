"""pytest runner for rtl/tt_delay.v: every simulator x a few (WIDTH, DEPTH, RESET) (cocotb module: tb_tt_delay.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_delay")

SHAPES = {
    "w1d1r1": {"WIDTH": 1, "DEPTH": 1, "RESET": 1},  # a valid bit through one stage
    "w24d3r1": {"WIDTH": 24, "DEPTH": 3, "RESET": 1},  # tags through a 3-cycle memory latency
    "w16d7r0": {"WIDTH": 16, "DEPTH": 7, "RESET": 0},  # an old word through the element-wise pipeline
    "w65d2r0": {"WIDTH": 65, "DEPTH": 2, "RESET": 0},  # wider than a 64-bit simulator word
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_delay(sim, shape):
    run_block(
        toplevel="tt_delay",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_delay.tb_tt_delay",
    )


BAD_PARAMS = [
    ({"WIDTH": 0}, "error_tt_delay_WIDTH_must_be_at_least_1"),
    ({"DEPTH": 0}, "error_tt_delay_DEPTH_must_be_at_least_1"),
    ({"RESET": 2}, "error_tt_delay_RESET_must_be_0_or_1"),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_delay_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule."""
    assert_elaboration("tt_delay", SOURCES, params, sim, message)
