"""The lane-form search: the fastest form of a contraction's descriptor for an engine of a given number of MAC lanes,
lane buffer words, vector loads and drain (`with_lanes`; the forms are described in golden/isa/contract.py), and the
cycles of a contraction given by its einsum alone (`spec_cycles`), which the compiler plans its layouts and element
orders with.
"""

from __future__ import annotations

import math
from dataclasses import replace

from golden.arch import BUF_W, MAX_OUT
from golden.fxp import STOCHASTIC
from golden.isa.contract import (
    PAD,
    ContractDesc,
    Loop,
    buffer_layout,
    check_desc,
    drain_ok,
    lane_sum_ok,
    rows_ok,
    spec_loops,
    vec_ok,
)
from golden.isa.timing import contract_cycles


def _is_pad(lp: Loop) -> bool:
    return lp.count == 1 and not (lp.sa or lp.sb or lp.so)


def _swap_operands(desc: ContractDesc) -> ContractDesc:
    """The same op with a and b exchanged (the product commutes; the shift F_a + F_b - F_out is symmetric)."""

    def swap(loops):
        return tuple(replace(lp, sa=lp.sb, sb=lp.sa) for lp in loops)

    (ba, bb, bo), (na, nb, no) = desc.banks, desc.names
    return replace(
        desc,
        a_base=desc.b_base,
        b_base=desc.a_base,
        out_loops=swap(desc.out_loops),
        red_loops=swap(desc.red_loops),
        banks=(bb, ba, bo),
        names=(nb, na, no),
    )


def with_lanes(
    desc: ContractDesc,
    max_lanes: int,
    buf_depth: int,
    vec: int = 1,
    vec_banks: frozenset[str] | None = None,
    drain: int = 1,
    lane_sum: bool = True,
    rows: bool = True,
) -> ContractDesc:
    """The fastest lane form of `desc` (contract_cycles at the top's latencies) for an engine of max_lanes lanes with
    buf_depth words per lane buffer, or `desc` itself where none is faster: lanes over an output index
    (`_output_lanes`) or, where the engine loads vectors of `vec` words and `lane_sum` (`rows`) allows, a lane sum
    (`_sum_lanes`) or rows (`row_forms`); the first among equals. `vec_banks`: the banks built in rows (None: every
    bank), which vector loads, lane sums and rows read and wide drains (`drain` words a cycle) write."""
    forms = [_output_lanes(desc, max_lanes, buf_depth, vec, vec_banks, drain)]
    if lane_sum:
        forms += _sum_lanes(desc, max_lanes, buf_depth, vec, vec_banks, drain)
    if rows:
        forms += row_forms(desc, max_lanes, buf_depth, vec, vec_banks, drain)
    best = min([desc, *(f for f in forms if f is not None)], key=contract_cycles)  # desc among equals
    return best if best is desc else check_desc(best)


def _in_rows(bank: str, vec_banks: frozenset[str] | None) -> bool:
    return vec_banks is None or bank in vec_banks


def _buffered(
    desc: ContractDesc,
    out_loops,
    red_loops,
    lanes: int,
    buf_depth: int,
    vec: int,
    vec_banks: frozenset[str] | None,
    drain: int,
    max_lanes: int,
    **form,
) -> ContractDesc | None:
    """`desc` with these loops in a lane form of `lanes` (the lane loop the innermost output loop; `form`: further
    fields, a lane sum's) and its buffer strides, with a vector load and a wide drain where the build (`max_lanes`
    lanes) and the operands allow them; None where the buffer words exceed buf_depth."""
    lane_desc = replace(desc, out_loops=tuple(out_loops), red_loops=tuple(red_loops), lanes=lanes, **form)
    sbufs, words = buffer_layout(lane_desc.loops, lane_desc.lane_loops)
    # max(sbufs): an outermost buffer loop of count 1 has stride `words`, which may be 2^BUF_W itself
    if words > buf_depth or max(sbufs) >= 1 << BUF_W:
        return None
    loops = tuple(replace(lp, sbuf=s) for lp, s in zip(lane_desc.loops, sbufs))
    lane_desc = replace(lane_desc, out_loops=loops[:MAX_OUT], red_loops=loops[MAX_OUT:])
    if vec > 1 and _in_rows(lane_desc.banks[1], vec_banks) and vec_ok(lane_desc, vec, max_lanes):
        lane_desc = replace(lane_desc, vec=vec)
    if drain > 1 and _in_rows(lane_desc.banks[2], vec_banks) and drain_ok(lane_desc, drain):
        lane_desc = replace(lane_desc, drain=drain)
    return lane_desc


