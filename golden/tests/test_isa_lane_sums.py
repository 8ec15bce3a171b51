"""Tests of the lane forms that split each element over several lanes or make rows of lanes (golden/isa/lanes.py
`with_lanes`, golden/isa/contract.py `lane_sum_ok`, `rows_ok`): lane sums (with and without output lanes) and rows
(with idle rows where R does not divide the count) only where a's runs allow them, with their cycles worked by hand and
the values of the direct form, on hand-built descriptors and the compiled ops."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from golden.arch import MAX_OUT
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
    lane_sum_ok,
    pack_ports,
    rows_ok,
    sum_stages,
    vec_ok,
)
from golden.isa.lanes import with_lanes
from golden.isa.loop_nest import lane_offsets, live_lanes
from golden.isa.timing import MAC_REG, MEM_LAT, contract_cycles, contract_losses, group_starts, load_beats
from golden.lowering import lower_contract
from golden.program import PROGRAMS
from golden.tests.test_isa import contract_case
from golden.tests.test_isa_lanes import check_lane_form, direct, matmul_case, with_loop


def matvec(m: int, k: int) -> ContractDesc:
    """out[i] = sum_k a[i, k] b[k]: a matrix-vector product, k at stride 1 in both operands."""
    return check_desc(
        ContractDesc(
            a_base=0,
            b_base=256,
            o_base=0,
            out_count=m,
            out_loops=(PAD,) * (MAX_OUT - 1) + (Loop(m, sa=k, so=1, index="i"),),
            red_loops=(PAD,) * 3 + (Loop(k, sa=1, sb=1, index="k"),),
            shift=2,
            mode=NEAREST,
            accumulate=False,
            out_w=16,
            banks=("A", "B", "O"),
            names=("a", "b", "out"),
        )
    )


def test_lane_sum_of_a_matrix_vector_product():
    """out[i] = sum_k a[i, k] b[k], 4 outputs, K = 32, at 8 lanes loading rows of 8: no output index is b's alone, so
    output lanes would need a and b swapped (the matrix in the buffers, one word a beat: 128 beats, no faster than
    the direct form's 128 MACs, which therefore stays without vector loads); the lane sum splits
    k into 4 x 8 instead: lane l takes a[i, 8 k' + l] from a's row and b[8 k' + l] from its buffer (4 words, loaded in
    4 row beats), a group is one output of 4 steps, and the tree adds the 8 lanes in 3 stages. Group starts: the
    first after the slice (all 4 beats) and MEM_LAT (4 + MEM_LAT), then every 4 cycles. Cycles: the
    check cycle, 21, then the last group's 4 beats, the tree's 3 stages, its drain beat, 2 MEM_LAT + MAC_REG + 8."""
    d = matvec(4, 32)
    lane = with_lanes(d, 8, 4096, vec=8, vec_banks=frozenset({"A", "B"}))
    assert lane.lane_sum and lane.lanes == 8 and lane.vec == 8 and lane.names == d.names and lane_sum_ok(lane)
    assert lane.out_loops[-1] == Loop(8, sa=1, sb=1, so=0, index="k")
    assert lane.red_loops[-1] == Loop(4, sa=8, sb=8, index="k", sbuf=1)
    assert (lane.groups, lane.red_count, lane.macs, buffer_words(lane), load_beats(lane)) == (4, 4, 128, 4, 4)
    assert (drain_beats(lane), sum_stages(lane), pack_ports(lane)["lane_sum"]) == (1, 3, 1)
    assert list(group_starts(lane)) == [s + MEM_LAT for s in (4, 8, 12, 16)]
    assert contract_cycles(lane) == 1 + 16 + MEM_LAT + 4 + 3 + 1 + 2 * MEM_LAT + MAC_REG + 8
    assert with_lanes(d, 8, 4096) is d and contract_cycles(lane) <= contract_cycles(d) - 100
    for v in (False, True):  # the values are those of the direct form, by both walks
        case = matmul_case(d, np.random.default_rng(7 + v))
        check_lane_form(case, lane, direct(case))
    # a's bank must have rows; none: no lane sum, nor where the planner leaves lane sums out
    assert not with_lanes(d, 8, 4096, vec=8, vec_banks=frozenset()).lane_sum
    assert not with_lanes(d, 8, 4096, vec=8, lane_sum=False).lane_sum


def test_lane_sum_of_compiled_digits_head():
    """digits' dense head `ji,i->j` (10 outputs, K = 64) at 8 lanes with rows of 8: a lane sum of 8 steps a group,
    computing what the direct form computes (draws included: one per output, in the output order)."""
    comp = compile_network(load_config("digits"))
    op = next(o for o in comp.train_sample if o.spec == "ji,i->j")
    case = contract_case(comp, op, np.random.default_rng(5))
    lane = with_lanes(case.desc, 8, 512, vec=8)
    assert lane.lane_sum and lane.lanes == 8 and lane.red_count == 8 and lane.groups == case.desc.out_count
    check_lane_form(case, lane, direct(case))


@pytest.mark.parametrize(
    "why,change",
    [
        ("a off a row", lambda d: replace(d, a_base=d.a_base + 2)),
        ("lane loop not at a stride 1", lambda d: with_loop(d, LANE_LOOP, sa=2)),
        ("another a stride off a row", lambda d: with_loop(d, 9, sa=12)),
        ("an element per lane", lambda d: with_loop(d, LANE_LOOP, so=1)),
        ("the direct form", lambda d: replace(d, lanes=1)),
        ("a sum loop of 3", lambda d: replace(with_loop(d, LANE_LOOP, count=3), lanes=3)),
        ("lanes not a multiple of the sum loop", lambda d: replace(d, lanes=12)),
    ],
)
def test_lane_sum_needs_aligned_runs(why, change):
    """lane_sum_ok refuses each broken rule and check_desc a descriptor that asks for it anyway."""
    lane = with_lanes(matvec(4, 32), 8, 4096, vec=8)
    assert lane.lane_sum
    bad = change(lane)
    assert not lane_sum_ok(bad), why
    with pytest.raises(ValueError):
        check_desc(bad)


def test_lane_sum_of_one_output_lane_drains_one_word():
    """A wide drain runs along the output lanes: a lane sum of one output lane has none (drain_ok), and check_desc
    refuses one that asks for it."""
    lane = with_lanes(matvec(4, 32), 8, 4096, vec=8, drain=2)
    assert lane.lane_sum and lane.out_lanes == 1 and lane.drain == 1 and not drain_ok(lane, 2)
    with pytest.raises(ValueError, match="wide drain of 2 words"):
        check_desc(replace(lane, drain=2))


def matmul_ikj(m: int, k: int, n: int) -> ContractDesc:
    """out[i, j] = sum_k a[i, k] b[k, j], all row-major: k at stride 1 in a, j at stride 1 in b and the output."""
    return check_desc(
        ContractDesc(
            a_base=0,
            b_base=64,
            o_base=128,
            out_count=m * n,
            out_loops=(PAD,) * (MAX_OUT - 2) + (Loop(m, sa=k, so=n, index="i"), Loop(n, sb=1, so=1, index="j")),
            red_loops=(PAD,) * 3 + (Loop(k, sa=1, sb=n, index="k"),),
            shift=1,
            mode=NEAREST,
            accumulate=False,
            out_w=16,
            banks=("A", "B", "O"),
            names=("a", "b", "out"),
        )
    )


def test_lane_sum_with_output_lanes():
    """out[i, j] = sum_k a[i, k] b[k, j], i 2, k 8, j 4, on 8 lanes loading rows of 4. Output lanes alone use 4 lanes
    (j): 2 groups of K = 8 after the slice of 8 words (8 row beats) and MEM_LAT, starts 8 + MEM_LAT and 16 + MEM_LAT.
    The lane sum of R = 2 by L = 4 uses all 8: lane (c, r) takes a[i, 2 k' + r] and b[2 k' + r, c] (k' 0..3
    in its buffer, loaded along j, whose 4 lanes are consecutive on the engine: 8 / 2 >= 4, in 8 row beats), 2
    groups of K = 4 whose 4 elements drain one a cycle; starts 8 + MEM_LAT (the slice and MEM_LAT) and 4 later; cycles:
    the check cycle, 12 + MEM_LAT, the last group's 4 beats, the tree's 1 stage, 4 drain beats, 2 MEM_LAT + MAC_REG + 8.
    R = 4 leaves
    L = 2 and no vector load (8 / 4 < 4): slower. A drain of 2 runs along j: 2 drain beats a group."""
    d = matmul_ikj(2, 8, 4)
    lane = with_lanes(d, 8, 4096, vec=4)
    assert lane.lane_sum and (lane.lanes, lane.out_lanes, lane.sum_lanes, lane.vec) == (8, 4, 2, 4)
    assert lane.out_loops[-2:] == (Loop(4, sb=1, so=1, index="j"), Loop(2, sa=1, sb=4, index="k"))
    assert lane.red_loops[-1] == Loop(4, sa=2, sb=8, index="k", sbuf=1) and lane.lane_loops == (
        LANE_LOOP - 1,
        LANE_LOOP,
    )
    assert (lane.groups, lane.red_count, lane.macs, buffer_words(lane), load_beats(lane)) == (2, 4, 64, 4, 8)
    assert (drain_beats(lane), sum_stages(lane), pack_ports(lane)["lane_sum"]) == (4, 1, 1)
    assert list(group_starts(lane)) == [8 + MEM_LAT, 12 + MEM_LAT]
    assert contract_cycles(lane) == 1 + 12 + MEM_LAT + 4 + 1 + 4 + 2 * MEM_LAT + MAC_REG + 8
    outputs = with_lanes(d, 8, 4096, vec=4, lane_sum=False)
    assert (outputs.lanes, outputs.vec, list(group_starts(outputs))) == (4, 4, [8 + MEM_LAT, 16 + MEM_LAT])
    assert contract_cycles(outputs) == 1 + 16 + MEM_LAT + 8 + 4 + 2 * MEM_LAT + MAC_REG + 8
    assert lane_offsets(lane) == [(r, c) for c in range(4) for r in range(2)]
    wide = with_lanes(d, 8, 4096, vec=4, drain=2)
    assert wide == replace(lane, drain=2) and drain_beats(wide) == 2 and drain_ok(wide, 2) and not drain_ok(wide, 8)
    # on 4 lanes the sum's output lanes are not consecutive rows of 4 (4 / 2 < 4): no vector load along j
    assert not vec_ok(lane, 4, engine_lanes=4) and vec_ok(lane, 4, engine_lanes=8) and vec_ok(lane, 4)
    for v in (False, True):
        case = matmul_case(d, np.random.default_rng(11 + v))
        want = direct(case)
        for form in (lane, wide):
            check_lane_form(case, form, want)


@pytest.mark.parametrize(
    "why,change",
    [
        ("output lanes of another count", lambda d: with_loop(d, LANE_LOOP - 1, count=2)),
        ("output lanes stepping a", lambda d: with_loop(d, LANE_LOOP - 1, sa=1)),
        ("output lanes not stepping b", lambda d: with_loop(d, LANE_LOOP - 1, sb=0)),
    ],
)
def test_lane_sum_output_lanes_rules(why, change):
    """lane_sum_ok refuses a broken output lane loop beside the sum loop, and check_desc with it."""
    lane = with_lanes(matmul_ikj(2, 8, 4), 8, 4096, vec=4)
    assert lane.out_lanes == 4
    bad = change(lane)
    assert not lane_sum_ok(bad), why
    with pytest.raises(ValueError):
        check_desc(bad)


@pytest.mark.parametrize("model,lanes,vec", [("tiny", 8, 4), ("digits", 16, 4), ("digits", 64, 8)])
def test_lane_sums_of_compiled_ops(model, lanes, vec):
    """Every lane sum with_lanes plans for a compiled op (every program) on engines with more lanes than a sum loop
    takes computes what the direct form computes, both ways; some have output lanes beside their sum lanes."""
    comp = compile_network(load_config(model))
    rng = np.random.default_rng(41)
    sums = with_out = 0
    for prog in PROGRAMS:
        for op in getattr(comp, prog):
            if op.kind != OpKind.CONTRACT:
                continue
            case = contract_case(comp, op, rng)
            d = with_lanes(case.desc, lanes, 512, vec=vec, drain=vec)
            if d.lane_sum:
                assert d.lanes <= lanes and d.sum_lanes <= vec
                check_lane_form(case, d, direct(case))
                sums += 1
                with_out += d.out_lanes > 1
    assert sums and with_out, (sums, with_out)


def matmul_ijk_rows(m: int, k: int, n: int) -> ContractDesc:
    """out[i, j] = sum_k a[k, i] b[k, j]: i at stride 1 in a (an output index of a alone), j at stride 1 in b."""
    return check_desc(
        ContractDesc(
            a_base=0,
            b_base=64,
            o_base=128,
            out_count=m * n,
            out_loops=(PAD,) * (MAX_OUT - 2) + (Loop(m, sa=1, so=n, index="i"), Loop(n, sb=1, so=1, index="j")),
            red_loops=(PAD,) * 3 + (Loop(k, sa=m, sb=n, index="k"),),
            shift=1,
            mode=NEAREST,
            accumulate=True,
            out_w=16,
            banks=("A", "B", "O"),
            names=("a", "b", "out"),
        )
    )


def test_rows_of_an_outer_product():
    """out[i, j] = sum_k a[k, i] b[k, j], i 8, k 3, j 4, on 8 lanes loading rows of 4 and draining 2 a cycle. Output
    lanes alone use 4 lanes (j): 8 groups of K = 3, each draining 4 elements 2 a cycle (max(3, 2) = 3 cycles a group).
    Rows use all 8: L = 4 columns (j) x R = 2 rows (i split into 4 x 2), lane (c, r) c + 4 r taking a[k, 2 i' + r]
    from a's run and b[k, c] from its buffer, loaded once per column (3 words, 3 row beats) into both rows' lanes; 4
    groups of K = 3 draining 8 elements 2 a cycle: 4 cycles a group. Starts: the slice (3 beats) and MEM_LAT, then
    every 4; cycles: the check cycle, the last group's start, its 3 beats, 4 drain beats, 2 MEM_LAT + MAC_REG + 8 (no
    tree)."""
    d = matmul_ijk_rows(8, 3, 4)
    lane = with_lanes(d, 8, 4096, vec=4, drain=2)
    assert (
        lane.rows
        and not lane.lane_sum
        and (lane.lanes, lane.row_lanes, lane.load_lanes, lane.vec, lane.drain) == (8, 2, 4, 4, 2)
        and rows_ok(lane)
    )
    assert lane.out_loops[-3:] == (
        Loop(4, sa=2, so=8, index="i"),
        Loop(2, sa=1, so=4, index="i"),
        Loop(4, sb=1, so=1, index="j"),
    )
    assert (lane.groups, lane.red_count, lane.macs, buffer_words(lane), load_beats(lane)) == (4, 3, 96, 3, 3)
    assert (drain_beats(lane), sum_stages(lane), pack_ports(lane)["rows"]) == (4, 0, 1)
    assert list(group_starts(lane)) == [s + MEM_LAT for s in (3, 7, 11, 15)]
    assert contract_cycles(lane) == 1 + 15 + MEM_LAT + 3 + 4 + 2 * MEM_LAT + MAC_REG + 8
    outputs = with_lanes(d, 8, 4096, vec=4, drain=2, rows=False)
    assert (outputs.lanes, outputs.rows, outputs.groups) == (4, False, 8)
    assert contract_cycles(outputs) > contract_cycles(lane)
    assert lane_offsets(lane) == [(r, 4 * r + c) for r in range(2) for c in range(4)]
    # rows use all the engine's lanes: on 16 lanes R = 4 (L stays the 4 columns), and none where R would pass vec
    assert with_lanes(d, 16, 4096, vec=4, drain=2).row_lanes == 4
    assert not with_lanes(d, 16, 4096, vec=2, drain=2).rows
    for v in (False, True):
        case = matmul_case(d, np.random.default_rng(13 + v))
        check_lane_form(case, lane, direct(case))


@pytest.mark.parametrize(
    "why,change",
    [
        ("rows stepping b", lambda d: with_loop(d, LANE_LOOP - 1, sb=4)),
        ("rows not at a stride 1", lambda d: with_loop(d, LANE_LOOP - 1, sa=2)),
        ("rows of 3", lambda d: replace(with_loop(d, LANE_LOOP - 1, count=3), lanes=12)),
        ("lanes not columns x rows", lambda d: replace(d, lanes=4)),
        ("both kinds", lambda d: replace(d, lane_sum=True)),
    ],
)
def test_rows_rules(why, change):
    """rows_ok refuses each broken rule and check_desc a descriptor that asks for it anyway."""
    lane = with_lanes(matmul_ijk_rows(8, 3, 4), 8, 4096, vec=4, drain=2)
    assert lane.rows
    bad = change(lane)
    assert not rows_ok(bad), why
    with pytest.raises(ValueError):
        check_desc(bad)


def test_rows_over_a_count_they_do_not_divide():
    """out[i, j] = sum_k a[k, i] b[k, j], i 5, k 3, j 4, a based at word 1, on 8 lanes loading rows of 4 and draining 2
    a cycle: L = 4 columns x R = 2 rows, i split into a chunk loop of 3 (strides 2) and the rows loop. a's runs start
    at words 1 + 5 k + 2 i' (most of them off a row of 4). The chunk loop's last index (i = 4, 5) has one idle row, so
    the third group drains 4 elements (2 beats) instead of 8 (4); the groups still start 4 apart: the slice (3 beats)
    and MEM_LAT, then 4 and 8 cycles later; the last group is the short one: the check cycle, its start, its 3 beats,
    2 drain beats, 2 MEM_LAT + MAC_REG + 8. The output holds 20 elements, 20 draws."""
    d = replace(matmul_ijk_rows(5, 3, 4), a_base=1)
    lane = with_lanes(d, 8, 4096, vec=4, drain=2)
    assert lane.rows and (lane.lanes, lane.row_lanes, lane.idle_rows, lane.out_count, lane.groups) == (8, 2, 1, 20, 3)
    assert lane.out_loops[-3:] == (
        Loop(3, sa=2, so=8, index="i"),
        Loop(2, sa=1, so=4, index="i"),
        Loop(4, sb=1, so=1, index="j"),
    )
    assert (drain_beats(lane), drain_beats(lane, ragged=True), pack_ports(lane)["idle_rows"]) == (4, 2, 1)
    assert [live_lanes(lane, g) for g in range(3)] == [8, 8, 4]
    assert list(group_starts(lane)) == [s + MEM_LAT for s in (3, 7, 11)]
    assert contract_cycles(lane) == 1 + 11 + MEM_LAT + 3 + 2 + 2 * MEM_LAT + MAC_REG + 8
    assert lane.macs == 5 * 3 * 4
    for v in (False, True):
        case = matmul_case(d, np.random.default_rng(17 + v))
        check_lane_form(case, lane, direct(case))
    # fewer indices than rows: one chunk, one idle row of four on 16 lanes
    one = with_lanes(matmul_ijk_rows(3, 3, 4), 16, 4096, vec=4, drain=2)
    assert one.rows and (one.row_lanes, one.idle_rows, one.out_loops[-3].count, one.groups) == (4, 1, 1, 1)
    case = matmul_case(matmul_ijk_rows(3, 3, 4), np.random.default_rng(19))
    check_lane_form(case, one, direct(case))


@pytest.mark.parametrize(
    "why,change",
    [
        ("as many idle rows as rows", lambda d: replace(d, idle_rows=2, out_count=d.out_count - 4)),
        ("idle rows beside no rows", lambda d: replace(d, rows=False)),
        ("out_count counting idle rows", lambda d: replace(d, out_count=d.out_count + 4)),
    ],
)
def test_idle_rows_rules(why, change):
    """check_desc refuses idle rows that are not below the rows loop's count or not in rows, and an out_count that
    counts them."""
    lane = with_lanes(replace(matmul_ijk_rows(5, 3, 4), a_base=1), 8, 4096, vec=4, drain=2)
    assert lane.idle_rows == 1
    with pytest.raises(ValueError):
        check_desc(change(lane))


def test_pruned_ranks_take_rows_with_idle_rows_on_the_paper_engine():
    """The pruned paper model (the ranks its rank-adapted run ends with) on the 128-lane engine with rows of 16: the
    forward step `ifbj,bceid->ecfjd` takes rows over the rank j = 9 (a = the core G0.1, j at stride 1, its other
    strides multiples of 9: runs off the bank's rows) beside the 16 columns of d: R = 128 / 16 = 8, chunks of 8 and 1,
    7 idle rows in the second; its losses still add up to its cycles."""
    cfg = load_config("paper")
    cfg = replace(cfg, layers=tuple(replace(lay, ranks=r) for lay, r in zip(cfg.layers, ((11, 9, 15), (15,)))))
    comp = compile_network(cfg)
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    op = next(o for o in comp.train_sample if o.kind == OpKind.CONTRACT and o.spec == "ifbj,bceid->ecfjd")
    d = with_lanes(lower_contract(comp, op, frac), 128, 512, vec=16, drain=16)
    assert d.rows and (d.lanes, d.row_lanes, d.load_lanes, d.idle_rows) == (128, 8, 16, 7)
    assert d.out_loops[-3].count == 2 and d.out_loops[-2].sa == 1
    assert any(lp.sa % 8 for lp in d.out_loops[:-3] + d.red_loops)  # a's runs start off the rows of 16 words
    assert [live_lanes(d, g) for g in range(4)] == [128, 16, 128, 16]
    assert sum(contract_losses(d, 128).values()) == pytest.approx(contract_cycles(d))
