"""pytest runner for rtl/prim/tt_prim_mul.v: every technology x simulator x a few shapes and register settings
(cocotb module: tb_tt_prim_mul.py). The vendor versions run on their cell models (verif/filelist.py)."""

import pytest

from verif.filelist import TECHS, sources
from verif.runner import SIMS, assert_elaboration, param_tag, run_block

SHAPES = {
    "16x16_in_out": {"A_W": 16, "B_W": 16, "IN_REG": 1, "OUT_REG": 1},  # a MAC lane (tt_mac_array MAC_REG 2)
    "16x4_out": {"A_W": 16, "B_W": 4, "IN_REG": 0, "OUT_REG": 1},
    "9x7_in": {"A_W": 9, "B_W": 7, "IN_REG": 1, "OUT_REG": 0},
    "2x16_comb": {"A_W": 2, "B_W": 16, "IN_REG": 0, "OUT_REG": 0},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("tech", TECHS)
@pytest.mark.parametrize("sim", SIMS)
def test_tt_prim_mul(sim, tech, shape):
    run_block(
        toplevel="tt_prim_mul",
        sources=sources("tt_prim_mul", tech),
        parameters={**SHAPES[shape], "TECH": f'"{tech}"'},
        sim=sim,
        test_module="verif.blocks.tt_prim_mul.tb_tt_prim_mul",
    )


BAD_PARAMS: list[tuple[dict[str, int | str], str]] = [
    ({"A_W": 1}, "error_tt_prim_mul_A_W_and_B_W_must_be_2_to_32"),
    ({"OUT_REG": 2}, "error_tt_prim_mul_IN_REG_and_OUT_REG_must_be_0_or_1"),
    ({"TECH": '"xilinx"'}, "error_tt_prim_mul_TECH_must_be_generic_ecp5_or_ice40"),
    ({"TECH": '"ecp5"', "A_W": 19}, "error_tt_prim_mul_ecp5_A_W_and_B_W_must_be_at_most_18"),
    ({"TECH": '"ice40"', "B_W": 17}, "error_tt_prim_mul_ice40_A_W_and_B_W_must_be_at_most_16"),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in BAD_PARAMS])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_prim_mul_parameter_check(sim, params, message):
    """An illegal parameter stops elaboration with a message naming the rule."""
    tech = params.get("TECH", '"generic"').strip('"')
    assert_elaboration(
        "tt_prim_mul", sources("tt_prim_mul", tech if tech in TECHS else "generic"), params, sim, message
    )
