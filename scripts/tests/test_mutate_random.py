"""scripts/mutate_random.py's generator, without simulation: the places it finds, the mutations it makes, the seeded
draw, and the compile check that redraws a mutant that does not compile (Verilator and iverilog, under a second)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scripts import mutate, mutate_random as mr

ROOT = Path(__file__).resolve().parents[2]
CAT = mutate.load_catalogue()

SNIPPET = """`default_nettype none
module m #(
  parameter integer W = 8  // a default: not a place
) (
  input  wire         clk,
  input  wire         rst,
  input  wire         en,
  input  wire [W-1:0] a,
  input  wire [W-1:0] b,
  output wire [W-1:0] y,
  output wire         lt
);
  localparam [3:0] K = 4'd5;
  reg [W-1:0] q;
  reg [W-1:0] r;
  wire [W-1:0] s = a + b;
  generate
    if (W < 1) begin : g_bad
      error_m_W u_error ();
    end
  endgenerate
  integer i;
  always @(posedge clk) begin
    if (rst) begin
      q <= {W{1'b0}};
    end else if (en) begin
      q <= s - {{(W-4){1'b0}}, K};
    end
    r <= -a;
    for (i = 0; i < 2; i = i + 1) begin
      r[i] <= a[i +: 1] & b[i];
    end
  end
  assign y = q >> 1;
  assign lt = a <= b ? 1'b1 : 1'b0;
endmodule
`default_nettype wire
"""


def _by_kind(ps):
    out: dict[str, list[str]] = {}
    for p in ps:
        out.setdefault(p.kind, []).append(p.original)
    return out


def test_operator_table_pairs_each_operator_with_its_partner():
    assert mr.OPERATORS == {
        "+": "-",
        "-": "+",
        "&": "|",
        "|": "&",
        "&&": "||",
        "||": "&&",
        "==": "!=",
        "!=": "==",
        "<": "<=",
        "<=": "<",
        ">": ">=",
        ">=": ">",
        ">>": ">>>",
        ">>>": ">>",
    }
    assert all(mr.OPERATORS[mr.OPERATORS[op]] == op for op in mr.OPERATORS)
    assert set(mr.OPERATORS) >= {"+", "-", "&", "|", "==", "!=", "<", "<=", ">>", ">>>"}  # the required swaps


def test_places_of_a_snippet():
    ps = mr.places(SNIPPET, "rtl/m.v")
    kinds = _by_kind(ps)
    ops = [(mr.line_of(SNIPPET, p.start), p.original) for p in ps if p.kind == "operator"]
    # binary operators of the body only: not the header's W-1, not the declarations' ranges, not the unary -a, not
    # the part select's +:, not the for loop's init and step, not the nonblocking <=, not the parameter check's <
    assert ops == [(16, "+"), (27, "-"), (27, "-"), (30, "<"), (31, "&"), (34, ">>"), (35, "<=")]
    assert kinds["condition"] == ["rst", "en", "a <= b"]
    # constants: localparam K, the register reset value, the replication's 4 and 1'b0, the loop bound, the part
    # select's width, y's shift, the ternary's arms; not W's default, not the parameter check's 1, not the ranges,
    # not i = 0 or i + 1
    assert kinds["constant"] == ["4'd5", "1'b0", "4", "1'b0", "2", "1", "1", "1'b1", "1'b0"]
    # dropped assignments: only inside an if branch of the clocked block
    assert kinds["assignment"] == ["q <= {W{1'b0}};", "q <= s - {{(W-4){1'b0}}, K};"]
    # stuck next values: every nonblocking assignment whose right side is not a constant
    assert kinds["next value"] == ["s - {{(W-4){1'b0}}, K}", "-a", "a[i +: 1] & b[i]"]
    for p in ps:
        assert SNIPPET[p.start : p.end] == p.original
        assert all(r != p.original for _, reps in p.options for r in reps)


@pytest.mark.parametrize(
    "lit, off, flips",
    [
        ("8'd5", ("8'd6", "8'd4"), ("8'd4", "8'd7", "8'd1", "8'd13", "8'd21", "8'd37", "8'd69", "8'd133")),
        ("4'b1010", ("4'b1011", "4'b1001"), ("4'b1011", "4'b1000", "4'b1110", "4'b0010")),
        ("1'b0", ("1'b1",), ("1'b1",)),
        ("32'hFFFF_FFFF", ("32'hFFFFFFFE",), None),
        ("6'sh0a", ("6'sh0b", "6'sh09"), None),
        ("3", ("4", "2"), ("2", "1", "7")),
        ("0", ("1",), ("1", "2")),
    ],
)
def test_constant_mutations(lit, off, flips):
    got = dict(mr.constant_mutations(lit))
    assert got["off by one"] == off
    if flips is not None:
        assert got["bit flip"] == flips
    if lit.startswith("32'h"):
        assert len(got["bit flip"]) == 32 and "32'h7FFFFFFF" in got["bit flip"]


def test_constants_with_unknown_digits_or_fill_literals():
    assert mr.constant_mutations("4'bx01z") == ()
    assert mr.constant_mutations("'0") == (("bit flip", ("'1",)),)
    assert mr.constant_mutations("1.5") == ()


def _accept(m):
    return "ok", ""


def _draw(seed: int, n: int, files: list[str], check=_accept):
    texts = {f: (ROOT / f).read_text() for f in files}
    pool = [p for f in files for p in mr.places(texts[f], f)]
    modules = {f: Path(f).stem for f in files}
    blocks = {f: mr.test_blocks(CAT, f) for f in files}
    return mr.draw([pool], n, [random.Random(seed)], texts, modules, blocks, check)


def test_a_drawn_mutant_changes_exactly_one_place():
    files = ["rtl/tt_skid.v", "rtl/tt_op_ctrl.v", "rtl/tt_seq.v"]
    accepted, _ = _draw(3, 40, files)
    assert len(accepted) == 40
    assert len({(m["file"], m["offset"], m["replacement"]) for m in accepted}) == 40
    for m in accepted:
        text = (ROOT / m["file"]).read_text()
        new = mutate.apply_mutant(text, m)
        i, n = m["offset"], len(m["original"])
        assert new != text
        assert new[:i] == text[:i]
        assert new[i : i + len(m["replacement"])] == m["replacement"]
        assert new[i + len(m["replacement"]) :] == text[i + n :]
        assert m["line"] == text.count("\n", 0, i) + 1 and m["source_line"] in text
        assert m["category"] in mr.KINDS


def test_the_draw_is_reproducible_from_the_seed():
    files = ["rtl/tt_loop_addr.v", "rtl/tt_requant.v"]
    a, _ = _draw(7, 15, files)
    b, _ = _draw(7, 15, files)
    c, _ = _draw(8, 15, files)
    assert a == b
    assert [(m["file"], m["offset"], m["replacement"]) for m in a] != [
        (m["file"], m["offset"], m["replacement"]) for m in c
    ]
    assert [m["id"] for m in a] == [f"r{i:02d}" for i in range(1, 16)]


def test_a_mutant_that_fails_the_check_is_redrawn_and_counted():
    calls = []

    def every_third_fails(m):
        calls.append(m)
        return ("lint", "%Warning-UNUSED: x") if len(calls) % 3 == 0 else ("ok", "")

    accepted, redrawn = _draw(1, 10, ["rtl/tt_seq.v"], every_third_fails)
    assert len(accepted) == 10 and len(redrawn) == len(calls) - 10 >= 4
    assert all(m["result"] == "lint" and m["why"] == "%Warning-UNUSED: x" for m in redrawn)
    assert [m["id"] for m in redrawn] == [f"x{i:02d}" for i in range(1, len(redrawn) + 1)]
    # a pool with fewer distinct mutants than asked for gives them all, once
    small = "module s (input wire clk, input wire a, output reg q);\n  always @(posedge clk) q <= a;\nendmodule\n"
    pool = mr.places(small, "rtl/s.v")
    got, _ = mr.draw([pool], 50, [random.Random(1)], {"rtl/s.v": small}, {"rtl/s.v": "s"}, {"rtl/s.v": []}, _accept)
    assert sorted(m["replacement"] for m in got) == ["'0", "'1"]


def test_every_rtl_file_lexes_and_its_places_are_its_text():
    files = mr.rtl_files()
    assert "tt_seq" in files and not any("prim" in f for f in files.values())
    for f in files.values():
        text = (ROOT / f).read_text()
        for p in mr.places(text, f):
            assert text[p.start : p.end] == p.original, (f, p)


def test_the_tests_a_file_meets_come_from_the_catalogue():
    assert mr.test_blocks(CAT, "rtl/tt_seq.v") == ["tt_accel"]
    assert set(mr.test_blocks(CAT, "rtl/tt_op_ctrl.v")) == {"tt_ewise", "tt_sce", "tt_contract"}
    assert mr.test_blocks(CAT, "rtl/tt_skid.v") == ["tt_skid"]
    assert mr.test_blocks(CAT, "rtl/tt_accel_pins.v") == []


def _skid_mutant(ctx: str, orig: str, rep: str) -> dict:
    text = (ROOT / "rtl/tt_skid.v").read_text()
    i = text.index(ctx) + ctx.index(orig)
    return {
        "id": "t",
        "block": "tt_skid",
        "file": "rtl/tt_skid.v",
        "original": orig,
        "replacement": rep,
        "offset": i,
        "tests": ["tt_skid"],
    }


def test_a_planted_mutant_is_found_compiling_or_not(tmp_path):
    check = mr.Compiler(CAT, "icarus", tmp_path)
    assert check(_skid_mutant("skid_valid_q || in_valid", "||", "&&"))[0] == "ok"
    status, log = check(_skid_mutant("skid_valid_q || in_valid", "||", "|| ("))
    assert status == "does not compile" and "%Error" in log
    # out_q never assigned: Verilator -Wall warns (as make lint would), nothing fails to build
    status, log = check(_skid_mutant("out_q <= skid_valid_q ? skid_q : in_data;", "out_q <= ", "// "))
    assert status == "lint" and "%Warning" in log and "%Error-" not in log
    # each check restores the scratch copy
    assert (tmp_path / "rtl" / "tt_skid.v").read_text() == (ROOT / "rtl/tt_skid.v").read_text()


def test_the_miter_wrapper_resets_first_and_asserts_after():
    ports = {
        "in_clk": {"direction": "input", "bits": [2]},
        "in_rst": {"direction": "input", "bits": [3]},
        "in_d": {"direction": "input", "bits": [4, 5]},
        "trigger": {"direction": "output", "bits": [6]},
    }
    v = mr._wrapper(ports)
    assert "input wire [1:0] in_d" in v and ".in_rst(in_rst | first)" in v and ".in_clk(clk)" in v
    assert "if (!first) assert (!trigger)" in v


def test_verdicts_and_the_report():
    m = {
        "file": "rtl/tt_skid.v",
        "source_line": "assign in_ready  = !skid_valid_q;",
        "original": "!",
        "replacement": "~",
    }
    hand = [{**m, "verdict": "equivalent", "reason": "one bit"}]
    assert mr.verdict_for(m, hand) == hand[0]
    assert mr.verdict_for({**m, "replacement": "-"}, hand) is None
    assert mr.classify("equivalent", "proof", None)["verdict"] == "equivalent"
    assert mr.classify("differs", "cex", None)["verdict"] == "test gap"
    assert mr.classify("unknown", "no answer", hand[0])["verdict"] == "equivalent"
    assert mr.classify("unknown", "no answer", None)["verdict"] == "unclassified"
    base = {
        "file": "rtl/tt_skid.v",
        "line": 41,
        "category": "operator",
        "mutation": "swap",
        "description": "'|' -> '&'",
        "tests": ["tt_skid"],
        "failed_tests": [],
        "first_failure": "",
        "seconds": 1.0,
    }
    rows = [
        {**base, "id": "r01", "result": "killed", "failed_tests": ["x.py::test_tt_skid[icarus-w1]"]},
        {**base, "id": "r02", "result": "survived", "diff": "-a\n+b", "verdict": "equivalent", "reason": "proof"},
        {**base, "id": "r03", "result": "survived", "diff": "-c\n+d", "verdict": "test gap", "reason": "cex"},
    ]
    meta = {
        "command": "python scripts/mutate.py --random 3 --seed 5 --block tt_skid",
        "seed": 5,
        "sim": "icarus",
        "commit": "abc1234",
        "dirty": [],
        "files": ["rtl/tt_skid.v"],
        "places": {"tt_skid": 23},
        "per_block": False,
        "n": 3,
        "wall_s": 60.0,
        "date": "2026-01-01",
    }
    md = mr.report_md(meta, rows, [])
    assert "--seed 5" in md and "make mutate RANDOM=3 SEED=5" in md
    assert "**Kill ratio: 1/2 = 50.0 %**" in md
    assert "| tt_skid | 23 | 3 | 0 | 3 | 1 | 2 | 1 | 1/2 = 50.0 % | tt_skid |" in md
    assert "```diff\n-c\n+d\n```" in md and "**test gap**: cex" in md


def test_resume_takes_only_a_run_of_the_same_command_and_commit(tmp_path):
    path = tmp_path / "report.json"
    assert "no earlier run" in mr.resumable(path, "cmd", "abc", [])
    path.write_text('{"command": "cmd", "commit": "abc", "dirty": [" M scripts/mutate.py"], "mutants": []}')
    assert mr.resumable(path, "cmd", "abc", [" M scripts/mutate_random.py"])["commit"] == "abc"
    assert "earlier run was" in mr.resumable(path, "other cmd", "abc", [])
    assert "tested commit" in mr.resumable(path, "cmd", "def", [])
    # uncommitted changes to what the tests run: their results cannot be taken
    assert "tested commit" in mr.resumable(path, "cmd", "abc", [" M rtl/tt_seq.v"])
    path.write_text('{"command": "cmd", "commit": "abc", "dirty": [" M verif/host.py"], "mutants": []}')
    assert "tested commit" in mr.resumable(path, "cmd", "abc", [])


def test_verdicts_by_argument_are_well_formed_and_up_to_date():
    verdicts = mr.load_verdicts()
    for v in verdicts:
        assert v.keys() == {"file", "source_line", "original", "replacement", "verdict", "reason"}, v
        assert v["verdict"] in ("equivalent", "test gap") and len(v["reason"]) > 40, v
        lines = [ln.strip() for ln in (ROOT / v["file"]).read_text().splitlines()]
        # a verdict whose line is gone from the RTL argues about nothing: update or drop it
        assert v["source_line"] in lines and v["original"] in v["source_line"], v
