"""The contraction descriptor's loop nest walked: the beats rtl/tt_loop_addr.v produces, the lane form's load and
compute walks (golden/isa/contract.py), and the plain reference of one descriptor on flat memories (`execute_desc`),
which the block tests and the golden machine's cross-checks compare with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from golden import fxp
from golden.arch import MAX_OUT, NLOOPS
from golden.fxp import STOCHASTIC, Fmt
from golden.isa.contract import LANE_LOOP, ContractDesc, buffer_words


def nest_steps(desc: ContractDesc, counts) -> tuple[Any, ...]:
    """Every step of the loop nest with loop counts `counts` (a loop's count, or 1 to hold it at index 0), in
    execution order (innermost loop fastest): (loop indices NLOOPS x steps, the a, b, out and buffer addresses,
    first of a reduction, last of a reduction)."""
    counts = np.array(counts)
    idx = np.indices(counts).reshape(NLOOPS, -1)  # row-major: the odometer's order
    chunk, row = LANE_LOOP - 2, LANE_LOOP - 1
    if desc.idle_rows and counts[row] > 1:  # the rows loop walked: its idle rows are no steps
        idx = idx[:, (idx[chunk] < counts[chunk] - 1) | (idx[row] < counts[row] - desc.idle_rows)]
    strides = np.array([(lp.sa, lp.sb, lp.so, lp.sbuf) for lp in desc.loops]).T
    a, b, o, buf = strides @ idx + np.array([desc.a_base, desc.b_base, desc.o_base, 0])[:, None]
    red = idx[MAX_OUT:]
    return idx, a, b, o, buf, ~red.any(axis=0), (red == counts[MAX_OUT:, None] - 1).all(axis=0)


def desc_beats(desc: ContractDesc):
    """The MAC beats of a descriptor in execution order: (addr a, addr b, addr out, first of a reduction,
    last of a reduction), the sequence rtl/tt_loop_addr.v produces."""
    _, a, b, o, _, first, last = nest_steps(desc, [lp.count for lp in desc.loops])
    return zip(a.tolist(), b.tolist(), o.tolist(), first.tolist(), last.tolist())


def lane_beats(desc: ContractDesc):
    """The lane form's two walks as the engine makes them: (load, compute) iterators. The engine runs them side by
    side, each group once its words are loaded (group_starts); the result is that of the whole load first.

    load: (addr b, lane, buffer address) of every lane buffer word: the nest with only the loops that step b (the
    buffer loops and the lane loops) walked; lane = the mixed-radix index over the lane loops (`lane_offsets`). In
    rows the rows loop does not step b: lane is the column c, and the word goes to lanes c + L r for every row r.
    compute: (addr a, buffer address, addr out of lane 0, first of a reduction, last of a reduction): the nest with the
    lane loops held at 0; every lane MACs a's word at addr a + its a offset (0, one word for every lane, but for a lane
    sum) with its buffer's word, and its sum belongs to the element at addr out + its out offset."""
    if desc.lanes == 1:
        raise ValueError("lane_beats of a direct-form descriptor (lanes 1)")
    loops = desc.loops
    idx, _, b, _, buf, _, _ = nest_steps(desc, [lp.count if lp.sb else 1 for lp in loops])
    lane = np.zeros_like(b)
    for i in desc.lane_loops:
        lane = lane * loops[i].count + idx[i]
    load = zip(b.tolist(), lane.tolist(), buf.tolist())
    _, a, _, o, buf, first, last = nest_steps(
        desc, [1 if i in desc.lane_loops else lp.count for i, lp in enumerate(loops)]
    )
    return load, zip(a.tolist(), buf.tolist(), o.tolist(), first.tolist(), last.tolist())


def lane_offsets(desc: ContractDesc) -> list[tuple[int, int]]:
    """(a offset, out offset) of every lane of the lane-form `desc`, in lane_beats' numbering: the mixed-radix index
    over its lane loops (outer to inner), so a lane sum's lane (c, r) is c * R + r."""
    offsets = [(0, 0)]
    for i in desc.lane_loops:
        lp = desc.loops[i]
        offsets = [(a + k * lp.sa, o + k * lp.so) for a, o in offsets for k in range(lp.count)]
    return offsets


