"""The SymbiYosys proofs (verif/blocks/<block>/formal/*.sby) as tests, through scripts/formal.py.

One test per task of the quick tier (FULL=1 in the environment: every task), so `make regress` runs them and a
failing proof fails its test naming the failing assertions. The planted-bug tests run a proof against a copy of
the RTL with one line changed and require sby to report FAIL on the property that bug breaks: a proof that
cannot fail proves nothing.
"""

from __future__ import annotations

import os
import shutil

import pytest

from scripts import formal

FULL = os.environ.get("FULL", "").strip() == "1"
TASKS = [(sby, task) for sby in formal.discover() for task in formal.selected(sby, FULL)]


@pytest.mark.parametrize("sby,task", TASKS, ids=[f"{formal.block_of(s)}-{t}" for s, t in TASKS])
def test_formal(sby, task):
    res = formal.run_task(sby, task)
    assert res.status == "PASS", res.describe()


def test_every_block_proof_has_quick_tasks():
    """Each proof file contributes to the quick tier, and the discovery finds the proof files at all."""
    files = formal.discover()
    assert files, "no verif/blocks/*/formal/*.sby found"
    for sby in files:
        assert formal.selected(sby, full=False), f"{sby}: only full_* tasks"


# (id, rtl file, original line text, replacement, proof file's block, task, the assertions of which one must
# fail: the solver names the first it finds where a bug breaks several in the same step)
PLANTED = [
    # the word waiting in the skid register is dropped: the output takes the input instead
    (
        "skid_drops_waiting_word",
        "tt_skid.v",
        "out_q <= skid_valid_q ? skid_q : in_data;",
        "out_q <= in_data;",
        "tt_skid",
        "prove_w4",
        ("a_order_and_data",),
    ),
    # the delay line's output taken one stage early: DEPTH - 1 cycles of delay
    (
        "delay_one_short",
        "tt_delay.v",
        "assign q = stage_q[WIDTH*(DEPTH-1) +: WIDTH];",
        "assign q = stage_q[WIDTH*(DEPTH-2) +: WIDTH];",
        "tt_delay",
        "prove_w8_d5_r1",
        ("a_delayed_by_depth",),
    ),
    # a write's error is not reported: B says OKAY whatever the bus answered
    (
        "axil_bresp_ignores_error",
        "tt_axil_slave.v",
        "b_resp_q <= bus_err ? RESP_SLVERR : RESP_OKAY;",
        "b_resp_q <= RESP_OKAY;",
        "tt_axil_slave",
        "prove_a6",
        ("a_bresp_is_bus_result",),
    ),
    # R is withdrawn without the master's RREADY: not held, and the read goes unanswered
    (
        "axil_rvalid_dropped",
        "tt_axil_slave.v",
        "end else if (s_axil_rready) begin",
        "end else if (1'b1) begin",
        "tt_axil_slave",
        "prove_a6",
        ("a_r_held", "a_one_r_per_read"),
    ),
    # a unit's refusal reported as a bank address error
    (
        "seq_unit_error_as_addr",
        "tt_seq.v",
        "fail(SEQ_ERR_UNIT);",
        "fail(SEQ_ERR_ADDR);",
        "tt_seq",
        "prove_p12",
        ("a_unit_error",),
    ),
    # writes always win the tie: a stream of writes starves a waiting read
    (
        "axil_writes_starve_reads",
        "tt_axil_slave.v",
        "wire start_wr = idle && wr_rdy && !(rd_rdy && last_wr_q);",
        "wire start_wr = idle && wr_rdy;",
        "tt_axil_slave",
        "prove_live_a6",
        ("a_read_answered_in_time", "a_ar_taken_in_time"),
    ),
]


@pytest.mark.parametrize("mutant", PLANTED, ids=[m[0] for m in PLANTED])
def test_formal_finds_planted_bug(mutant):
    ident, rtl_file, original, replacement, block, task, props = mutant
    rtl_dir = formal.OUT / "planted" / ident / "rtl"
    shutil.rmtree(rtl_dir, ignore_errors=True)
    shutil.copytree(formal.RTL, rtl_dir)
    text = (rtl_dir / rtl_file).read_text()
    # exactly one occurrence: a stale mutant must not silently test the unmutated RTL
    assert text.count(original) == 1, f"{rtl_file}: {original!r} occurs {text.count(original)} times"
    (rtl_dir / rtl_file).write_text(text.replace(original, replacement))
    sby = next(s for s in formal.discover() if formal.block_of(s) == block)
    res = formal.run_task(sby, task, rtl_dir=rtl_dir, tag=f"planted/{ident}")
    assert res.status == "FAIL", f"the planted bug went unnoticed: {res.describe()}"
    assert any(name.rsplit(".", 1)[-1] in props for name in res.failed), (
        f"expected one of {props} to fail: {res.describe()}"
    )
