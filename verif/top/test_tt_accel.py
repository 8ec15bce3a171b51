"""pytest runner for the accelerator top (rtl/tt_accel.v): lock-step training steps on both simulators."""

import os

import pytest

from golden import program as P
from golden.compiler import compile_network
from golden.ir import OpKind
from verif.filelist import sources
from verif.runner import BUILD, SIMS, run_block
from verif.top.accel_env import hdl_parameters, model_config

SOURCES = sources("tt_accel")

# model, mini-batch (None: the config's), updates, test inferences, host bus; OPTIMIZER: the cases that train with
# another optimizer than the config's (tiny-adam: Adam, the element-wise unit built with ADAM=1 and the 32-bit moment
# bank). digits uses the direct AXI master:
# cocotbext-axi's watches every clock edge, which makes the 1.2M-cycle digits case take 8.5 min on Icarus.
# tiny-stalls: the same lock-step training with random pauses on every AXI4-Lite channel (valid and ready).
CASES = {
    "tiny": ("tiny", None, 3, 8, "cocotbext"),
    "digits": ("digits", 2, 1, 2, "direct"),
    "tiny-stalls": ("tiny", None, 1, 4, "stalls"),
    "tiny-lanes": ("tiny", None, 2, 4, "direct"),
    "digits-lanes": ("digits", 2, 1, 2, "direct"),
    "tiny-adam": ("tiny", None, 3, 4, "direct"),
    "paper-lanes": ("paper", 2, 1, 1, "direct"),
    "tiny-lanes-ecp5": ("tiny", None, 2, 4, "direct"),
    "tiny-lanes-ice40": ("tiny", None, 2, 4, "direct"),
    "tiny-lanes-one-set": ("tiny", None, 2, 4, "direct"),
}
OPTIMIZER = {"tiny-adam": "adam"}
# The cases built on a vendor technology (rtl/prim/: the block RAMs, multipliers of the MAC lanes and the program
# memory on the cells' models), bit-exact like the generic build: tiny's lane build (vector loads, wide drains) on
# both families. A larger network on the cells adds Verilator build time (every block RAM's model is compiled on its
# own), not coverage: the primitives' shapes are swept in their block tests.
TECH = {"tiny-lanes-ecp5": "ecp5", "tiny-lanes-ice40": "ice40"}
# MAC lanes, lane buffer words, vector load words and drain elements of the cases built with several lanes (the others
# have one): tiny loads its buffers 4 words a cycle, drains 2 a cycle (banks in rows of 4: runs of half a row) and sums
# the lanes of four ops (one with 2 output lanes beside 2 sum lanes, drained 2 a cycle), digits loads one word a cycle.
# paper-lanes: the 64-lane engine of the ECP5 build (rows of 8, a drain of 8): its lane sums with output lanes (loading
# along the sum loop where R = 8) and its rows. Sums of 16 lanes are swept in tt_contract's block tests.
LANES = {
    "tiny-lanes": (4, 64, 4, 2),
    "digits-lanes": (8, 512, 1, 1),
    "paper-lanes": (64, 512, 8, 8),
    "tiny-lanes-ecp5": (4, 64, 4, 2),
    "tiny-lanes-ice40": (4, 64, 4, 2),
    "tiny-lanes-one-set": (4, 64, 4, 2),
}
# The cases built with one set of lane buffer words (PRELOAD = 0): the assembler links no preloads, the engine refuses
# them, and its lanes share memories in pairs.
ONE_SET = {"tiny-lanes-one-set"}


def accel_params(comp, case: str) -> P.AccelParams:
    """The case's accelerator parameters; with lanes (and vector loads, wide drains), the compiled train_sample must
    use them (a lane case whose every contraction stays in the direct form would test nothing new)."""
    lanes, depth, vec, drain = LANES.get(case, (1, 0, 1, 1))
    params = P.params_for(comp, lanes=lanes, buf_depth=depth, vec=vec, drain=drain, preload=case not in ONE_SET)
    if lanes > 1:
        frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
        descs = [P.contract_desc(comp, params, op, frac) for op in comp.train_sample if op.kind == OpKind.CONTRACT]
        assert max(d.lanes for d in descs) > 1, f"{case}: no contraction of train_sample takes the lane form"
        assert vec == 1 or max(d.vec for d in descs) > 1, f"{case}: no contraction of train_sample loads vectors"
        assert drain == 1 or max(d.drain for d in descs) > 1, f"{case}: no contraction of train_sample drains wide"
        assert vec == 1 or any(d.lane_sum for d in descs), f"{case}: no contraction of train_sample sums its lanes"
        assert vec == 1 or any(d.lane_sum and d.out_lanes > 1 for d in descs), (
            f"{case}: no lane sum of train_sample has output lanes beside its sum lanes"
        )
        assert (
            vec == 1
            or lanes < 2 * vec
            or any(d.lane_sum and d.out_lanes > 1 and d.vec > 1 and d.sum_lanes == vec for d in descs)
        ), f"{case}: no lane sum of train_sample loads vectors along its sum loop beside output lanes"
    return params


