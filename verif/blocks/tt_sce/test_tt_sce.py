"""pytest runner for rtl/tt_sce.v: every simulator x memory latencies and port widths (cocotb module: tb_tt_sce.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_sce")

SHAPES = {
    "lat1": {"MEM_LAT": 1},  # inferred synchronous RAMs
    "lat3": {"MEM_LAT": 3},  # registered address and data around the RAM
    "wide": {"MEM_LAT": 2, "Z_W": 8, "OUT_W": 32, "N_W": 9},  # narrow logits, 32-bit errors, 511 outputs
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_sce(sim, shape):
    run_block(
        toplevel="tt_sce",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_sce.tb_tt_sce",
    )


BAD_PARAMS = [
    ({"ADDR_W": 7}, "error_tt_sce_ADDR_W_must_be_8_to_32"),
    ({"ADDR_W": 33}, "error_tt_sce_ADDR_W_must_be_8_to_32"),
    ({"Z_W": 1}, "error_tt_sce_Z_W_must_be_2_to_32"),
    ({"Z_W": 33}, "error_tt_sce_Z_W_must_be_2_to_32"),
    ({"OUT_W": 1}, "error_tt_sce_OUT_W_must_be_2_to_32"),
    ({"OUT_W": 33}, "error_tt_sce_OUT_W_must_be_2_to_32"),
    ({"MEM_LAT": 0}, "error_tt_sce_MEM_LAT_must_be_1_to_8"),
    ({"MEM_LAT": 9}, "error_tt_sce_MEM_LAT_must_be_1_to_8"),
    ({"N_W": 0}, "error_tt_sce_N_W_must_be_1_to_16_and_at_most_ADDR_W"),
    ({"N_W": 17}, "error_tt_sce_N_W_must_be_1_to_16_and_at_most_ADDR_W"),
    ({"N_W": 9, "ADDR_W": 8}, "error_tt_sce_N_W_must_be_1_to_16_and_at_most_ADDR_W"),
    ({"ADDR_W": 8, "Z_W": 2, "OUT_W": 2, "MEM_LAT": 8, "N_W": 1}, None),  # legal extremes
    ({"ADDR_W": 32, "Z_W": 32, "OUT_W": 32, "MEM_LAT": 1, "N_W": 16}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_sce_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_sce", SOURCES, params, sim, message)
