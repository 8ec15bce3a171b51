"""pytest runner for rtl/tt_bank.v: every simulator x a few shapes (cocotb module: tb_tt_bank.py)."""

import pytest

from verif.filelist import TECHS, sources
from verif.runner import BUILD, SIMS, assert_elaboration, param_tag, run_block

SOURCES = sources("tt_bank")

SHAPES = {
    # an act-like bank: two copies, each split into 4 block RAMs of 256 words (the last one shorter), registered
    "w16_two_ports_blocks": {"WIDTH": 16, "DEPTH": 1000, "AW": 10, "READ_PORTS": 2, "OUT_REG": 1, "BLOCK_BITS": 4096},
    # a core-like bank: one memory, no output register
    "w4_one_port": {"WIDTH": 4, "DEPTH": 100, "AW": 8, "READ_PORTS": 1, "OUT_REG": 0, "BLOCK_BITS": 0},
    # three copies of 32-bit words (the banks allow up to three read ports; the compiler's banks use two at most)
    "w32_three_ports": {"WIDTH": 32, "DEPTH": 200, "AW": 8, "READ_PORTS": 3, "OUT_REG": 1, "BLOCK_BITS": 4096},
    # 3 blocks of 128 words, the last one 44
    "w8_uneven_blocks": {"WIDTH": 8, "DEPTH": 300, "AW": 9, "READ_PORTS": 1, "OUT_REG": 1, "BLOCK_BITS": 1024},
    # rows of 4 words (vector loads): two copies, 250 rows per column in 2 blocks of 128 rows (the last one 122),
    # behind both output registers (the block RAM's and the fabric's: the banks' MEM_PIPE 2)
    "w16_rows4_blocks": {
        "WIDTH": 16,
        "DEPTH": 1000,
        "AW": 10,
        "READ_PORTS": 2,
        "OUT_REG": 2,
        "BLOCK_BITS": 2048,
        "VEC": 4,
    },
    # rows of 16 words, DEPTH not a multiple of them (the last row short), one memory per column
    "w4_rows16_short_row": {
        "WIDTH": 4,
        "DEPTH": 200,
        "AW": 8,
        "READ_PORTS": 1,
        "OUT_REG": 0,
        "BLOCK_BITS": 0,
        "VEC": 16,
    },
    # rows of 8 words in block RAMs of 8 rows (63 rows: 8 blocks, the last one 7): runs cross into the next block
    # RAM often; two copies, no output register, the last row short
    "w8_rows8_blocks": {"WIDTH": 8, "DEPTH": 500, "AW": 9, "READ_PORTS": 2, "OUT_REG": 0, "BLOCK_BITS": 64, "VEC": 8},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_bank(sim, shape):
    run_block(
        toplevel="tt_bank",
        sources=SOURCES,
        parameters=SHAPES[shape],
        sim=sim,
        test_module="verif.blocks.tt_bank.tb_tt_bank",
        testcase="reads_return_the_words_written",
    )


# The vendor block RAMs behind the same bank (rtl/prim/): the act-like bank (copies split into block RAMs, the output
# register) and a bank in rows (runs across rows and block RAMs, both output registers), on the cell models. Not the
# shape of 128 tiny blocks: on a vendor technology each is a whole block RAM's model (minutes of Verilator build), and
# the runs that cross blocks are tt_bank's logic, the same on every technology.
VENDOR_SHAPES = ("w16_two_ports_blocks", "w16_rows4_blocks")


@pytest.mark.parametrize("shape", VENDOR_SHAPES)
@pytest.mark.parametrize("tech", [t for t in TECHS if t != "generic"])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_bank_on_vendor_block_rams(sim, tech, shape):
    run_block(
        toplevel="tt_bank",
        sources=sources("tt_bank", tech),
        parameters={**SHAPES[shape], "TECH": f'"{tech}"'},
        sim=sim,
        test_module="verif.blocks.tt_bank.tb_tt_bank",
        testcase="reads_return_the_words_written",
    )


# no_rw_check's premise: a read of the word written in the same cycle (with rows: a run read holding the word written;
# a run that goes on into the next row, there into the next block RAM, holding the word written in that row) stops
# the simulation with an error (the test fails because the simulator stopped, with tt_bank's message, not because it
# went on). A run read beside a write to another word of its rows goes on (the random test above).
COLLISIONS = {  # read: shape, cocotb test, the word read and written
    "word": ("w4_one_port", "read_during_write_stops_the_simulation", 3),
    "run": ("w16_rows4_blocks", "read_during_write_stops_the_simulation", 3),
    "run_into_next_row": ("w8_rows8_blocks", "wrapped_read_during_write_stops_the_simulation", 64),
    # the check ignores the cycles before a reset and in it, and stops at the first collision after it
    "after_reset": ("w4_one_port", "read_during_write_before_reset_ends_goes_on", 3),
}


@pytest.mark.parametrize("read", COLLISIONS)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_bank_read_during_write_is_caught(sim, read, capfd):
    shape, testcase, word = COLLISIONS[read]
    build = BUILD / "tt_bank" / f"{read}_collision" / sim
    with pytest.raises(AssertionError, match="cocotb tests failed"):
        run_block(
            toplevel="tt_bank",
            sources=SOURCES,
            parameters=SHAPES[shape],
            sim=sim,
            build_dir=build,
            test_module="verif.blocks.tt_bank.tb_tt_bank",
            testcase=testcase,
        )
    out = capfd.readouterr().out
    assert "went on" not in out
    assert [x.split(" in the cycle")[0] for x in out.split("reads word ")[1:]] == [str(word)], out


BAD_PARAMS = [
    ({"WIDTH": 33}, "error_tt_bank_WIDTH_must_be_1_to_32"),
    ({"DEPTH": 2000, "AW": 10}, "error_tt_bank_DEPTH_must_be_1_to_2_pow_AW"),
    ({"READ_PORTS": 4}, "error_tt_bank_READ_PORTS_must_be_1_to_3"),
    ({"READ_PORTS": 0}, "error_tt_bank_READ_PORTS_must_be_1_to_3"),
    ({"OUT_REG": 3}, "error_tt_bank_OUT_REG_must_be_0_to_2"),
    ({"BLOCK_BITS": -1}, "error_tt_bank_BLOCK_BITS_must_be_0_or_positive"),
    ({"VEC": 3}, "error_tt_bank_VEC_must_be_1_2_4_8_or_16"),
    ({"VEC": 32}, "error_tt_bank_VEC_must_be_1_2_4_8_or_16"),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_bank_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule."""
    assert_elaboration("tt_bank", SOURCES, params, sim, message)
