"""pytest runner for rtl/prim/tt_prim_ram.v: every technology x simulator x a few shapes (cocotb module:
tb_tt_prim_ram.py). The vendor versions run on their cell models (verif/filelist.py)."""

import pytest

from verif.filelist import TECHS, sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SHAPES = {
    # a lane buffer: two sets of 512 16-bit words (ECP5 1024 x 18, one block RAM; iCE40 four deep)
    "w16_d1024_reg": {"WIDTH": 16, "DEPTH": 1024, "AW": 10, "OUT_REG": 1},
    # the program memory's shape, narrower: 32-bit words (ECP5 2048 x 9 four wide)
    "w32_d2048_reg": {"WIDTH": 32, "DEPTH": 2048, "AW": 11, "OUT_REG": 1},
    # a core bank's block: 4-bit words (ECP5 4096 x 4)
    "w4_d4096": {"WIDTH": 4, "DEPTH": 4096, "AW": 12, "OUT_REG": 0},
    # an 8-bit master block, not a power of two deep, without the output register
    "w8_d1500": {"WIDTH": 8, "DEPTH": 1500, "AW": 11, "OUT_REG": 0},
    # odd widths and depths: 3 bits (ECP5 8192 x 2 two wide is not taken: 100 words fit 1024 x 18), 19 bits (two wide)
    "w3_d100_reg": {"WIDTH": 3, "DEPTH": 100, "AW": 7, "OUT_REG": 1},
    "w19_d300": {"WIDTH": 19, "DEPTH": 300, "AW": 9, "OUT_REG": 0},
    # deep and narrow: ECP5 16384 x 1 and 8192 x 2; iCE40 several block RAMs deep
    "w1_d16384": {"WIDTH": 1, "DEPTH": 16384, "AW": 14, "OUT_REG": 1},
    "w2_d5000": {"WIDTH": 2, "DEPTH": 5000, "AW": 13, "OUT_REG": 0},
    # two lanes' buffers in one memory, written part by part (ECP5: the 36-bit shape, one block RAM)
    "w32_d512_parts2_reg": {"WIDTH": 32, "DEPTH": 512, "AW": 9, "OUT_REG": 1, "PARTS": 2},
    # parts the ECP5 shape cannot pack (too deep; four parts): one memory per part
    "w16_d1024_parts2": {"WIDTH": 16, "DEPTH": 1024, "AW": 10, "OUT_REG": 0, "PARTS": 2},
    "w12_d300_parts4": {"WIDTH": 12, "DEPTH": 300, "AW": 9, "OUT_REG": 0, "PARTS": 4},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tech", TECHS)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_prim_ram(sim, tech, shape):
    run_block(
        toplevel="tt_prim_ram",
        sources=sources("tt_prim_ram", tech),
        parameters={**SHAPES[shape], "TECH": f'"{tech}"'},
        sim=sim,
        test_module="verif.blocks.tt_prim_ram.tb_tt_prim_ram",
    )


BAD_PARAMS: list[tuple[dict[str, int | str], str]] = [
    ({"WIDTH": 65, "DEPTH": 4, "AW": 2}, "error_tt_prim_ram_WIDTH_must_be_1_to_64"),
    ({"DEPTH": 9, "AW": 3}, "error_tt_prim_ram_DEPTH_must_be_1_to_2_pow_AW"),
    ({"OUT_REG": 2}, "error_tt_prim_ram_OUT_REG_must_be_0_or_1"),
    ({"TECH": '"xilinx"'}, "error_tt_prim_ram_TECH_must_be_generic_ecp5_or_ice40"),
    ({"WIDTH": 16, "PARTS": 3}, "error_tt_prim_ram_PARTS_must_divide_WIDTH"),
    ({"TECH": '"ecp5"', "WIDTH": 1, "DEPTH": 20000, "AW": 15}, "error_tt_prim_ram_ecp5_DEPTH_must_be_at_most_16384"),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_prim_ram_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule."""
    tech = params.get("TECH", '"generic"').strip('"')
    assert_elaboration(
        "tt_prim_ram", sources("tt_prim_ram", tech if tech in TECHS else "generic"), params, sim, message
    )