def live_lanes(desc: ContractDesc, group: int) -> int:
    """The lanes of the lane-form `desc` whose sums are elements in its group `group` (lane_beats' order): all but, in
    rows, the idle rows' lanes (the last ones) of a group in the chunk loop's last index."""
    chunks = desc.out_loops[-3].count
    return desc.lanes - (desc.idle_rows * desc.load_lanes if group % chunks == chunks - 1 else 0)


def _direct_sums(desc: ContractDesc, mem_a: list, mem_b: list) -> tuple[list[int], list[int]]:
    """(output addresses, exact sums) in the nest's order, one MAC a beat of desc_beats."""
    addrs, accs, acc = [], [], 0
    for ra, rb, ro, first, last in desc_beats(desc):
        acc = (0 if first else acc) + mem_a[ra] * mem_b[rb]
        if last:
            addrs.append(ro)
            accs.append(acc)
    return addrs, accs


def _lane_sums(desc: ContractDesc, mem_a: list, mem_b: list) -> tuple[list[int], list[int]]:
    """The same as _direct_sums the lane form's way (lane_beats): each lane's buffer loaded from b, then per compute
    step every lane's MAC of one a word."""
    load, compute = lane_beats(desc)
    offsets = lane_offsets(desc)
    bufs = [[None] * buffer_words(desc) for _ in range(desc.lanes)]  # None: a word the load missed fails the MAC
    cols = desc.load_lanes
    for rb, lane, rbuf in load:
        for r in range(desc.row_lanes):  # rows: every row's lane of the column
            bufs[lane + cols * r][rbuf] = mem_b[rb]
    addrs, accs, acc, group = [], [], [0] * desc.lanes, 0
    for ra, rbuf, ro, first, last in compute:
        live = live_lanes(desc, group)
        acc = [(0 if first else s) + mem_a[ra + sa] * buf[rbuf] for (sa, _), s, buf in zip(offsets[:live], acc, bufs)]
        if last:
            addrs += [ro + so for _, so in offsets[:live]]
            accs += acc
            group += 1
    return addrs, accs


def execute_desc(
    desc: ContractDesc, mem_a, mem_b, mem_o, rand=None, via_lanes: bool = False
) -> tuple[np.ndarray, int, int]:
    """Plain reference of one descriptor on flat memories (exact Python ints).

    Returns (the output memory after the op, saturations, max |word written|). `rand`: one draw per output
    element in the nest's order (STOCHASTIC only). Saturations count the RQ clamp and, when accumulating, the clamp
    of the sum (SPEC 5.1), so one element may count twice. `via_lanes` (a lane form only): the sums through
    lane_beats' two walks (the load first, then the compute) instead of desc_beats: the same result.
    """
    fmt = Fmt(desc.out_w, 0)
    mem_o = np.array(mem_o, dtype=np.int64, copy=True)
    if desc.mode == STOCHASTIC:
        rand = np.asarray(rand, dtype=np.int64)
        if rand.shape != (desc.out_count,):
            raise ValueError(f"need {desc.out_count} draws, got shape {rand.shape}")
    sums = _lane_sums if via_lanes else _direct_sums
    addrs, accs = sums(desc, np.asarray(mem_a).tolist(), np.asarray(mem_b).tolist())
    if desc.lane_sum:  # each element's R sum lanes are consecutive sums at one address (output stride 0): add them up
        r = desc.sum_lanes
        addrs, accs = addrs[::r], [sum(accs[i : i + r]) for i in range(0, len(accs), r)]
    acc_v = np.array(accs, dtype=np.int64)
    fxp.check_acc(acc_v, f"contract -> {desc.names[2]}")
    y = fxp.round_shift(acc_v, desc.shift, desc.mode, rand if desc.mode == STOCHASTIC else None)
    y, n_sat = fxp.saturate(y, fmt)  # the RQ clamp, element by element
    maxabs = 0
    for addr, v in zip(addrs, y):
        if desc.accumulate:  # in write order: an address written twice accumulates twice
            v, n = fxp.saturate(v + mem_o[addr], fmt)
            n_sat += n
        mem_o[addr] = int(v)
        maxabs = max(maxabs, abs(int(v)))
    return mem_o, n_sat, maxabs
