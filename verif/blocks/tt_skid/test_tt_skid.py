"""pytest runner for rtl/tt_skid.v: every simulator x a few widths (cocotb module: tb_tt_skid.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_skid")

SHAPES = {
    "w1": {"WIDTH": 1},
    "w63": {"WIDTH": 63},  # tt_contract's beat: three 20-bit addresses and three flags
    "w70": {"WIDTH": 70},  # wider than a 64-bit simulator word
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_skid(sim, shape):
    run_block(
        toplevel="tt_skid",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_skid.tb_tt_skid",
    )


@pytest.mark.parametrize(
    "params,message", [pytest.param({"WIDTH": 0}, "error_tt_skid_WIDTH_must_be_at_least_1", id=param_tag({"WIDTH": 0}))]
)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_skid_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule."""
    assert_elaboration("tt_skid", SOURCES, params, sim, message)
