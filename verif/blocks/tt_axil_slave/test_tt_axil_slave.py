"""pytest runner for rtl/tt_axil_slave.v: every simulator x two address widths (pyuvm module: tb_tt_axil_slave.py),
and the elaboration-time parameter checks."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_axil_slave")
TB = "verif.blocks.tt_axil_slave.tb_tt_axil_slave"

SHAPES = {
    "a12": {"ADDR_W": 12},  # a small window: the top word's region is near the low ones
    "a20": {"ADDR_W": 20},  # the accelerator's default
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_axil_slave(sim, shape):
    run_block(
        toplevel="tt_axil_slave",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module=TB,
        testcase=["AxilRandomTest", "AxilAlternationTest"],
    )


BAD_PARAMS = [
    ({"ADDR_W": 3}, "error_tt_axil_slave_ADDR_W_must_be_4_to_32"),
    ({"ADDR_W": 33}, "error_tt_axil_slave_ADDR_W_must_be_4_to_32"),
    ({"DATA_W": 64}, "error_tt_axil_slave_DATA_W_must_be_32"),
    ({"DATA_W": 16}, "error_tt_axil_slave_DATA_W_must_be_32"),
    ({"ADDR_W": 4}, None),  # legal extremes
    ({"ADDR_W": 32}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_axil_slave_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_axil_slave", SOURCES, params, sim, message)