# Icarus runs the whole top at a few thousand cycles per second: the digits case (1.2M cycles) takes 8 min
# there, so the regression runs it (and the paper case) on Verilator only (about 30 s).
WAVES = os.environ.get("WAVES") == "1"
PAIRS = [
    (sim, case) for sim in SIMS for case in CASES if not (sim == "icarus" and case.startswith(("digits", "paper")))
]


# MEM_PIPE=0 and 1 (bank read latency 1 and 5 instead of the default 6) on tiny only, on Icarus (no C++ model to
# compile per parameter set): the units' latencies are swept at block level; this proves the top's host reads and
# the banks without their registers, or without the fabric register behind the block RAMs. MEM_PIPE=0 also builds
# the banks from 256-bit block memories (RAM_BLOCK_BITS), so tiny's banks are split too (digits' are at the default
# 16384 bits).
RUNS = [(sim, case, 2) for sim, case in PAIRS] + [(SIMS[0], "tiny", p) for p in (0, 1)]
# Icarus runs the variants of tiny (its lanes, vendor cells, bus stalls, Adam) one update and two test samples long:
# the Verilator run of the same case goes the whole length, the Icarus run proves the build simulator-independent.
ICARUS_SHORT = (1, 2)
# The 64-lane case (Verilator's build of 64 MAC lanes and the run) takes a large part of the regression's 15-minute
# limit per test on one core: it has a limit of its own, so that a slower machine does not fail it.
SLOW = {"paper-lanes": pytest.mark.timeout(1800)}


@pytest.mark.parametrize("sim,case,mem_pipe", [pytest.param(*r, marks=SLOW.get(r[1], ())) for r in RUNS])
def test_tt_accel_train_steps(sim, case, mem_pipe, monkeypatch):
    model, batch, updates, tests, bus = CASES[case]
    if sim == "icarus" and case != "tiny":
        updates, tests = (min(n, short) for n, short in zip((updates, tests), ICARUS_SHORT))
    monkeypatch.setenv("BUS", bus)
    comp = compile_network(model_config(model, batch, optimizer=OPTIMIZER.get(case)))
    params = (
        hdl_parameters(accel_params(comp, case))
        | {"MEM_PIPE": mem_pipe}
        | ({} if mem_pipe else {"RAM_BLOCK_BITS": 256})
        | ({"TECH": f'"{TECH[case]}"'} if case in TECH else {})
    )
    monkeypatch.setenv("MODEL", model)
    monkeypatch.setenv("BATCH", str(batch or ""))
    monkeypatch.setenv("OPTIMIZER", OPTIMIZER.get(case, ""))
    monkeypatch.setenv("UPDATES", str(updates))
    monkeypatch.setenv("TEST_SAMPLES", str(tests))
    run_block(
        toplevel="tt_accel",
        sources=sources("tt_accel", TECH.get(case, "generic")),
        parameters=params,
        sim=sim,
        build_dir=BUILD / "tt_accel" / f"{case}-mem_pipe{mem_pipe}" / (sim + ("-waves" if WAVES else "")),
        test_module="verif.top.tb_tt_accel",
        testcase="train_steps",
    )


# Rank adaptation: digits (two bonds of rank 8) on Verilator; tiny (one bond of rank 2) on Icarus, for speed. The
# build has the rank state and the rank unit (RANK = 1).
RANK_MODELS = {"verilator": ("digits", 2), "icarus": ("tiny", 4)}


@pytest.mark.parametrize("sim", SIMS)
def test_tt_accel_rank_adaptation(sim, monkeypatch):
    model, batch = RANK_MODELS[sim]
    for k, v in {"MODEL": model, "BATCH": str(batch), "UPDATES": "2"}.items():
        monkeypatch.setenv(k, v)
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=hdl_parameters(P.params_for(compile_network(model_config(model, batch, adapt_ranks=True)))),
        sim=sim,
        build_dir=BUILD / "tt_accel" / "rank" / sim,
        test_module="verif.top.tb_tt_accel",
        testcase="rank_steps",
    )


@pytest.mark.parametrize("sim", SIMS)
def test_tt_accel_check_every(sim, monkeypatch):
    monkeypatch.setenv("MODEL", "tiny")
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=hdl_parameters(P.params_for(compile_network(model_config("tiny")))),
        sim=sim,
        build_dir=BUILD / "tt_accel" / "tiny" / sim,
        test_dir=BUILD / "tt_accel" / "check_every" / sim,
        test_module="verif.top.tb_tt_accel",
        testcase="check_every",
    )


UVM_BUILD = BUILD / "tt_accel" / "uvm-lanes8"