def _output_lanes(
    desc: ContractDesc, max_lanes: int, buf_depth: int, vec: int, vec_banks: frozenset[str] | None, drain: int
) -> ContractDesc | None:
    """The lane form over the innermost output index (module docstring), with a vector load and a wide drain where
    the build and the operands allow them; None where there is none.

    The operand that alone steps through the innermost output loop becomes b (a and b swap if it is a; both or
    neither: no lane form); the lanes L are the largest divisor of that loop's count up to max_lanes (1: no lane
    form). A longer loop is split into (count / L, strides * L) outside the L-lane loop; the extra loop takes the
    outermost padding slot (none: no lane form). More than buf_depth buffer words: no lane form."""
    inner = desc.out_loops[-1]
    if inner.sa and not inner.sb:
        lane_desc = _swap_operands(desc)
    elif inner.sb and not inner.sa:
        lane_desc = desc
    else:
        return None
    n = inner.count
    lanes = max((d for d in range(1, min(max_lanes, n) + 1) if n % d == 0), default=1)
    out_loops = _lane_split(lane_desc.out_loops, -1, lanes) if lanes > 1 else None
    if out_loops is None:
        return None
    return _buffered(lane_desc, out_loops, lane_desc.red_loops, lanes, buf_depth, vec, vec_banks, drain, max_lanes)


