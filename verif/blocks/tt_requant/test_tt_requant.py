"""pytest runner for rtl/tt_requant.v: every simulator x a few (OUT_W, LANES) (cocotb module: tb_tt_requant.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_requant")


@pytest.mark.parametrize("out_w,lanes", [(16, 1), (4, 4), (32, 2)], ids=["w16l1", "w4l4", "w32l2"])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_requant(sim, out_w, lanes):
    run_block(
        toplevel="tt_requant",
        sources=SOURCES,
        parameters={"OUT_W": out_w, "LANES": lanes},
        sim=sim,
        test_module="verif.blocks.tt_requant.tb_tt_requant",
    )


BAD_PARAMS = [
    ({"OUT_W": 1}, "error_tt_requant_OUT_W_must_be_2_to_32"),
    ({"OUT_W": 33}, "error_tt_requant_OUT_W_must_be_2_to_32"),
    ({"LANES": 0}, "error_tt_requant_LANES_must_be_at_least_1"),
    ({"ACC_W": 65}, "error_tt_requant_ACC_W_must_be_2_to_64"),
    ({"OUT_W": 2, "ACC_W": 64}, None),  # legal extremes
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_requant_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_requant", SOURCES, params, sim, message)
