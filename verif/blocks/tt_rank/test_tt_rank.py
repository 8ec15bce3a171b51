"""pytest runner for rtl/tt_rank.v: every simulator x memory latencies and largest ranks (cocotb module:
tb_tt_rank.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_rank")

SHAPES = {
    "lat1": {"MEM_LAT": 1},  # inferred synchronous RAMs
    "lat5": {"MEM_LAT": 5},  # the accelerator's pipelined banks (golden/isa/timing.py MEM_LAT)
    "mask4": {"MEM_LAT": 2, "MASK_N": 4, "ADDR_W": 16},  # a small build: ranks up to 4, 65,536 words
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_rank(sim, shape):
    run_block(
        toplevel="tt_rank",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_rank.tb_tt_rank",
    )


BAD_PARAMS = [
    ({"ADDR_W": 15}, "error_tt_rank_ADDR_W_must_be_16_to_32"),
    ({"ADDR_W": 33}, "error_tt_rank_ADDR_W_must_be_16_to_32"),
    ({"MEM_LAT": 0}, "error_tt_rank_MEM_LAT_must_be_1_to_8"),
    ({"MEM_LAT": 9}, "error_tt_rank_MEM_LAT_must_be_1_to_8"),
    ({"MASK_N": 0}, "error_tt_rank_MASK_N_must_be_1_to_16"),
    ({"MASK_N": 17}, "error_tt_rank_MASK_N_must_be_1_to_16"),
    ({"ADDR_W": 16, "MEM_LAT": 8, "MASK_N": 1}, None),  # legal extremes
    ({"ADDR_W": 32, "MEM_LAT": 1, "MASK_N": 16}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_rank_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_rank", SOURCES, params, sim, message)
