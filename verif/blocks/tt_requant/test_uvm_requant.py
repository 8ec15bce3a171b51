"""pytest runner for the pyuvm environment of rtl/tt_requant.v (cocotb module: tb_uvm_requant.py).

test_uvm_requant: the three pyuvm tests (random, corner, stress) on both simulators and two parameter sets.
test_uvm_requant_catches_mutant / ..._coverage_check_fails_on_weak_stimulus: the scoreboard's mismatch,
missing and extra counts and the coverage check each fail a run when they should (Icarus only).
ACC_W is always passed explicitly, so the build dir (build/sim/tt_requant/ACC_W.._LANES.._OUT_W../<sim>) is
not the one the plain cocotb tests (test_tt_requant.py) use: the two suites can run in parallel under
pytest-xdist without one clobbering the other's build.
"""

import re

import pytest

from verif.filelist import sources
from verif.runner import BUILD, RTL, SIMS, run_block

CONFIGS = {
    "a48w16l1": {"ACC_W": 48, "OUT_W": 16, "LANES": 1},  # the accelerator's default shape
    "a40w8l3": {"ACC_W": 40, "OUT_W": 8, "LANES": 3},  # narrower accumulator, odd lane count
}
TB = "verif.blocks.tt_requant.tb_uvm_requant"
SOURCES = sources("tt_requant")


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("sim", SIMS)
def test_uvm_requant(sim, config):
    run_block(
        toplevel="tt_requant",
        sources=SOURCES,
        parameters=CONFIGS[config],
        sim=sim,
        test_module=TB,
        testcase=["RequantRandomTest", "RequantCornerTest", "RequantStressTest"],
    )


# --- the checks can fail ---------------------------------------------------------------------------------
# Each mutant is a one-line change to a private copy of rtl/tt_requant.v (built under build/sim/mutants/,
# never in rtl/); the corner test must fail on it, through the scoreboard count named last. A mutant whose
# target line no longer exists in the RTL fails loudly rather than passing by testing nothing.
MUTANTS = {
    "nearest_ties_down": ("9'h100;", "9'h0FF;", "mismatched"),
    "stochastic_floors_below_draw": ("{rnd[8*l +: 8], 1'b1}", "{rnd[8*l +: 8], 1'b0}", "mismatched"),
    "sat_flag_at_qmax": ("hi = shifted_q > QMAX;", "hi = shifted_q >= QMAX;", "mismatched"),
    "shift_47_illegal": ("(s_l > 7'sd47)", "(s_l > 7'sd46)", "mismatched"),
    "latency_4": ("localparam integer LATENCY = 3;", "localparam integer LATENCY = 4;", "mismatched"),
    "drops_odd_acc": (".d   (in_valid),", ".d   (in_valid & ~acc[0]),", "missing"),
    "valid_on_idle": (".d   (in_valid),", ".d   (in_valid | (&rnd[1:0])),", "extra"),
}
SCOREBOARD_RE = re.compile(r"scoreboard: (\d+) matched, (\d+) mismatched, (\d+) missing, (\d+) extra")
MUTANT_CONFIG = CONFIGS["a40w8l3"]


def _run_expecting_failure(capfd, sources, build_dir, testcase):
    with pytest.raises(AssertionError, match="cocotb tests failed"):
        run_block(
            "tt_requant", sources, MUTANT_CONFIG, "icarus", TB, build_dir=build_dir, testcase=testcase, waves=False
        )
    out = capfd.readouterr().out
    counts = [dict(zip(("matched", "mismatched", "missing", "extra"), map(int, m))) for m in SCOREBOARD_RE.findall(out)]
    assert counts, out[-3000:]
    return counts[-1], out


@pytest.mark.parametrize("mutant", MUTANTS)
def test_uvm_requant_catches_mutant(mutant, capfd):
    old, new, count = MUTANTS[mutant]
    rtl = (RTL / "tt_requant.v").read_text()
    assert rtl.count(old) == 1, f"mutant {mutant}: '{old}' must occur exactly once in rtl/tt_requant.v"
    build_dir = BUILD / "mutants" / "tt_requant" / mutant / "icarus"
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / "tt_requant.v"
    src.write_text(rtl.replace(old, new))
    counts, _ = _run_expecting_failure(capfd, [src, RTL / "tt_delay.v"], build_dir, "RequantCornerTest")
    print(f"mutant {mutant}: scoreboard {counts}")
    assert counts[count] > 0, f"mutant {mutant}: expected {count} transactions, scoreboard says {counts}"


def test_uvm_requant_coverage_check_fails_on_weak_stimulus(capfd):
    """A nearest-only sequence on the correct RTL: the scoreboard passes, the coverage check must fail."""
    build_dir = BUILD / "mutants" / "tt_requant" / "coverage_hole" / "icarus"
    counts, out = _run_expecting_failure(capfd, SOURCES, build_dir, "RequantCoverageHoleDemo")
    assert counts["matched"] > 0 and not (counts["mismatched"] or counts["missing"] or counts["extra"]), counts
    assert "functional coverage not closed" in out and "coverage hole in mode" in out, out[-3000:]
    print("coverage hole demo:", [ln.split("]: ", 1)[-1] for ln in out.splitlines() if "coverage hole in" in ln])
