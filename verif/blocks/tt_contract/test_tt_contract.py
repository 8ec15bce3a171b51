"""pytest runner for rtl/tt_contract.v: every simulator x two memory latencies, with and without the MAC product
register, one MAC lane and several (cocotb module: tb_tt_contract.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_contract")

SHAPES = {
    "lat1": {"MEM_LAT": 1},  # inferred synchronous RAMs
    "lat3": {"MEM_LAT": 3, "MAC_REG": 0},  # registered address and data around the RAM; no product register
    # buffer reads in the issue cycle, no output register; vector loads of 4 words, a drain of 4 (one run a row)
    "lanes4": {"MEM_LAT": 1, "LANES": 4, "BUF_DEPTH": 64, "VEC": 4, "DRAIN": 4},
    "lanes2": {"MEM_LAT": 2, "LANES": 2, "BUF_DEPTH": 16},  # buffer reads in the issue cycle, output register
    "lanes6": {"MEM_LAT": 5, "LANES": 6, "BUF_DEPTH": 100},  # the top's latency; lanes and depth not powers of 2
    "lanes8_vec2": {"MEM_LAT": 5, "LANES": 8, "BUF_DEPTH": 32, "VEC": 2},  # vector loads of 2 words, 4 beats a word
    # rows of 8 words, a drain of 2 (four runs a row)
    "lanes8_drain2": {"MEM_LAT": 5, "LANES": 8, "BUF_DEPTH": 32, "VEC": 8, "DRAIN": 2},
    # lane sums of R = 2 or 4 beside 8 or 4 output lanes, their vector loads and drains of 4 along the output lanes
    "lanes16_sums": {"MEM_LAT": 5, "LANES": 16, "BUF_DEPTH": 64, "VEC": 4, "DRAIN": 4},
    # lanes not a power of two: R = 2 (6 output lanes, vector loads of 4 along them) or 4 (3, one word a beat)
    "lanes12_sums": {"MEM_LAT": 5, "LANES": 12, "BUF_DEPTH": 64, "VEC": 4, "DRAIN": 2},
    # one buffer set (no preloads), an odd lane count: two pairs of lanes in a memory each, the last lane alone
    "lanes5_one_set": {"MEM_LAT": 2, "LANES": 5, "BUF_DEPTH": 24, "PRELOAD": 0},
    # one buffer set with rows, lane sums, vector loads and a wide drain (the wide engines' buffers)
    "lanes8_one_set": {"MEM_LAT": 5, "LANES": 8, "BUF_DEPTH": 32, "VEC": 4, "DRAIN": 4, "PRELOAD": 0},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_contract(sim, shape):
    run_block(
        toplevel="tt_contract",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_contract.tb_tt_contract",
    )


BAD_PARAMS = [
    ({"NOUT": 7}, "error_tt_contract_NOUT_must_be_at_least_1_and_NOUT_plus_NRED_at_most_10"),
    ({"NOUT": 0}, "error_tt_contract_NOUT_must_be_at_least_1_and_NOUT_plus_NRED_at_most_10"),
    ({"MEM_LAT": 0}, "error_tt_contract_MEM_LAT_must_be_1_to_8"),
    ({"MEM_LAT": 9}, "error_tt_contract_MEM_LAT_must_be_1_to_8"),
    ({"MAC_REG": 3}, "error_tt_contract_MAC_REG_must_be_0_to_2"),
    ({"OUT_W": 33}, "error_tt_contract_OUT_W_must_be_2_to_32"),
    ({"A_W": 24, "B_W": 24}, "error_tt_mac_array_ACC_W_must_exceed_A_W_plus_B_W_and_be_at_most_64"),
    ({"LANES": 0}, "error_tt_contract_LANES_must_be_1_to_255"),
    ({"LANES": 256}, "error_tt_contract_LANES_must_be_1_to_255"),
    ({"LANES": 2, "BUF_DEPTH": 0}, "error_tt_contract_BUF_DEPTH_must_be_1_to_2_pow_BUF_W"),
    ({"LANES": 2, "BUF_DEPTH": 4097}, "error_tt_contract_BUF_DEPTH_must_be_1_to_2_pow_BUF_W"),
    ({"PRELOAD": 2}, "error_tt_contract_PRELOAD_must_be_0_or_1"),
    ({"BUF_W": 21}, "error_tt_contract_BUF_W_must_be_1_to_ADDR_W"),
    ({"LANES": 4, "BUF_DEPTH": 8, "VEC": 3}, "error_tt_contract_VEC_must_be_1_2_4_8_or_16_and_at_most_LANES"),
    ({"LANES": 4, "BUF_DEPTH": 8, "VEC": 8}, "error_tt_contract_VEC_must_be_1_2_4_8_or_16_and_at_most_LANES"),
    (
        {"LANES": 8, "BUF_DEPTH": 8, "VEC": 4, "DRAIN": 8},
        "error_tt_contract_DRAIN_must_be_1_2_4_8_or_16_and_at_most_VEC",
    ),
    (
        {"LANES": 8, "BUF_DEPTH": 8, "VEC": 8, "DRAIN": 3},
        "error_tt_contract_DRAIN_must_be_1_2_4_8_or_16_and_at_most_VEC",
    ),
    ({"NOUT": 1, "NRED": 0, "MEM_LAT": 8, "OUT_W": 32}, None),  # legal extremes
    ({"LANES": 2, "BUF_DEPTH": 1}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_contract_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule; legal extremes elaborate."""
    assert_elaboration("tt_contract", SOURCES, params, sim, message)
