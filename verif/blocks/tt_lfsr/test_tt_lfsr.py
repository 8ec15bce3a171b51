"""pytest runner for rtl/tt_lfsr.v: every simulator x a few DRAWS values (cocotb module: tb_tt_lfsr.py)."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, elaborate, run_block


@pytest.mark.parametrize("draws", [1, 4, 16])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lfsr(sim, draws):
    run_block(
        toplevel="tt_lfsr",
        sources=sources("tt_lfsr"),
        parameters={"DRAWS": draws},
        sim=sim,
        test_module="verif.blocks.tt_lfsr.tb_tt_lfsr",
    )


@pytest.mark.parametrize("draws,legal", [(0, False), (17, False), (16, True)])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_lfsr_parameter_check(sim, draws, legal):
    """An illegal DRAWS stops elaboration with a message naming the rule; a legal one elaborates."""
    ok, log = elaborate("tt_lfsr", sources("tt_lfsr"), {"DRAWS": draws}, sim)
    assert ok == legal, log
    assert legal or "error_tt_lfsr_DRAWS_must_be_1_to_16" in log, log
