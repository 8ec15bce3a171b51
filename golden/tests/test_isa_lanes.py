"""Tests of the CONTRACT lane form (golden/isa/lanes.py `with_lanes`, `lane_beats`): every lane form that with_lanes
gives for the compiled ops of the tiny, digits and paper models and for random synthetic contractions passes
check_desc and computes exactly what the direct form computes (output memory, saturations, max |y|), both as a
plain loop nest (execute_desc) and through the engine's two phases (lane buffers loaded from b, then every lane's
MAC per step); check_desc rejects each broken lane-form invariant; with_lanes keeps the direct form where the
lane form is impossible or does not pay; vector loads (`vec_ok`) only where b's rows allow them, with their load
beats and group starts worked by hand; wide drains (`drain_ok`) only where the output's runs allow them, with their
group steps worked by hand. Lane sums and rows: golden/tests/test_isa_lane_sums.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from golden.arch import BUF_W, MAX_OUT
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.fxp import NEAREST
from golden.ir import OpKind
from golden.isa.contract import (
    LANE_LOOP,
    PAD,
    ContractDesc,
    Loop,
    buffer_words,
    check_desc,
    drain_beats,
    drain_ok,
    pack_ports,
    vec_ok,
)
from golden.isa.lanes import with_lanes
from golden.isa.loop_nest import desc_beats, execute_desc, lane_beats, lane_offsets, live_lanes
from golden.isa.timing import MAC_REG, MEM_LAT, SLICE_LAT, contract_cycles, group_starts, load_beats
from golden.program import PROGRAMS
from golden.tests.test_isa import Case, contract_case, synthetic

MAX_LANES = (2, 4, 8, 16)
BUF_DEPTHS = (16, 512, 4096)


def run(case: Case, desc: ContractDesc, via_lanes: bool = False) -> tuple[np.ndarray, int, int]:
    """execute_desc of `desc` on the case's banks: (the whole output bank after the op, saturations, max |y|)."""
    mem_a, mem_b, mem_o = (case.banks[b] for b in desc.banks)
    return execute_desc(desc, mem_a, mem_b, mem_o, case.rand, via_lanes=via_lanes)


def direct(case: Case) -> tuple[tuple[np.ndarray, int, int], list[int]]:
    """The direct form's result (run) and its output addresses in order (the order of the stochastic draws)."""
    return run(case, case.desc), [ro for _, _, ro, _, last in desc_beats(case.desc) if last]


