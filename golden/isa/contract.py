"""The contraction unit's descriptor (CONTRACT, SPEC 5.1, rtl/tt_contract.v): its fields and forms, their legality,
and the RTL's port values. A contraction's descriptor is a loop nest over element addresses, nothing else: the engine
knows no einsum, no tensor and no format. The nest's walks and the plain reference of a descriptor are in
golden/isa/loop_nest.py, its cycles in golden/isa/timing.py, the search for its fastest form in golden/isa/lanes.py.

Loop nest: up to MAX_OUT output loops (outer to inner, the output indices in the op's element order, SPEC 5.1:
the order the spec writes them, a row-major walk of the output, unless the compiler gives the op another
order; the output strides stay those of the output's row-major layout), then up to MAX_RED reduction
loops (the contracted indices in first-appearance order in operand a, then b). Each loop has a count >= 1 and
three strides in elements (a, b, out); a stride is 0 where the index is absent from that operand (the output
strides of reduction loops are always 0). Unused loops have count 1 and strides 0 and sit on the outer side of
their group, so the innermost slot of each group is always a real loop (or both are padding).

Field widths (golden/arch.py, what the RTL's ports hold; `check_desc` raises ValueError naming the field that
overflows):
  counts CNT_W = 16 bits unsigned (1..65535), strides and addresses ADDR_W = 20 bits unsigned (a word address
  in the operand's bank, and the last element of every operand must be addressable), shift SHIFT_W = 7 bits
  two's complement (the field range; SPEC 2.1's legal range -16..47 is checked when the op runs: the RTL
  raises an error, `execute_desc` a ValueError), out width OUT_W_W = 6 bits (2..32), mode 1 bit, accumulate
  1 bit, lanes LANE_W = 8 bits unsigned (1..255), buffer strides BUF_W = 12 bits unsigned, idle rows IDLE_W = 4 bits
  unsigned.

Lane form (lanes L > 1; `with_lanes` turns the direct form, lanes 1, into it when the engine's lanes pay): how
the engine with L MAC lanes walks the same nest. The innermost output loop is the lane loop: count L, stepped
by b only (sa 0, sb != 0). The other loops that step b (sb != 0) are the buffer loops; each has a buffer stride
sbuf = the product of the counts of the buffer loops inside it (outer to inner, output loops then reduction
loops), so a buffer address sum(idx * sbuf) is the mixed-radix index over the buffer loops; every other loop has
sbuf 0, and the direct form has sbuf 0 everywhere. The engine loads each lane's b words into its buffer, one
word a cycle (`lane_beats`' load), and beside it walks the nest without the lane loop, each group once its words
are loaded (`group_starts`): each step reads one a word and every lane's buffer word at one address, and a
finished reduction gives L outputs, lane l's at the lane-0 address + l * so of the lane loop (the outputs of the
direct order, since the lane loop is the innermost output loop). The op's meaning does not change: `desc_beats` and
`execute_desc` ignore lanes and sbuf.

Vector load (`vec` V > 1; `with_lanes` chooses it where the build's banks read V words a cycle): the load walks
the lane loop V lanes a beat, one aligned row of V consecutive words of b for V lanes' buffers, instead of one
word a beat. It needs b's lane loop at stride 1, L a multiple of V, and b's base and every other b stride
multiples of V (`vec_ok`), so that every beat's words are one row of the bank and all of them b's; the load then
takes L / V beats per buffer word (`load_beats`). Only the time changes, not the values.

Wide drain (`drain` D > 1; `with_lanes` chooses it where the build's drain takes D elements a cycle and the output's
bank has rows): a group's L sums leave the drain D a cycle, lane 0's first, through D requantisers with D draws a
cycle (still one draw per element in the nest's order), and each beat writes one aligned run of D consecutive words
of a bank row (reading the old run first when accumulating). It needs the output's lane loop at stride 1, L a
multiple of D, and the output's base and every other output stride multiples of D (`drain_ok`), so that every
beat's words are one aligned run and all of them the op's. A group then takes max(K, L / D) cycles instead of
max(K, L). Only the time changes, not the values.

Lane sum (`lane_sum`; `with_lanes` chooses it where the build loads vectors of V words, a's bank has rows and it is
the faster form, e.g. for a matrix-vector product, or with R a part of the lanes beside output lanes): the lanes split
the reduction. The lane loop is then the sum loop: a reduction index moved to the innermost output slot (count R, a
power of two, 2 <= R <= V, output stride 0: not an element), stepping a at stride 1 and b (sb != 0). The op's lanes
are L x R: L output lanes (`out_lanes`) and R sum lanes (`sum_lanes`); with L > 1 the output loop just outside the
sum loop (LANE_LOOP - 1, the output lane loop) has count L and steps b only (sa 0, sb != 0), like the lane form's lane
loop, and the compute nest holds both at 0. Each step reads one aligned run of R words of a, lane (c, r) taking word
r, MACs it with its buffer word, and a finished group is L output elements (lane 0's address + c * so of the output
lane loop): element c is the sum of lanes (c, 0..R-1), formed by an adder tree (log2 R stages) before the drain. The
engine numbers lane (c, r) c + (lanes of the build / R) * r (its trees fold the upper half of the lanes onto the
lower, log2 R times). A vector load with R = V runs along the sum loop, a beat the R lanes of one output lane (lanes
c, c + S, ..., S = lanes of the build / R); with R < V along the output lane loop, V output lanes of one r a beat,
where S is a multiple of V (`vec_ok` with `engine_lanes`). It needs a's base and
every other a stride multiples of R (`_aligned_runs` on a), and a wide drain the output lane loop at out stride 1
(`drain_ok`). out_count counts elements (the sum loop not among them), a group takes max(K, L / D) cycles, and the
element order, hence the draws, is that of the output loops as before. Only the time changes, not the values (the
sums are exact).

Rows (`rows`; `with_lanes` chooses it where the build loads vectors, a's bank has rows and it is the faster form):
the outer product of a column of b and a run of a. The lanes are L x R, all the build's: the lane loop (count L, the
whole innermost output loop, stepping b only) and outside it the rows loop (LANE_LOOP - 1, count R, a power of two,
2 <= R <= V, an output index of a alone at a stride 1: sb 0). The compute nest holds both at 0; each step reads one
run of R consecutive words of a, which may start anywhere (the bank reads the columns before the run's first one a row
further on), lane (c, r) taking word r, and MACs it with its buffer word, which is b's for column c (the load walks the
lane loop alone and writes each word into the R lanes of its column). A group is L x R output elements, each lane its
own, drained L x R / D cycles in the nest's order (row by row). The engine numbers lane (c, r) c + L r, as the golden
model. A wide drain needs the lane loop at out stride 1. The rows split an index of count n into the chunk loop
(LANE_LOOP - 2, ceil(n / R)) and the rows loop; where R does not divide n, the chunk loop's last index has `idle_rows`
= R ceil(n / R) - n rows that are no elements: their lanes read nothing of a, drain nothing and draw nothing, so that
group's drain takes (R - idle_rows) L / D cycles (the groups still start max(K, L R / D) apart). The chunk loop is the
innermost loop the compute nest walks, so group g is in its last index where g mod ceil(n / R) is the last. Only the
time changes, not the values.

Preload (golden/program.py `link_preloads` chooses it): the lane buffers have two sets. An op in the lane form may
carry the next op's load walk (`preload`: its b base, counts, b strides, buffer strides and lanes); when its own
walk ends, its load nest walks the next op's b into the other set, on through the op's end and the sequencer's
gap, and the next op (`preloaded`) computes from that set without walking b again. Only the time changes:
the next op's groups wait for the words loaded since its start less the head start (`group_starts`' head).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NoReturn

from golden.arch import ADDR_W, BUF_W, CNT_W, LANE_W, MAX_OUT, MAX_RED, NLOOPS, SHIFT_W
from golden.fxp import NEAREST, STOCHASTIC

LANE_LOOP = MAX_OUT - 1  # the lane form's lane loop (an index into ContractDesc.loops): the innermost output loop


@dataclass(frozen=True)
class Loop:
    count: int
    sa: int = 0  # element strides in a, b and the output
    sb: int = 0
    so: int = 0
    index: str = ""  # the einsum letter (documentation only; "" for padding)
    sbuf: int = 0  # buffer stride in words (lane form); after `index` so that positional constructors still work


PAD = Loop(1)


@dataclass(frozen=True)
class ContractDesc:
    a_base: int
    b_base: int
    o_base: int
    out_count: int  # output elements (= product of the output loop counts)
    out_loops: tuple[Loop, ...]  # MAX_OUT loops, outer to inner
    red_loops: tuple[Loop, ...]  # MAX_RED loops, outer to inner
    shift: int  # F_a + F_b - F_out (SPEC 5.1)
    mode: int  # NEAREST 0 / STOCHASTIC 1
    accumulate: bool  # out <- SAT(out + RQ(...))
    out_w: int  # output width in bits (saturation range)
    banks: tuple[str, str, str] = ("", "", "")  # banks of a, b, out (for the sequencer; not a descriptor field)
    names: tuple[str, str, str] = field(default=("", "", ""), compare=False)  # tensors, for messages
    lanes: int = 1  # 1: the direct form; L > 1: the lane form (module docstring)
    # Preload (lane form only; module docstring): `preload` is the next op, whose b this op's load nest walks into
    # the other buffer set once its own walk is done; `preloaded` says this op's b was walked by the op before.
    preloaded: bool = False
    preload: ContractDesc | None = field(default=None, repr=False)
    vec: int = 1  # words per load beat: 1, or the bank's row of V words (vector load; module docstring)
    drain: int = 1  # elements the drain writes a cycle: 1, or an aligned run of D words (wide drain; module docstring)
    lane_sum: bool = False  # the lane loop splits the reduction (lane sum; module docstring)
    rows: bool = False  # the loop outside the lane loop gives rows of lanes (rows; module docstring)
    idle_rows: int = 0  # rows: the last rows of the rows loop that are no elements in the chunk loop's last index

    @property
    def loops(self) -> tuple[Loop, ...]:
        """All NLOOPS loops, outer to inner."""
        return self.out_loops + self.red_loops

    @property
    def red_count(self) -> int:
        return math.prod(lp.count for lp in self.red_loops)

    @property
    def sum_lanes(self) -> int:
        """R: the lanes that split each element's reduction (a lane sum's sum loop); 1 otherwise."""
        return self.out_loops[-1].count if self.lane_sum else 1

    @property
    def row_lanes(self) -> int:
        """R: the rows of lanes (rows: the rows loop's count); 1 otherwise."""
        return self.out_loops[-2].count if self.rows else 1

    @property
    def load_lanes(self) -> int:
        """The lanes the load walk numbers: one per column where each word goes to a column's R rows; all otherwise."""
        return self.lanes // self.row_lanes

    @property
    def out_lanes(self) -> int:
        """L: the output elements a group of the engine computes side by side (1 in the direct form)."""
        return self.lanes // self.sum_lanes

    @property
    def lane_loops(self) -> tuple[int, ...]:
        """The loops (indices into `loops`) the lanes walk, outer to inner: the lane loop, and in a lane sum with output
        lanes the output lane loop outside it; the compute nest holds them at 0 and the load walks them."""
        return (LANE_LOOP - 1, LANE_LOOP) if self.rows or (self.lane_sum and self.out_lanes > 1) else (LANE_LOOP,)

    @property
    def idle_elements(self) -> int:
        """Rows with idle rows: the elements their lanes would hold (idle_rows of each chunk loop's last index)."""
        return self.idle_rows * math.prod(lp.count for lp in self.out_loops[:-3]) * self.out_loops[-1].count

    @property
    def groups(self) -> int:
        """Reductions the engine runs: one per `out_lanes` output elements (rows: per L x R lanes, idle or not)."""
        return (self.out_count + self.idle_elements) // self.out_lanes

    @property
    def macs(self) -> int:
        return self.out_count * self.red_count * self.sum_lanes


def contract_fail(what: str, problem: str) -> NoReturn:
    raise ValueError(f"contract descriptor for {what}: {problem}")


def check_desc(desc: ContractDesc) -> ContractDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""
    what = f"{desc.names[2] or 'op'} <- {' x '.join(n or '?' for n in desc.names[:2])}"
    if len(desc.out_loops) != MAX_OUT or len(desc.red_loops) != MAX_RED:
        contract_fail(
            what,
            f"expected {MAX_OUT} output and {MAX_RED} reduction loops, got {len(desc.out_loops)} and "
            f"{len(desc.red_loops)}",
        )
    for i, lp in enumerate(desc.loops):
        if not 1 <= lp.count < 1 << CNT_W:
            contract_fail(
                what,
                f"loop {i} ({lp.index or 'pad'}) count {lp.count} outside 1..{(1 << CNT_W) - 1} "
                f"({CNT_W}-bit count field)",
            )
        for name, s, bits in (
            ("a", lp.sa, ADDR_W),
            ("b", lp.sb, ADDR_W),
            ("out", lp.so, ADDR_W),
            ("buffer", lp.sbuf, BUF_W),
        ):
            if not 0 <= s < 1 << bits:
                contract_fail(
                    what,
                    f"loop {i} ({lp.index or 'pad'}) {name} stride {s} outside 0..{(1 << bits) - 1} "
                    f"({bits}-bit stride field)",
                )
    for i, lp in enumerate(desc.red_loops):
        if lp.so:
            contract_fail(what, f"reduction loop {i} has output stride {lp.so}; must be 0")
    for name, base, key in (("a", desc.a_base, "sa"), ("b", desc.b_base, "sb"), ("out", desc.o_base, "so")):
        last = base + sum((lp.count - 1) * getattr(lp, key) for lp in desc.loops)
        if base < 0 or last >= 1 << ADDR_W:
            contract_fail(what, f"operand {name} spans addresses {base}..{last}, beyond the {ADDR_W}-bit address field")
    if desc.idle_rows and not (desc.rows and 0 < desc.idle_rows < desc.row_lanes):
        contract_fail(what, f"idle rows {desc.idle_rows}: only rows have them, fewer than the rows loop's count")
    elements = math.prod(lp.count for lp in desc.out_loops) // desc.sum_lanes - desc.idle_elements
    if desc.out_count != elements:
        contract_fail(
            what,
            f"out_count {desc.out_count} is not the product of the output loop counts"
            + (" without the sum loop" if desc.lane_sum else "")
            + (" less the idle rows' elements" if desc.idle_rows else ""),
        )
    if not -(1 << (SHIFT_W - 1)) <= desc.shift < 1 << (SHIFT_W - 1):
        contract_fail(what, f"shift {desc.shift} outside the {SHIFT_W}-bit shift field")
    if not 2 <= desc.out_w <= 32:
        contract_fail(what, f"output width {desc.out_w} outside 2..32")
    if desc.mode not in (NEAREST, STOCHASTIC):
        contract_fail(what, f"unknown rounding mode {desc.mode}")
    if not 1 <= desc.lanes < 1 << LANE_W:
        contract_fail(what, f"lanes {desc.lanes} outside 1..{(1 << LANE_W) - 1} ({LANE_W}-bit lanes field)")
    if (desc.preloaded or desc.preload) and desc.lanes == 1:
        contract_fail(what, "only an op in the lane form preloads or is preloaded")
    if desc.preload is not None:
        if desc.preload.lanes == 1 or desc.preload.preload is not None:
            contract_fail(what, "the preloaded op must be in the lane form, and carry no preload of its own")
        check_desc(desc.preload)
    if desc.vec != 1 and not vec_ok(desc, desc.vec):
        contract_fail(
            what,
            f"vector load of {desc.vec} words: needs the lane form with its lanes along b a multiple of it, "
            f"at stride 1 in b, and b's base and other strides multiples of it",
        )
    if desc.drain != 1 and not drain_ok(desc, desc.drain):
        contract_fail(
            what,
            f"wide drain of {desc.drain} words: needs the lane form with output lanes a multiple of it, the "
            f"output's lane loop at stride 1 and the output's base and other strides multiples of it",
        )
    if desc.rows and not rows_ok(desc):
        contract_fail(
            what,
            "rows: needs the lane form with the rows loop (count R, a power of two >= 2, lanes = R times the "
            "lane loop's count) outside the lane loop, stepping a alone at stride 1, and not a lane sum",
        )
    if desc.lane_sum and not lane_sum_ok(desc):
        contract_fail(
            what,
            "lane sum: needs the lane form with the sum loop (count R, a power of two >= 2 that divides the "
            "lanes) at output stride 0, the output lane loop outside it of count lanes / R stepping b only, "
            "and a's runs of R words aligned (the sum loop at a stride 1, a's base and other strides "
            "multiples of R)",
        )
    if desc.lanes > 1:
        lane = desc.out_loops[-1]
        if lane.count != desc.load_lanes and not desc.lane_sum:
            contract_fail(what, f"lane loop ({lane.index or 'pad'}) count {lane.count}, but lanes {desc.lanes}")
        if lane.sa and not desc.lane_sum:
            contract_fail(
                what, f"lane loop ({lane.index or 'pad'}) has a stride {lane.sa}; must be 0 (only b is laned)"
            )
        if not lane.sb:
            contract_fail(what, f"lane loop ({lane.index or 'pad'}) has b stride 0; b must step through the lanes")
    want = buffer_layout(desc.loops, desc.lane_loops)[0] if desc.lanes > 1 else (0,) * NLOOPS
    for i, (lp, s) in enumerate(zip(desc.loops, want)):
        if lp.sbuf != s:
            why = (
                "the direct form has no buffer"
                if desc.lanes == 1
                else "a lane loop"
                if i in desc.lane_loops
                else "not a buffer loop"
                if s == 0
                else "the product of the inner buffer loops' counts"
            )
            contract_fail(what, f"loop {i} ({lp.index or 'pad'}) buffer stride {lp.sbuf}; must be {s} ({why})")
    return desc


def buffer_layout(loops, lane_loops: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """(the buffer stride of every loop, words per lane buffer) of the lane form of `loops` whose lanes walk
    `lane_loops` (module docstring)."""
    sbufs, words = [0] * len(loops), 1
    for i in reversed(range(len(loops))):
        if i not in lane_loops and loops[i].sb:
            sbufs[i], words = words, words * loops[i].count
    return tuple(sbufs), words


def _aligned_runs(
    desc: ContractDesc, n: int, base: int, stride: str, loop: int = LANE_LOOP, count: int | None = None
) -> bool:
    """Whether every n consecutive indices of the lane-form `desc`'s loop `loop` (`count` of them, the lanes by
    default) address one aligned run of n consecutive words of an operand (its `base` and loop strides `stride`):
    count a multiple of n, that loop at stride 1, the base and every other stride multiples of n. n must be a power
    of two; 1 always can."""
    if n < 1 or n & (n - 1):
        return False
    if n == 1:
        return True
    count = desc.lanes if count is None else count
    return (
        desc.lanes > 1
        and count % n == 0
        and getattr(desc.loops[loop], stride) == 1
        and base % n == 0
        and all(getattr(lp, stride) % n == 0 for i, lp in enumerate(desc.loops) if i != loop)
    )


def vec_ok(desc: ContractDesc, vec: int, engine_lanes: int | None = None) -> bool:
    """Can the lane-form `desc` load b `vec` words a beat (module docstring: vector load): every beat one aligned row
    of `vec` words, all of them b's. A lane sum with R = vec loads along its sum loop (a beat is the R lanes of one
    output lane), one with R < vec along its output lane loop (vec output lanes of one r a beat: only where the
    engine's `engine_lanes` / R is a multiple of vec, so that its rows of lanes are aligned; None: any engine)."""
    if desc.rows and vec > 1:  # along the lane loop, each beat's words into every row
        return _aligned_runs(desc, vec, desc.b_base, "sb", LANE_LOOP, desc.load_lanes)
    if not desc.lane_sum or vec == 1:
        return _aligned_runs(desc, vec, desc.b_base, "sb")
    r, lanes = desc.sum_lanes, desc.out_lanes
    if r == vec:
        return _aligned_runs(desc, vec, desc.b_base, "sb", LANE_LOOP, r)
    return (
        lanes > 1
        and (engine_lanes is None or engine_lanes // r % vec == 0)
        and _aligned_runs(desc, vec, desc.b_base, "sb", LANE_LOOP - 1, lanes)
    )


def drain_ok(desc: ContractDesc, drain: int) -> bool:
    """Can the lane-form `desc` write its outputs `drain` a cycle (module docstring: wide drain): every drain beat
    one aligned run of `drain` consecutive words, all of them the op's, along its output lanes."""
    if desc.lane_sum and drain > 1:
        return desc.out_lanes > 1 and _aligned_runs(desc, drain, desc.o_base, "so", LANE_LOOP - 1, desc.out_lanes)
    if desc.rows and drain > 1:  # along each row's lanes
        return _aligned_runs(desc, drain, desc.o_base, "so", LANE_LOOP, desc.load_lanes)
    return _aligned_runs(desc, drain, desc.o_base, "so")


def lane_sum_ok(desc: ContractDesc) -> bool:
    """Is `desc` a legal lane sum (module docstring): the sum loop's count R a power of two >= 2 dividing the lanes, at
    output stride 0; with output lanes, the loop outside it of count lanes / R stepping b only; every step one aligned
    run of R words of a."""
    r = desc.out_loops[-1].count
    if desc.lanes < 2 or r < 2 or r & (r - 1) or desc.lanes % r or desc.out_loops[-1].so:
        return False
    out = desc.out_loops[-2]
    if desc.lanes > r and (out.count != desc.lanes // r or out.sa or not out.sb):
        return False
    return _aligned_runs(desc, r, desc.a_base, "sa", LANE_LOOP, r)


def rows_ok(desc: ContractDesc) -> bool:
    """Is `desc` a legal rows form (module docstring): the rows loop's count R a power of two >= 2 with lanes = R times
    the lane loop's count, stepping a alone at stride 1 (a's runs of R words may start anywhere); not a lane sum."""
    row, lane = desc.out_loops[-2], desc.out_loops[-1]
    r = row.count
    if desc.lane_sum or desc.lanes < 2 or r < 2 or r & (r - 1) or desc.lanes != r * lane.count:
        return False
    return row.sb == 0 and lane.sa == 0 and row.sa == 1


def sum_stages(desc: ContractDesc) -> int:
    """The adder tree's stages (registered) between a lane sum's lanes and its drain: log2 R; 0 else."""
    return (desc.sum_lanes - 1).bit_length()


def drain_beats(desc: ContractDesc, ragged: bool = False) -> int:
    """Cycles a group's sums take to leave the drain: its output lanes' elements, `drain` a cycle; `ragged`: a group in
    the chunk loop's last index, whose idle rows do not drain."""
    idle = desc.idle_rows * desc.out_loops[-1].count if ragged else 0
    return (desc.out_lanes - idle) // desc.drain


def buffer_words(desc: ContractDesc) -> int:
    """Words each lane's buffer holds: the product of the buffer loops' counts; 0 for the direct form (no buffer)."""
    return buffer_layout(desc.loops, desc.lane_loops)[1] if desc.lanes > 1 else 0


def _strides(indices: str, sizes: dict[str, int]) -> dict[str, int]:
    """Row-major element stride of every letter of an operand (a repeated letter, a diagonal, sums them)."""
    out: dict[str, int] = {}
    step = 1
    for c in reversed(indices):
        out[c] = out.get(c, 0) + step
        step *= sizes[c]
    return out


def spec_loops(spec: str, order: str, sizes: dict[str, int], what: str) -> tuple[tuple[Loop, ...], tuple[Loop, ...]]:
    """The output loops (in the element order `order`) and reduction loops of an einsum `spec`, padded."""
    lhs, out_idx = spec.split("->")
    ia, ib = lhs.split(",")
    red_idx = "".join(c for c in dict.fromkeys(ia + ib) if c not in out_idx)
    if len(out_idx) > MAX_OUT:
        contract_fail(what, f"{len(out_idx)} output loops, the descriptor has {MAX_OUT}")
    if len(red_idx) > MAX_RED:
        contract_fail(what, f"{len(red_idx)} reduction loops, the descriptor has {MAX_RED}")
    if sorted(order) != sorted(out_idx):
        contract_fail(what, f"element order {order!r} is not a permutation of the output indices {out_idx!r}")
    st_a, st_b, st_o = _strides(ia, sizes), _strides(ib, sizes), _strides(out_idx, sizes)

    def loop(c: str) -> Loop:
        return Loop(sizes[c], st_a.get(c, 0), st_b.get(c, 0), st_o.get(c, 0), c)

    return (
        (PAD,) * (MAX_OUT - len(out_idx)) + tuple(loop(c) for c in order),
        (PAD,) * (MAX_RED - len(red_idx)) + tuple(loop(c) for c in red_idx),
    )


def _pack_loops(desc: ContractDesc) -> dict[str, int]:
    """The loop fields as packed buses, loop 0 the innermost (the innermost reduction loop)."""
    inner_first = list(reversed(desc.red_loops)) + list(reversed(desc.out_loops))
    counts = sa = sb = so = sbuf = 0
    for i, lp in enumerate(inner_first):
        counts |= lp.count << (CNT_W * i)
        sa |= lp.sa << (ADDR_W * i)
        sb |= lp.sb << (ADDR_W * i)
        so |= lp.so << (ADDR_W * i)
        sbuf |= lp.sbuf << (BUF_W * i)
    return {"counts": counts, "stride_a": sa, "stride_b": sb, "stride_o": so, "stride_buf": sbuf}


def pack_ports(desc: ContractDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_contract.v): packed buses with loop 0 the innermost
    (the innermost reduction loop), loops 0..MAX_RED-1 the reductions, MAX_RED..NLOOPS-1 the output loops. The
    preload's fields are the next op's b walk (pre_lanes 0: no preload)."""
    nxt = _pack_loops(desc.preload) if desc.preload else {}
    return {
        "a_base": desc.a_base,
        "b_base": desc.b_base,
        "o_base": desc.o_base,
        **_pack_loops(desc),
        "shift": desc.shift & ((1 << SHIFT_W) - 1),
        "mode": desc.mode,
        "accumulate": int(desc.accumulate),
        "out_w": desc.out_w,
        "lanes": desc.lanes,
        "preloaded": int(desc.preloaded),
        "vec_load": int(desc.vec > 1),
        "vec_store": int(desc.drain > 1),
        "lane_sum": int(desc.lane_sum),
        "pre_vec_load": int(desc.preload.vec > 1) if desc.preload else 0,
        "pre_lane_sum": int(desc.preload.lane_sum) if desc.preload else 0,
        "rows": int(desc.rows),
        "pre_rows": int(desc.preload.rows) if desc.preload else 0,
        "idle_rows": desc.idle_rows,
        "pre_lanes": desc.preload.lanes if desc.preload else 0,
        "pre_b_base": desc.preload.b_base if desc.preload else 0,
        "pre_counts": nxt.get("counts", 0),
        "pre_stride_b": nxt.get("stride_b", 0),
        "pre_stride_buf": nxt.get("stride_buf", 0),
    }
