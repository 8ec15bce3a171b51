"""rtl/tt_seq.v runs every program of the top-level tests (verif/top) and is proved in formal/; its mutants are in
scripts/mutants.d/tt_accel.json. Here: its elaboration-time parameter checks stop both simulators, and the limits
of UNIT_WORDS come from the descriptor layouts (golden/arch.py), as tt_desc_fields.vh does."""

import pytest

from golden.arch import UNIT_FIELDS, payload_words
from verif.filelist import sources
from verif.runner import SIMS, assert_elaboration, param_tag

UNIT_NEED = max(payload_words(UNIT_FIELDS[u]) for u in ("EW", "SCE", "RK"))  # the other units' longest payload
DESC_WORDS = max(payload_words(f) for f in UNIT_FIELDS.values())
UNIT_WORDS_RULE = "error_tt_seq_UNIT_WORDS_must_hold_the_ewise_sce_and_rank_payloads"

CASES = [
    ({"UNIT_WORDS": UNIT_NEED}, None),
    ({"UNIT_WORDS": DESC_WORDS}, None),
    ({"UNIT_WORDS": UNIT_NEED - 1}, UNIT_WORDS_RULE),
    ({"UNIT_WORDS": DESC_WORDS + 1}, UNIT_WORDS_RULE),
    ({"PROG_DEPTH": 1}, "error_tt_seq_PROG_DEPTH_must_be_2_to_2_pow_PROG_AW"),
    ({"PROG_AW": 4, "PROG_DEPTH": 17}, "error_tt_seq_PROG_DEPTH_must_be_2_to_2_pow_PROG_AW"),
    ({"DESC_BITS": 32 * DESC_WORDS - 1}, "error_tt_seq_DESC_BITS_must_be_32_times_DESC_WORDS"),
    ({"MAX_W": 1}, "error_tt_seq_MAX_W_must_be_2_to_32"),
    ({"MAX_W": 33}, "error_tt_seq_MAX_W_must_be_2_to_32"),
    ({"RANK": 2}, "error_tt_seq_RANK_must_be_0_or_1"),
]


@pytest.mark.parametrize("params,message", [pytest.param(p, m, id=param_tag(p)) for p, m in CASES])
@pytest.mark.parametrize("sim", SIMS)
def test_tt_seq_parameter_check(sim, params, message):
    assert_elaboration("tt_seq", sources("tt_seq"), params, sim, message)
