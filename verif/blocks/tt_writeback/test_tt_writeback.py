"""rtl/tt_writeback.v is the shared last stage of tt_contract and tt_ewise; its behaviour is checked bit-exactly
through their tests (verif/blocks/tt_contract, verif/blocks/tt_ewise) and its mutants in scripts/mutants.json.
Here: its elaboration-time parameter check stops both simulators."""

import pytest

from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag

CASES = [
    ({"OUT_W": 1}, "error_tt_writeback_OUT_W_must_be_2_to_32"),
    ({"TAG_DELAY": 0}, "error_tt_writeback_TAG_DELAY_and_OLD_DELAY_must_be_at_least_1"),
    ({"OLD_DELAY": 0}, "error_tt_writeback_TAG_DELAY_and_OLD_DELAY_must_be_at_least_1"),
    ({"OUT_W": 33}, "error_tt_writeback_OUT_W_must_be_2_to_32"),
    ({"OUT_W": 2}, None),
    ({"OUT_W": 32}, None),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in CASES])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_writeback_parameter_check(sim, params, message):
    assert_elaboration("tt_writeback", sources("tt_writeback"), params, sim, message)