def _run_uvm(monkeypatch, skip_corners: bool):
    comp = compile_network(model_config("digits", 2, adapt_ranks=True))  # the build the rank steps need
    env = {
        "MODEL": "digits",
        "BATCH": "2",
        "UPDATES": "2",
        "BUS": "direct",
        "SKIP_CORNERS": "1" if skip_corners else "",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    # 8 lanes, vector loads of 8 words, a drain of 8 (make train's build): the coverage of contraction forms needs
    # direct ops and lane ops loaded both ways (digits has all three), and of drains both widths
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=hdl_parameters(P.params_for(comp, lanes=8, buf_depth=512, vec=8, drain=8)),
        sim="verilator",
        build_dir=UVM_BUILD / ("weak" if skip_corners else "full"),
        test_module="verif.top.tb_uvm_accel",
    )


@pytest.mark.skipif("verilator" not in SIMS, reason="the digits workload runs on Verilator (Icarus: 8 min)")
def test_tt_accel_uvm_coverage(monkeypatch):
    """pyuvm environment (verif/top/tb_uvm_accel.py): digits training steps and the saturating corner phase,
    bit-exact, op coverage closed."""
    _run_uvm(monkeypatch, skip_corners=False)


@pytest.mark.skipif("verilator" not in SIMS, reason="the digits workload runs on Verilator (Icarus: 8 min)")
def test_tt_accel_uvm_coverage_rejects_weak_stimulus(monkeypatch):
    """Without the corner phase nothing saturates: the coverage check must fail the test, naming the holes."""
    with pytest.raises(AssertionError, match="cocotb tests failed"):
        _run_uvm(monkeypatch, skip_corners=True)
    log = (UVM_BUILD / "weak" / "results.xml").read_text()
    assert "functional coverage not closed" in log and "kind_x_saturated" in log


@pytest.mark.parametrize("sim,lanes", [(sim, 1) for sim in SIMS] + [("verilator", 4)] * ("verilator" in SIMS))
def test_tt_accel_random_networks(sim, lanes, monkeypatch):
    """One accelerator build, several constrained-random networks: each a new program on the same RTL. The
    build with 4 MAC lanes (Verilator only: Icarus runs the one-lane build) adds lane forms and preloads."""
    from verif.top.random_nets import LANE_PARAMS, PARAMS

    monkeypatch.setenv("NETWORKS", "4" if sim == "verilator" else "1")  # Icarus: a few thousand cycles/s
    monkeypatch.setenv("BUS", "direct")
    params = LANE_PARAMS if lanes > 1 else PARAMS
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=hdl_parameters(params),
        sim=sim,
        build_dir=BUILD / "tt_accel" / "random" / f"{sim}-lanes{lanes}",
        test_module="verif.top.tb_tt_accel",
        testcase="random_networks",
    )


@pytest.mark.skipif(
    "verilator" not in SIMS, reason="the extra seeds run on Verilator (Icarus: a few thousand cycles/s)"
)
@pytest.mark.parametrize("lanes", [1, 4])
@pytest.mark.parametrize("offset", [1, 2])
def test_tt_accel_random_networks_other_seeds(offset, lanes, monkeypatch):
    """Both random-network builds under the seeds after the run's (SEED + offset, within 32 bits), so that every
    regression runs them under three seeds: other networks, and other random register values at time 0 (Verilator's
    reset randomisation follows the seed); the lane build without its regression networks, which the run's seed
    covers. SEED=4 once found a write that undriven AXI inputs made after reset, which the run's seed alone had not
    shown. Fewer networks than under the run's seed keep the extra seeds to a few seconds each."""
    from verif.top.random_nets import LANE_PARAMS, PARAMS

    monkeypatch.setenv("SEED", str((int(os.environ.get("SEED") or 1) + offset) % 2**32))
    monkeypatch.setenv("NETWORKS", "3" if lanes > 1 else "2")
    monkeypatch.setenv("REGRESSION", "0")
    monkeypatch.setenv("BUS", "direct")
    run_block(
        toplevel="tt_accel",
        sources=SOURCES,
        parameters=hdl_parameters(LANE_PARAMS if lanes > 1 else PARAMS),
        sim="verilator",
        build_dir=BUILD / "tt_accel" / "random" / f"verilator-lanes{lanes}-seed+{offset}",
        test_module="verif.top.tb_tt_accel",
        testcase="random_networks",
    )


def test_regression_networks_keep_their_point():
    """Each regression network still fits the lane build and still has what once broke the RTL (no simulation: a
    compiler change that takes a network's point away fails here in seconds, not in the random-network run)."""
    from golden.config_file import config_from_dict
    from verif.top.random_nets import LANE_PARAMS, REGRESSION_NETWORKS, fits

    assert REGRESSION_NETWORKS
    for network, kept_for in REGRESSION_NETWORKS:
        cfg = config_from_dict(network)
        assert fits(cfg, LANE_PARAMS), f"{cfg.name} no longer fits the lane build"
        assert kept_for(cfg, LANE_PARAMS), f"{cfg.name} no longer has what it was kept to test"