def _lane_split(out_loops, pos: int, lanes: int) -> tuple[Loop, ...] | None:
    """`out_loops` with its loop at `pos` (-1: the innermost; -2: the one outside it), of count n, replaced by
    (ceil(n / lanes), strides * lanes) outside a loop of `lanes`; the extra loop takes the outermost padding slot (None
    where there is none)."""
    out_loops = tuple(out_loops)
    lp = out_loops[pos]
    if lanes == lp.count:
        return out_loops
    pads = [i for i, p in enumerate(out_loops) if _is_pad(p)]
    if not pads:
        return None
    # rows over a count that lanes does not divide: the last index of the outer loop is short (idle rows)
    outer = replace(lp, count=-(-lp.count // lanes), sa=lp.sa * lanes, sb=lp.sb * lanes, so=lp.so * lanes)
    rest = out_loops[pos + 1 :] if pos < -1 else ()
    return out_loops[: pads[0]] + out_loops[pads[0] + 1 : pos] + (outer, replace(lp, count=lanes)) + rest


def _sum_lanes(
    desc: ContractDesc, max_lanes: int, buf_depth: int, vec: int, vec_banks: frozenset[str] | None, drain: int
) -> list[ContractDesc]:
    """The lane sums of `desc` (module docstring) for an engine of max_lanes lanes that loads vectors of `vec` words:
    R (a power of two, 2..vec, dividing max_lanes) sum lanes times L output lanes, L the largest divisor of the
    innermost output loop's count up to max_lanes / R where b alone steps it, else 1. A reduction loop that steps a at
    stride 1 and b with a count R divides (a and b swap to find one in a bank built in rows) gives the sum loop: its
    inner R indices move to the innermost output slot (output stride 0), taking an output padding slot (none: no lane
    sum), and the rest (count / R, strides * R) stays a reduction loop."""
    if vec < 2:
        return []
    forms = []
    for cand in (desc, _swap_operands(desc)):
        pads = [i for i, lp in enumerate(cand.out_loops) if _is_pad(lp)]
        if not pads or not _in_rows(cand.banks[0], vec_banks):
            continue
        r = 2
        while r <= min(vec, max_lanes) and max_lanes % r == 0:
            red = [i for i, lp in enumerate(cand.red_loops) if lp.sa == 1 and lp.sb and lp.count % r == 0]
            if red:
                forms += _sum_forms(cand, red[-1], r, pads[0], max_lanes, buf_depth, vec, vec_banks, drain)
            r *= 2
    return forms


def _sum_forms(
    cand: ContractDesc,
    red: int,
    r: int,
    pad: int,
    max_lanes: int,
    buf_depth: int,
    vec: int,
    vec_banks: frozenset[str] | None,
    drain: int,
) -> list[ContractDesc]:
    """The lane sums of `cand` with reduction loop `red` as the sum loop of r lanes (its output slot: padding slot
    `pad`): with one output lane, and with the most the innermost output loop allows."""
    lp = cand.red_loops[red]
    if lp.count > r:
        red_loops = (
            cand.red_loops[:red] + (replace(lp, count=lp.count // r, sa=r, sb=lp.sb * r),) + cand.red_loops[red + 1 :]
        )
    else:
        red_loops = (PAD,) + cand.red_loops[:red] + cand.red_loops[red + 1 :]
    out_loops = cand.out_loops[:pad] + cand.out_loops[pad + 1 :]
    shapes = [(1, out_loops)]
    inner = out_loops[-1]
    if inner.sb and not inner.sa:
        n = inner.count
        lanes = max(d for d in range(1, min(max_lanes // r, n) + 1) if n % d == 0)
        split = _lane_split(out_loops, -1, lanes) if lanes > 1 else None
        if split is not None:
            shapes.append((lanes, split))
    forms = []
    for lanes, loops in shapes:
        form = _buffered(
            cand,
            loops + (replace(lp, count=r),),
            red_loops,
            lanes * r,
            buf_depth,
            vec,
            vec_banks,
            drain,
            max_lanes,
            lane_sum=True,
        )
        if form is not None and lane_sum_ok(form):
            forms.append(form)
    return forms


def row_forms(
    desc: ContractDesc, max_lanes: int, buf_depth: int, vec: int, vec_banks: frozenset[str] | None, drain: int
) -> list[ContractDesc]:
    """The rows forms of `desc` (module docstring) that with_lanes considers, for an engine of max_lanes lanes that
    loads vectors of `vec` words:
    the innermost output loop, stepped by b alone (a and b swap to find one whose a is in a bank built in rows), is the
    lane loop whole (L its count); R = max_lanes / L (a power of two, 2..vec) rows of the loop outside it, which steps a
    alone at stride 1: its inner R indices are the rows loop, the rest (the chunk loop: ceil(count / R), strides * R)
    takes an output padding slot just outside it (none: no rows form). Where R does not divide the count, the chunk
    loop's last index has idle rows; where the count is below R, the chunk loop counts 1."""
    forms = []
    for cand in (desc, _swap_operands(desc)):
        row, lane = cand.out_loops[-2], cand.out_loops[-1]
        if not (lane.sb and not lane.sa and row.sa == 1 and not row.sb and max_lanes % lane.count == 0):
            continue
        r = max_lanes // lane.count
        if r < 2 or r & (r - 1) or r > vec or not _in_rows(cand.banks[0], vec_banks):
            continue
        idle = -row.count % r
        out_loops = _lane_split(cand.out_loops, -2, r)
        if out_loops is None:
            continue
        form = _buffered(
            cand,
            out_loops,
            cand.red_loops,
            max_lanes,
            buf_depth,
            vec,
            vec_banks,
            drain,
            max_lanes,
            rows=True,
            idle_rows=idle,
        )
        if form is not None and rows_ok(form):
            forms.append(form)
    return forms


def spec_cycles(
    spec: str, order: str, sizes: dict[str, int], lanes: int, buf_depth: int, vec: int = 1, drain: int = 1
) -> int:
    """contract_cycles of a contraction given by its einsum and element order alone (the compiler's layout choice,
    golden/planner.py refine_layouts), on an engine of `lanes` MAC lanes, `buf_depth` buffer words, vector loads of
    `vec` words and a drain of `drain` (every bank in rows, the operands at row boundaries); raises ValueError where
    the nest does not fit a descriptor."""
    out_loops, red_loops = spec_loops(spec, order, sizes, spec)
    desc = check_desc(
        ContractDesc(
            a_base=0,
            b_base=0,
            o_base=0,
            out_count=math.prod(lp.count for lp in out_loops),
            out_loops=out_loops,
            red_loops=red_loops,
            shift=0,
            mode=STOCHASTIC,
            accumulate=False,
            out_w=16,
        )
    )
    return contract_cycles(with_lanes(desc, lanes, buf_depth, vec=vec, drain=drain))