def check_lane_form(case: Case, desc: ContractDesc, want) -> None:
    """`desc`, a lane form of case.desc, computes the same as the direct form (`want`: direct(case)) both ways,
    its load phase fills every lane's buffer once, and its compute phase writes the outputs in the direct order (a
    lane sum: every group's lanes at its element's address)."""
    (mem_want, *stats), order = want
    what = f"{desc.names[2]} <- {desc.names[0]} x {desc.names[1]}, lanes {desc.lanes}"
    assert check_desc(desc) is desc
    for via_lanes in (False, True):
        mem_o, *got = run(case, desc, via_lanes)
        assert np.array_equal(mem_o, mem_want) and got == stats, f"{what}, via_lanes {via_lanes}"
    load, compute = lane_beats(desc)
    slots = sorted((lane, rbuf) for _, lane, rbuf in load)
    assert slots == [(lane, i) for lane in range(desc.load_lanes) for i in range(buffer_words(desc))], what
    elements = [so for _, so in lane_offsets(desc)][:: desc.sum_lanes]  # a lane sum's R lanes share an element
    assert len(elements) == desc.out_lanes
    groups = [ro for _, _, ro, _, last in compute if last]
    assert len(groups) == desc.groups, what
    assert [
        ro + so for g, ro in enumerate(groups) for so in elements[: live_lanes(desc, g) // desc.sum_lanes]
    ] == order, what


def swapped(d: ContractDesc, lane: ContractDesc) -> bool:
    return lane.a_base != d.a_base or lane.names[0] != d.names[0]


def split(d: ContractDesc, lane: ContractDesc) -> bool:
    return lane.lanes < d.out_loops[-1].count


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_lane_forms_of_compiled_ops(model):
    """Every contract op of every program, for several lane counts and buffer depths. The paper's large ops run
    (in Python, one MAC at a time) only in train_sample (infer repeats its forward ops) and in the lane forms of
    the engine it plans, 16 lanes of 512 words."""
    comp = compile_network(load_config(model))
    rng = np.random.default_rng(21)
    ops = [(prog, op) for prog in PROGRAMS for op in getattr(comp, prog) if op.kind == OpKind.CONTRACT]
    assert ops
    lane_forms = swaps = splits = 0
    for prog, op in ops:
        case = contract_case(comp, op, rng)
        forms = set()
        for max_lanes in MAX_LANES:
            for buf_depth in BUF_DEPTHS:
                d = with_lanes(case.desc, max_lanes, buf_depth)
                assert check_desc(d) is d
                if d == case.desc:
                    continue
                assert d.lanes <= max_lanes and buffer_words(d) <= buf_depth
                assert contract_cycles(d) < contract_cycles(case.desc)
                if model != "paper" or op.macs <= 16384 or (prog, max_lanes, buf_depth) == ("train_sample", 16, 512):
                    forms.add(d)
        want = direct(case) if forms else None
        for d in forms:
            check_lane_form(case, d, want)
            swaps += swapped(case.desc, d)
            splits += split(case.desc, d)
        lane_forms += len(forms)
    assert lane_forms and swaps and splits, (lane_forms, swaps, splits)


@pytest.mark.parametrize("accumulate", [False, True])
def test_lane_forms_of_random_contractions(accumulate):
    rng = np.random.default_rng(31 + accumulate)
    lane_forms = swaps = splits = 0
    for trial in range(250):
        n_out = int(rng.integers(1, MAX_OUT + 1))
        n_red = int(rng.integers(0, 4))
        widths = (int(rng.integers(2, 9)), int(rng.integers(2, 17)), int(rng.integers(2, 17)))
        comp, op = synthetic(
            rng,
            n_out,
            n_red,
            sizes=(1, 8),
            widths=widths,
            accumulate=accumulate,
            mode=int(rng.integers(0, 2)),
            base=tuple(int(x) for x in rng.integers(0, 50, size=3)),
        )
        case = contract_case(comp, op, rng, shift=int(rng.integers(-4, 12)), extremes=trial % 3 == 0)
        d = with_lanes(case.desc, int(rng.choice([2, 3, 4, 8])), int(rng.choice([8, 64, 4096])))
        if d != case.desc:
            check_lane_form(case, d, direct(case))
            lane_forms += 1
            swaps += swapped(case.desc, d)
            splits += split(case.desc, d)
    assert lane_forms >= 25 and swaps >= 8 and splits >= 8, (lane_forms, swaps, splits)


# --- hand-built descriptors ----------------------------------------------------------------------------------


def matmul(m: int, n: int, k: int, pads: bool = True) -> ContractDesc:
    """out[i, j] = sum_k a[i, k] b[k, j]: the innermost output loop j is b's. Without `pads` the other output
    slots hold count-1 loops that step the output (legal, but no padding slot to split into)."""
    fill = (PAD,) * (MAX_OUT - 2) if pads else (Loop(1, so=m * n, index="x"),) * (MAX_OUT - 2)
    return check_desc(
        ContractDesc(
            a_base=0,
            b_base=100,
            o_base=0,
            out_count=m * n,
            out_loops=fill + (Loop(m, sa=k, so=n, index="i"), Loop(n, sb=1, so=1, index="j")),
            red_loops=(PAD,) * 3 + (Loop(k, sa=1, sb=n, index="k"),),
            shift=2,
            mode=NEAREST,
            accumulate=False,
            out_w=16,
            banks=("A", "B", "O"),
            names=("a", "b", "out"),
        )
    )


def transposed(d: ContractDesc) -> ContractDesc:
    """The same op written with a and b exchanged."""

    def swap(loops):
        return tuple(replace(lp, sa=lp.sb, sb=lp.sa) for lp in loops)

    return replace(
        d,
        a_base=d.b_base,
        b_base=d.a_base,
        out_loops=swap(d.out_loops),
        red_loops=swap(d.red_loops),
        banks=(d.banks[1], d.banks[0], d.banks[2]),
        names=(d.names[1], d.names[0], d.names[2]),
    )


def with_loop(d: ContractDesc, i: int, **fields) -> ContractDesc:
    """`d` with loop i (an index into d.loops) changed."""
    loops = list(d.loops)
    loops[i] = replace(loops[i], **fields)
    return replace(d, out_loops=tuple(loops[:MAX_OUT]), red_loops=tuple(loops[MAX_OUT:]))


def matmul_case(d: ContractDesc, rng: np.random.Generator) -> Case:
    """Random banks for a hand-built NEAREST descriptor (no draws, no Machine)."""
    banks = {b: rng.integers(-300, 300, size=512) for b in d.banks}
    return Case(None, None, {}, {}, banks, None, d)


def test_split_lane_loop_and_buffer_strides():
    d = matmul(4, 8, 16)
    lane = with_lanes(d, 4, 4096)
    *_, i, j_outer, j = lane.out_loops
    # j split into 2 x 4 lanes; buffer loops (b's) j_outer and k: k innermost (sbuf 1), j_outer outside it (16)
    assert (lane.lanes, j, j_outer) == (4, Loop(4, sb=1, so=1, index="j"), Loop(2, sb=4, so=4, index="j", sbuf=16))
    assert lane.out_loops[:-3] == (PAD,) * 3 and i == d.out_loops[-2] and lane.red_loops[-1].sbuf == 1
    assert buffer_words(lane) == 32 and buffer_words(d) == 0
    # the lane form: the check cycle; group 0 (i = 0, j_outer = 0) waits for slice 0 (4 lanes x 16 words of k,
    # written MEM_LAT cycles after their load), group 1 for slice 1 (128 load beats); then 6 more groups of K = 16
    # cycles, the last group's 16 beats and the drain of 4. The direct form: 32 groups of 16 and a drain of 1. Both
    # then wait for the old word, requantise and write (tail); the direct form's first beat issues SLICE_LAT cycles
    # late (the register slice; the lane form's waits for its slice anyway).
    tail = 2 * MEM_LAT + MAC_REG + 8
    assert list(group_starts(lane)[:3]) == [4 * 16 + MEM_LAT, 2 * 4 * 16 + MEM_LAT, 2 * 4 * 16 + MEM_LAT + 16]
    assert contract_cycles(lane) == 1 + (2 * 4 * 16 + MEM_LAT) + 6 * 16 + 16 + 4 + tail
    assert contract_cycles(d) == 1 + SLICE_LAT + 32 * 16 + 1 + tail
    case = matmul_case(d, np.random.default_rng(1))
    check_lane_form(case, lane, direct(case))


def test_vector_load_beats_and_group_starts():
    """The matmul of test_split_lane_loop_and_buffer_strides with b loaded 4 words a beat: a slice (4 lanes x 16
    words of k) takes 16 beats instead of 64, so every group finds its slice loaded when the one before ends."""
    d = matmul(4, 8, 16)  # b at 100: j (the lanes) at stride 1, j_outer at 4, k at 8
    lane = with_lanes(d, 4, 4096, vec=4)
    assert lane == replace(with_lanes(d, 4, 4096), vec=4) and vec_ok(lane, 2) and not vec_ok(lane, 8)
    assert load_beats(lane) == 32 * 4 // 4 and load_beats(replace(lane, vec=1)) == 128
    tail = 2 * MEM_LAT + MAC_REG + 8
    assert list(group_starts(lane)[:3]) == [16 + MEM_LAT, 2 * 16 + MEM_LAT, 3 * 16 + MEM_LAT]
    assert contract_cycles(lane) == 1 + (16 + MEM_LAT) + 7 * 16 + 16 + 4 + tail
    assert pack_ports(lane)["vec_load"] == 1 and pack_ports(replace(lane, vec=1))["vec_load"] == 0
    pre = replace(lane, preload=replace(lane, preloaded=False))
    assert pack_ports(pre)["pre_vec_load"] == 1
    case = matmul_case(d, np.random.default_rng(5))
    check_lane_form(case, lane, direct(case))  # the values do not change


@pytest.mark.parametrize(
    "why,change",
    [
        ("b off a row", lambda d: replace(d, b_base=d.b_base + 2)),
        (
            "lane loop not at stride 1",
            lambda d: replace(d, out_loops=d.out_loops[:-1] + (replace(d.out_loops[-1], sb=4),)),
        ),
        (
            "another b stride off a row",
            lambda d: replace(d, red_loops=d.red_loops[:-1] + (replace(d.red_loops[-1], sb=6),)),
        ),
    ],
)
def test_vector_load_needs_aligned_rows(why, change):
    """vec_ok refuses each broken rule, check_desc refuses a descriptor that asks for it anyway, and with_lanes then
    keeps the one-word load; a vector load also needs lanes a multiple of it, and the bank of b among vec_banks."""
    lane = with_lanes(matmul(4, 8, 16), 4, 4096)
    bad = change(lane)
    assert not vec_ok(bad, 4), why
    with pytest.raises(ValueError, match="vector load of 4 words"):
        check_desc(replace(bad, vec=4))
    assert not vec_ok(lane, 8) and not vec_ok(lane, 3) and vec_ok(lane, 1)
    assert with_lanes(matmul(4, 8, 16), 4, 4096, vec=4, vec_banks=frozenset({"A"})).vec == 1  # b is in bank B
    assert with_lanes(matmul(4, 8, 16), 4, 4096, vec=4, vec_banks=frozenset({"B"})).vec == 4


def test_wide_drain_group_steps():
    """A matmul with a short reduction (K = 2) at 8 lanes: one element a cycle, a group takes max(K, L) = 8 cycles
    (drain-bound); 2 a cycle, 4; 4 a cycle, max(2, 8 / 4) = 2; 8 a cycle, still 2 (the reduction). Group 0 waits for
    slice 0 (8 lanes x 2 words, one a beat), group 1 for slice 1 (32 beats); the later ones find theirs loaded. Only
    the time changes."""
    d = matmul(4, 16, 2)  # b at 100: j at stride 1 (the lanes), k at 16; out j at stride 1, i at 16
    lane = with_lanes(d, 8, 4096)
    assert lane.drain == 1 and drain_beats(lane) == 8
    tail = 2 * MEM_LAT + MAC_REG + 8
    for drain, step in ((1, 8), (2, 4), (4, 2), (8, 2)):
        wide = with_lanes(d, 8, 4096, drain=drain)
        assert wide == replace(lane, drain=drain) and drain_ok(wide, drain)
        starts = group_starts(wide)
        assert list(starts[:2]) == [16 + MEM_LAT, 32 + MEM_LAT], drain
        assert list(np.diff(starts[1:])) == [step] * 6, drain
        assert contract_cycles(wide) == 1 + int(starts[-1]) + 2 + 8 // drain + tail, drain
        assert pack_ports(wide)["vec_store"] == int(drain > 1)
        case = matmul_case(d, np.random.default_rng(drain))
        check_lane_form(case, wide, direct(case))  # the values do not change
    assert not drain_ok(lane, 16) and not drain_ok(lane, 3)  # more than the lanes; not a power of two


@pytest.mark.parametrize(
    "why,change",
    [
        ("out off a run", lambda d: replace(d, o_base=d.o_base + 2)),
        ("lane loop not at out stride 1", lambda d: with_loop(d, LANE_LOOP, so=2)),
        ("another out stride off a run", lambda d: with_loop(d, LANE_LOOP - 1, so=6)),
    ],
)
def test_wide_drain_needs_aligned_runs(why, change):
    """drain_ok refuses each broken rule, check_desc refuses a descriptor that asks for it anyway, and with_lanes then
    keeps the one-element drain; a wide drain also needs the output's bank among the banks with rows."""
    d = matmul(4, 16, 2)
    lane = with_lanes(d, 8, 4096)
    bad = change(lane)
    assert not drain_ok(bad, 4), why
    with pytest.raises(ValueError, match="wide drain of 4 words"):
        check_desc(replace(bad, drain=4))
    assert drain_ok(lane, 1) and drain_ok(bad, 1)
    assert with_lanes(d, 8, 4096, vec=8, vec_banks=frozenset({"B"}), drain=4).drain == 1  # out is in bank O
    assert with_lanes(d, 8, 4096, vec=8, vec_banks=frozenset({"B", "O"}), drain=4).drain == 4


def test_operands_swap_when_a_owns_the_innermost_loop():
    d = matmul(4, 8, 16)
    t = transposed(d)
    lane = with_lanes(t, 8, 4096)
    assert lane == with_lanes(d, 8, 4096) and lane.lanes == 8 and lane.names == d.names
    case = matmul_case(t, np.random.default_rng(2))
    check_lane_form(case, lane, direct(case))


def test_with_lanes_keeps_the_direct_form():
    d = matmul(4, 8, 16)
    assert with_lanes(d, 1, 4096) is d
    assert with_lanes(d, 4, 31) is d and with_lanes(d, 4, 32).lanes == 4  # 32 buffer words
    no_pad = matmul(4, 8, 16, pads=False)
    assert with_lanes(no_pad, 4, 4096) is no_pad  # 8 = 2 x 4 needs a padding slot for the split
    assert with_lanes(no_pad, 8, 4096).lanes == 8  # no split: no slot needed
    both = check_desc(with_loop(with_loop(with_loop(d, 4, sa=16 * 8), LANE_LOOP, sa=1), 9, sa=8))
    assert with_lanes(both, 8, 4096) is both  # out[i, j] = sum_k a[i, k, j] b[k, j]
    assert with_lanes(matmul(4, 7, 16), 4, 4096).lanes == 1  # 7 has no divisor 2..4
    outer = matmul(64, 8, 1)  # K = 1: loading b costs more than the lanes save
    assert with_lanes(outer, 8, 4096) is outer
    # an outermost buffer loop of count 1 over 2^BUF_W words would need buffer stride 2^BUF_W
    k = 1 << BUF_W
    d = matmul(4, 2, k)
    wide = check_desc(with_loop(d, 0, sb=2 * k, so=8))
    assert with_lanes(d, 2, k).lanes == 2 and with_lanes(wide, 2, k) is wide


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda d: replace(d, lanes=2), "lane loop \\(j\\) count 4, but lanes 2"),
        (lambda d: with_loop(d, LANE_LOOP, sa=1), "lane loop \\(j\\) has a stride 1; must be 0"),
        (lambda d: with_loop(d, LANE_LOOP, sb=0), "lane loop \\(j\\) has b stride 0"),
        (lambda d: with_loop(d, LANE_LOOP, sbuf=1), "loop 5 \\(j\\) buffer stride 1; must be 0 \\(a lane loop\\)"),
        (lambda d: with_loop(d, 9, sbuf=2), "loop 9 \\(k\\) buffer stride 2; must be 1 \\(the product of the inner"),
        (lambda d: with_loop(d, 3, sbuf=16), "loop 3 \\(i\\) buffer stride 16; must be 0 \\(not a buffer loop\\)"),
        (lambda d: with_loop(d, 0, sbuf=1), "loop 0 \\(pad\\) buffer stride 1; must be 0 \\(not a buffer loop\\)"),
        (lambda d: replace(d, lanes=0), "lanes 0 outside 1..255"),
        (lambda d: replace(d, lanes=256), "lanes 256 outside 1..255"),
        (lambda d: with_loop(d, 9, sbuf=1 << BUF_W), "loop 9 \\(k\\) buffer stride 4096 outside 0..4095 \\(12-bit"),
        (lambda d: with_loop(matmul(4, 8, 16), 9, sbuf=1), "buffer stride 1; must be 0 \\(the direct form has no"),
    ],
)
def test_check_desc_rejects_a_broken_lane_form(bad, message):
    d = with_lanes(matmul(4, 8, 16), 4, 4096)
    assert d.lanes == 4 and check_desc(d) is d
    with pytest.raises(ValueError, match=message):
        check_desc(bad(d))
