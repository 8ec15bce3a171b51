"""Lowering of compiled ops to the accelerator's op descriptors, and a plain reference of each descriptor.

One descriptor class per unit: `ContractDesc` (CONTRACT, SPEC 5.1, rtl/tt_contract.v; this docstring), then in
sections of their own `EwiseDesc` (rtl/tt_ewise.v), `SceDesc` (rtl/tt_sce.v) and `RankDesc` (rtl/tt_rank.v). A
contraction's descriptor is a loop nest over element addresses, nothing else: the engine knows no einsum, no tensor
and no format.

Loop nest: up to MAX_OUT output loops (outer to inner, the output indices in the op's element order, SPEC 5.1:
the order the spec writes them, a row-major walk of the output, unless the compiler gives the op another
order; the output strides stay those of the output's row-major layout), then up to MAX_RED reduction
loops (the contracted indices in first-appearance order in operand a, then b). Each loop has a count >= 1 and
three strides in elements (a, b, out); a stride is 0 where the index is absent from that operand (the output
strides of reduction loops are always 0). Unused loops have count 1 and strides 0 and sit on the outer side of
their group, so the innermost slot of each group is always a real loop (or both are padding).

Field widths (what the RTL's ports hold; `lower_contract` raises ValueError naming the field that overflows):
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
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import numpy as np

from golden import fxp
from golden.fxp import NEAREST, STOCHASTIC, Fmt
from golden.machine import ADAM_DELTA_FMT, adam_eps_q, adam_h_range, axpby_fc, penalty_fc, rsqrt_parts

MAX_OUT = 6  # output loops of a descriptor
MAX_RED = 4  # reduction loops
NLOOPS = MAX_OUT + MAX_RED
CNT_W = 16  # loop count field, unsigned
ADDR_W = 20  # base address and stride fields, unsigned element addresses
SHIFT_W = 7  # shift field, two's complement
OUT_W_W = 6  # output width field (2..32)
LANE_LOOP = MAX_OUT - 1  # the lane form's lane loop (an index into ContractDesc.loops): the innermost output loop
LANE_W = 8  # lanes field, unsigned (1..255)
BUF_W = 12  # buffer stride field, unsigned
IDLE_W = 4  # idle rows field, unsigned (below the rows loop's count R <= 16)


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


def _fail(what: str, problem: str):
    raise ValueError(f"contract descriptor for {what}: {problem}")


def check_desc(desc: ContractDesc) -> ContractDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""
    what = f"{desc.names[2] or 'op'} <- {' x '.join(n or '?' for n in desc.names[:2])}"
    if len(desc.out_loops) != MAX_OUT or len(desc.red_loops) != MAX_RED:
        _fail(
            what,
            f"expected {MAX_OUT} output and {MAX_RED} reduction loops, got {len(desc.out_loops)} and "
            f"{len(desc.red_loops)}",
        )
    for i, lp in enumerate(desc.loops):
        if not 1 <= lp.count < 1 << CNT_W:
            _fail(
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
                _fail(
                    what,
                    f"loop {i} ({lp.index or 'pad'}) {name} stride {s} outside 0..{(1 << bits) - 1} "
                    f"({bits}-bit stride field)",
                )
    for i, lp in enumerate(desc.red_loops):
        if lp.so:
            _fail(what, f"reduction loop {i} has output stride {lp.so}; must be 0")
    for name, base, key in (("a", desc.a_base, "sa"), ("b", desc.b_base, "sb"), ("out", desc.o_base, "so")):
        last = base + sum((lp.count - 1) * getattr(lp, key) for lp in desc.loops)
        if base < 0 or last >= 1 << ADDR_W:
            _fail(what, f"operand {name} spans addresses {base}..{last}, beyond the {ADDR_W}-bit address field")
    if desc.idle_rows and not (desc.rows and 0 < desc.idle_rows < desc.row_lanes):
        _fail(what, f"idle rows {desc.idle_rows}: only rows have them, fewer than the rows loop's count")
    elements = math.prod(lp.count for lp in desc.out_loops) // desc.sum_lanes - desc.idle_elements
    if desc.out_count != elements:
        _fail(
            what,
            f"out_count {desc.out_count} is not the product of the output loop counts"
            + (" without the sum loop" if desc.lane_sum else "")
            + (" less the idle rows' elements" if desc.idle_rows else ""),
        )
    if not -(1 << (SHIFT_W - 1)) <= desc.shift < 1 << (SHIFT_W - 1):
        _fail(what, f"shift {desc.shift} outside the {SHIFT_W}-bit shift field")
    if not 2 <= desc.out_w <= 32:
        _fail(what, f"output width {desc.out_w} outside 2..32")
    if desc.mode not in (NEAREST, STOCHASTIC):
        _fail(what, f"unknown rounding mode {desc.mode}")
    if not 1 <= desc.lanes < 1 << LANE_W:
        _fail(what, f"lanes {desc.lanes} outside 1..{(1 << LANE_W) - 1} ({LANE_W}-bit lanes field)")
    if (desc.preloaded or desc.preload) and desc.lanes == 1:
        _fail(what, "only an op in the lane form preloads or is preloaded")
    if desc.preload is not None:
        if desc.preload.lanes == 1 or desc.preload.preload is not None:
            _fail(what, "the preloaded op must be in the lane form, and carry no preload of its own")
        check_desc(desc.preload)
    if desc.vec != 1 and not vec_ok(desc, desc.vec):
        _fail(
            what,
            f"vector load of {desc.vec} words: needs the lane form with its lanes along b a multiple of it, "
            f"at stride 1 in b, and b's base and other strides multiples of it",
        )
    if desc.drain != 1 and not drain_ok(desc, desc.drain):
        _fail(
            what,
            f"wide drain of {desc.drain} words: needs the lane form with output lanes a multiple of it, the "
            f"output's lane loop at stride 1 and the output's base and other strides multiples of it",
        )
    if desc.rows and not rows_ok(desc):
        _fail(
            what,
            "rows: needs the lane form with the rows loop (count R, a power of two >= 2, lanes = R times the "
            "lane loop's count) outside the lane loop, stepping a alone at stride 1, and not a lane sum",
        )
    if desc.lane_sum and not lane_sum_ok(desc):
        _fail(
            what,
            "lane sum: needs the lane form with the sum loop (count R, a power of two >= 2 that divides the "
            "lanes) at output stride 0, the output lane loop outside it of count lanes / R stepping b only, "
            "and a's runs of R words aligned (the sum loop at a stride 1, a's base and other strides "
            "multiples of R)",
        )
    if desc.lanes > 1:
        lane = desc.out_loops[-1]
        if lane.count != desc.load_lanes and not desc.lane_sum:
            _fail(what, f"lane loop ({lane.index or 'pad'}) count {lane.count}, but lanes {desc.lanes}")
        if lane.sa and not desc.lane_sum:
            _fail(what, f"lane loop ({lane.index or 'pad'}) has a stride {lane.sa}; must be 0 (only b is laned)")
        if not lane.sb:
            _fail(what, f"lane loop ({lane.index or 'pad'}) has b stride 0; b must step through the lanes")
    want = _buffer_layout(desc.loops, desc.lane_loops)[0] if desc.lanes > 1 else (0,) * NLOOPS
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
            _fail(what, f"loop {i} ({lp.index or 'pad'}) buffer stride {lp.sbuf}; must be {s} ({why})")
    return desc


def _buffer_layout(loops, lane_loops: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
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
    return _buffer_layout(desc.loops, desc.lane_loops)[1] if desc.lanes > 1 else 0


MEM_LAT = 6  # rtl/tt_accel.v's bank read latency (MEM_PIPE = 2)
MAC_REG = 2  # tt_contract's registers in the multiply: the operands and the product
SLICE_LAT = 1  # tt_contract's register slice between the compute nest and the issue (rtl/tt_skid.v)


def contract_cycles(desc: ContractDesc, mem_lat: int = MEM_LAT, mac_reg: int = MAC_REG, head: int = 0) -> int:
    """rtl/tt_contract.v's cycles from start to done of a legal op (its block test checks them): the check cycle,
    then the compute beats, the first SLICE_LAT cycles after the compute nest's first cycle (the beats pass a
    register slice on their way to the issue). A group of L outputs takes max(K, L / D) cycles (K reduction steps;
    the drain takes L / D, D = desc.drain; a lane sum's group of one output max(K, 1)), the last one K; the last
    group's sums reach the drain mem_lat + 1 + mac_reg cycles after its last beat (a lane sum's log2 L stages of
    the adder tree later), leave it over L / D cycles, wait mem_lat for the old word, 3 in the requantiser and 4 to
    the write and done.
    In the lane form the load runs beside the compute, a beat a cycle (one b word, or with a vector load one word
    for each of vec lanes) from the compute nest's first cycle,
    a slice (one index of the output loops b has besides the lane loop: every lane's words of one group) after
    another; a group starts only once its slice is in every lane, mem_lat + 1 cycles after the slice's last load
    beat. The direct form is the lane form with L = 1 and nothing to wait for. `head`: a preloaded op's head start
    (group_starts)."""
    return 1 + int(group_starts(desc, mem_lat, head)[-1]) + _tail(desc, mem_lat, mac_reg)


def load_beats(desc: ContractDesc) -> int:
    """The beats of a lane-form op's load walk: every lane's buffer words (a column's in rows), `vec` lanes' at a
    time."""
    return desc.load_lanes // desc.vec * buffer_words(desc)


def preload_start(desc: ContractDesc, head: int = 0) -> int:
    """When the preload walk of `desc` (desc.preload) issues its first beat, in cycles from the op's compute nest's
    first cycle: two cycles after its own walk's last beat (the load nest takes the preload's configuration, then
    restarts), and not before the op's second cycle; `head` as in group_starts (a preloaded op's own walk began
    before it started)."""
    return max(load_beats(desc) + 1 - head, 1)


def _tail(desc: ContractDesc, mem_lat: int, mac_reg: int) -> int:
    """contract_cycles after the last group's first beat: its beats, a lane sum's adder tree, the drain (rows with idle
    rows: the last group is in the chunk loop's last index), the old word, requant and write."""
    return desc.red_count + sum_stages(desc) + drain_beats(desc, ragged=True) + 2 * mem_lat + mac_reg + 8


def contract_losses(
    desc: ContractDesc, lanes: int, mem_lat: int = MEM_LAT, mac_reg: int = MAC_REG, head: int = 0
) -> dict:
    """Where contract_cycles(desc) goes on an engine of `lanes` MAC lanes, as cycles that sum to it: the ideal
    (MACs / lanes); fewer lanes than the engine's (the direct form, a lane loop shorter than `lanes`, or idle rows);
    the wait for the lane buffers' load (group_starts); groups shorter than their drain (L / D cycles: D elements a
    cycle); and the pipeline's fill and drain with the check cycle."""
    k = desc.red_count
    groups, step = desc.groups, max(k, drain_beats(desc))
    unhindered = 1 + SLICE_LAT + (groups - 1) * step + _tail(desc, mem_lat, mac_reg)  # no group waits for its slice
    drain = groups * (step - k)
    return {
        "ideal": desc.macs / lanes,
        "lanes_short": groups * k - desc.macs / lanes,
        "load_wait": contract_cycles(desc, mem_lat, mac_reg, head) - unhindered,
        "drain_bound": drain,
        "fill": unhindered - groups * k - drain,
    }


def group_starts(desc: ContractDesc, mem_lat: int = MEM_LAT, head: int = 0) -> np.ndarray:
    """The cycle each group's first beat issues, counted from the compute nest's first cycle (contract_cycles): the
    first SLICE_LAT cycles later (the beat's way through the register slice), each later one max(K, drain_beats)
    after the previous group's, and in the lane form not before its slice is loaded. The load walk's beat j issues in
    cycle
    j - head: head 0 for an op that walks its own b, the head start of a preloaded one (its predecessor's preload walk
    issued its first beat `head` cycles before this op's compute nest's first cycle)."""
    step = max(desc.red_count, drain_beats(desc))
    g = np.arange(desc.groups) * step + SLICE_LAT
    if desc.lanes == 1:
        return g
    slice_words = math.prod(lp.count for lp in desc.red_loops if lp.sb)
    counts = [1 if i in desc.lane_loops or i >= MAX_OUT else lp.count for i, lp in enumerate(desc.loops)]
    first_word = _nest(desc, counts)[4]  # every group's first buffer word, in group order
    ready = (first_word // slice_words + 1) * (desc.load_lanes // desc.vec) * slice_words + mem_lat - head
    return g + np.maximum.accumulate(np.maximum(ready - g, 0))


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
    sbufs, words = _buffer_layout(lane_desc.loops, lane_desc.lane_loops)
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


def _strides(indices: str, sizes: dict[str, int]) -> dict[str, int]:
    """Row-major element stride of every letter of an operand (a repeated letter, a diagonal, sums them)."""
    out: dict[str, int] = {}
    step = 1
    for c in reversed(indices):
        out[c] = out.get(c, 0) + step
        step *= sizes[c]
    return out


def _spec_loops(spec: str, order: str, sizes: dict[str, int], what: str) -> tuple[tuple[Loop, ...], tuple[Loop, ...]]:
    """The output loops (in the element order `order`) and reduction loops of an einsum `spec`, padded."""
    lhs, out_idx = spec.split("->")
    ia, ib = lhs.split(",")
    red_idx = "".join(c for c in dict.fromkeys(ia + ib) if c not in out_idx)
    if len(out_idx) > MAX_OUT:
        _fail(what, f"{len(out_idx)} output loops, the descriptor has {MAX_OUT}")
    if len(red_idx) > MAX_RED:
        _fail(what, f"{len(red_idx)} reduction loops, the descriptor has {MAX_RED}")
    if sorted(order) != sorted(out_idx):
        _fail(what, f"element order {order!r} is not a permutation of the output indices {out_idx!r}")
    st_a, st_b, st_o = _strides(ia, sizes), _strides(ib, sizes), _strides(out_idx, sizes)

    def loop(c: str) -> Loop:
        return Loop(sizes[c], st_a.get(c, 0), st_b.get(c, 0), st_o.get(c, 0), c)

    return (
        (PAD,) * (MAX_OUT - len(out_idx)) + tuple(loop(c) for c in order),
        (PAD,) * (MAX_RED - len(red_idx)) + tuple(loop(c) for c in red_idx),
    )


def spec_cycles(
    spec: str, order: str, sizes: dict[str, int], lanes: int, buf_depth: int, vec: int = 1, drain: int = 1
) -> int:
    """contract_cycles of a contraction given by its einsum and element order alone (the compiler's layout choice,
    golden/compiler.py refine_layouts), on an engine of `lanes` MAC lanes, `buf_depth` buffer words, vector loads of
    `vec` words and a drain of `drain` (every bank in rows, the operands at row boundaries); raises ValueError where
    the nest does not fit a descriptor."""
    out_loops, red_loops = _spec_loops(spec, order, sizes, spec)
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


def lower_contract(comp, op, frac: dict[str, int]) -> ContractDesc:
    """The descriptor of one compiled contract op with the current fraction bits `frac` (like Machine.frac).

    Operand bases are the layout addresses (a per-sample tensor: its address for the one sample in flight).
    Raises ValueError when the loop nest or a field does not fit the descriptor.
    """
    if op.kind != "contract":
        raise ValueError(f"op {op.kind} -> {op.out} is not a contraction")
    a, b = op.ins
    names = (a, b, op.out)
    what = f"{op.out} <- {a} x {b} ({op.spec})"
    lhs, out_idx = op.spec.split("->")
    ia, ib = lhs.split(",")
    sizes = comp.letter_sizes
    if len(set(out_idx)) != len(out_idx):
        _fail(what, "an output index is repeated")
    if set(out_idx) - set(ia + ib):
        _fail(what, "an output index appears in neither operand")
    for name, idx in zip(names, (ia, ib, out_idx)):
        n = math.prod(sizes[c] for c in idx)
        if n != comp.tensors[name].size:
            _fail(what, f"tensor {name} has {comp.tensors[name].size} elements, its indices {idx!r} give {n}")
    out_loops, red_loops = _spec_loops(op.spec, op.element_order(), sizes, what)
    out_t = comp.tensors[op.out]
    persistent = not out_t.per_sample
    if bool(op.accumulate) != persistent:
        # The machine accumulates exactly into persistent buffers (gradients): the flag must say so.
        _fail(what, f"accumulate={op.accumulate} but the output is {'persistent' if persistent else 'per-sample'}")
    bank = tuple(comp.layout[n][0] for n in names)
    base = tuple(comp.layout[n][1] for n in names)
    desc = ContractDesc(
        a_base=base[0],
        b_base=base[1],
        o_base=base[2],
        out_count=out_t.size,
        out_loops=out_loops,
        red_loops=red_loops,
        shift=frac[a] + frac[b] - frac[op.out],
        mode=op.mode,
        accumulate=bool(op.accumulate),
        out_w=out_t.fmt.width,
        banks=bank,
        names=names,
    )
    return check_desc(desc)


def _nest(desc: ContractDesc, counts) -> tuple[Any, ...]:
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
    _, a, b, o, _, first, last = _nest(desc, [lp.count for lp in desc.loops])
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
    idx, _, b, _, buf, _, _ = _nest(desc, [lp.count if lp.sb else 1 for lp in loops])
    lane = np.zeros_like(b)
    for i in desc.lane_loops:
        lane = lane * loops[i].count + idx[i]
    load = zip(b.tolist(), lane.tolist(), buf.tolist())
    _, a, _, o, buf, first, last = _nest(desc, [1 if i in desc.lane_loops else lp.count for i, lp in enumerate(loops)])
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


__all__ = [
    "ContractDesc",
    "Loop",
    "lower_contract",
    "execute_desc",
    "desc_beats",
    "lane_beats",
    "check_desc",
    "pack_ports",
    "with_lanes",
    "row_forms",
    "lane_offsets",
    "live_lanes",
    "vec_ok",
    "drain_ok",
    "lane_sum_ok",
    "rows_ok",
    "drain_beats",
    "sum_stages",
    "buffer_words",
    "load_beats",
    "preload_start",
    "contract_cycles",
    "contract_losses",
    "spec_cycles",
    "MEM_LAT",
    "SLICE_LAT",
    "MAC_REG",
    "MAX_OUT",
    "MAX_RED",
    "NLOOPS",
    "CNT_W",
    "ADDR_W",
    "SHIFT_W",
    "LANE_W",
    "BUF_W",
    "IDLE_W",
    "LANE_LOOP",
]


# === Element-wise unit (rtl/tt_ewise.v) =====================================================================
# One `EwiseDesc` per compiled op of kind axpby, acc, axpby_relu, relu_bwd, derive, zero, mask, penalty, adam_v or
# adam_step (SPEC 5.2, 5.3, 5.5, 5.6). Every op is one datapath, element i = 0 .. count-1 in address order (x, z
# and y at base + i):
#   t = A(alpha * x_i, align_x) + A(beta * z_i, align_z)
#       A(p, e): p * 2^e for e >= 0, floor((p + 2^(-e-1)) / 2^-e) else
#   y = SAT_y(RQ(gate_i ? t : 0, shift, mode))              [ACC: y = SAT_y(old_y_i + y)]
#   [AXPBY_RELU: the word written is max(y, 0); the saturations and max |y| are y's, before the ReLU]
# The z term is formed by AXPBY and AXPBY_RELU only; the x term by every op but ZERO. gate_i is 1, except
# RELU_BWD: z_i > 0 (z is the saved activation h); MASK: mask_left[r_prev] and mask_right[r_next] with element
# i = (r_prev, m*n, r_next) of a core of shape (r0, m*n, r1); ZERO: 0. The engine knows no tensor and no
# format: the lowering turns fraction bits into the alignments and the shift.
#   AXPBY, AXPBY_RELU (SPEC 5.2, 5.3): Fc = axpby_fc(...), align_x = Fc - (F_alpha + F_x), align_z = Fc - (F_beta +
#   F_z), shift Fc - F_y.
#   ACC: alpha 1, shift F_src - F_out, accumulate. DERIVE: alpha 1, shift F_w - F_c, NEAREST.
#   RELU_BWD, MASK: alpha 1, shift 0, NEAREST (exact, no draw). ZERO: alpha 0, no read.
#   ADAM_V (SPEC 5.5 step 2): x = v, z = g, and the z term is beta * z_i^2 (exact): AXPBY's alignment rule with
#     z's width taken as 2 z_w - 1 (|z^2| <= 2^(2 z_w - 2)).
#   ADAM_STEP (SPEC 5.5 step 3): x = m, z = v, y = w; alpha is the host's step size lr_t, beta the epsilon eps_q
#     (>= 1), align_z the fraction bits F_v of v. Per element: u = max(z_i, 0) + eps_q, (RSQRT[idx], h) =
#     rsqrt_parts(u, F_v) (golden.machine), t = A(alpha * x_i * RSQRT[idx], align_x) (the lowering gives align_x 0),
#     delta = SAT_16(RQ(t, shift + h, mode)), y = SAT_y(old_y_i - delta). Only the last clamp counts (as in the
#     golden machine). The x term's width is x_w + 14 (RSQRT < 2^14).
# mode STOCHASTIC consumes one draw per element, in element order (SPEC 2.2); NEAREST none.
#
# Fields (ValueError from `check_ewise` names the one that does not fit): opcode EW_OP_W = 4 bits; count,
# bases and m*n ADDR_W = 20 bits unsigned (count >= 1; the last element of every operand addressable); alpha,
# beta EW_CONST_W = 16 bits two's complement; align_x, align_z and shift EW_ALIGN_W = SHIFT_W = 7 bits two's
# complement; mode 1 bit; x_w, z_w, y_w OUT_W_W = 6 bits (0 for an operand the op does not read); r0, r1
# EW_RANK_W = 5 bits; MASK and PENALTY also tab_left, tab_right (ADDR_W bits) and tab_on (2 bits): where their
# bonds' MASK or TAU words sit, read when the op starts (ewise_tables).
# Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_ewise` a ValueError; see
# `ewise_error`): 1 shift outside -16..47; 2 y_w outside 2..OUT_W or a used x_w / z_w outside 2..X_W / Z_W;
# 3 count 0, or a MASK / PENALTY with r0 or r1 outside 1..EW_MASK_N or m*n = 0; 4 a used alignment below -47 or
# with width + align > ACC_W - 17 (then |alpha x 2^align| <= 2^(15 + x_w - 1 + align) <= 2^45, and PENALTY's 17-bit
# tau sum gives |z term| <= 2^46, so the sum of the two terms always fits the 48-bit accumulator; an op that forms the
# x term alone may go one higher, to 2^46: MASK over Adam's 32-bit v); 5 unknown opcode
# (ADAM_V and ADAM_STEP too, on a unit built without Adam); 6 ADAM_STEP with eps_q < 1. Adam's own limits: ADAM_V
# needs z_w <= 16 and ADAM_STEP x_w <= 17 (code 2; the unit's 18-bit squarer), ADAM_STEP's element shifts shift + h
# must lie in -16..47 for every h its v can give (code 1; golden.machine.adam_h_range). Several: the lowest code.


EW_AXPBY, EW_ACC, EW_AXPBY_RELU, EW_RELU_BWD, EW_DERIVE, EW_ZERO, EW_MASK, EW_PENALTY, EW_ADAM_V, EW_ADAM_STEP = range(
    10
)
EW_OPCODES = {
    "axpby": EW_AXPBY,
    "acc": EW_ACC,
    "axpby_relu": EW_AXPBY_RELU,
    "relu_bwd": EW_RELU_BWD,
    "derive": EW_DERIVE,
    "zero": EW_ZERO,
    "mask": EW_MASK,
    "penalty": EW_PENALTY,
    "adam_v": EW_ADAM_V,
    "adam_step": EW_ADAM_STEP,
}
EW_CORE_OPS = (EW_MASK, EW_PENALTY)  # ops over a core (r0, m*n, r1) that index its rank slices
EW_ADAM_OPS = (EW_ADAM_V, EW_ADAM_STEP)  # built only with the unit's ADAM parameter
EW_OP_W = 4  # opcode field
EW_CONST_W = 16  # alpha, beta: signed
EW_ALIGN_W = 7  # align_x, align_z: signed
EW_RANK_W = 5  # r0, r1
EW_MASK_N = 16  # table entries (masks or taus) per side, the largest rank (rtl/tt_ewise.v MASK_N)
EW_PORT_W = 16  # data width of the RTL's read and write ports (X_W, Z_W, OUT_W)
EW_WIDEST = 32  # the widest ports the unit can be built with
EW_ALIGN_MIN = -47  # a right shift by 47 leaves 0 or -1 of any product
EW_ALIGN_TOP = fxp.ACC_W - 17  # width + align <= 31: each term below 2^45 in magnitude
EW_ERR_SHIFT, EW_ERR_WIDTH, EW_ERR_COUNT, EW_ERR_ALIGN, EW_ERR_OPCODE, EW_ERR_EPS = 1, 2, 3, 4, 5, 6
EW_ADAM_Z_W = 16  # ADAM_V: the widest g its squarer takes
EW_ADAM_X_W = 17  # ADAM_STEP: the widest m its multiplier by RSQRT takes
EW_RSQRT_W = 14  # RSQRT entries are below 2^14
EW_EPS_MAX = (1 << (EW_CONST_W - 1)) - 1  # ADAM_STEP's eps_q rides in beta


@dataclass(frozen=True)
class EwiseDesc:
    opcode: int
    count: int  # elements
    x_base: int
    z_base: int
    y_base: int
    alpha: int  # 16-bit signed constants
    beta: int
    align_x: int  # alignment of alpha * x: left shift if >= 0, floor right shift by -align_x if < 0
    align_z: int
    shift: int  # RQ shift (SPEC 2.1)
    mode: int  # NEAREST 0 / STOCHASTIC 1 (one draw per element)
    x_w: int  # widths in bits: x and z for the accumulator bound, y the saturation range
    z_w: int
    y_w: int
    shape: tuple[int, int, int] = (1, 1, 1)  # MASK, PENALTY: the core as (r0, m*n, r1); other ops (1, count, 1)
    # MASK, PENALTY: the bonds' tables the unit reads (on its x port) before the elements: r0 words from tab_left
    # (MASK: live where the word is not 0; PENALTY: the taus, 16-bit signed) if tab_on bit 0, r1 words from
    # tab_right if bit 1; an absent side has every slice live and every tau 0.
    tab_left: int = 0
    tab_right: int = 0
    tab_on: int = 0
    banks: tuple[str, str, str] = ("", "", "")  # banks of x, z, y (for the sequencer; not a descriptor field)
    tab_banks: tuple[str, str] = ("", "")  # banks of the two tables (likewise)
    names: tuple[str, str, str] = field(default=("", "", ""), compare=False)  # tensors x, z, y, for messages
    tables: tuple[str, str] = field(default=("", ""), compare=False)  # the MASK or TAU tensors, "" = absent

    @property
    def table_words(self) -> int:
        """Words read before the elements (MASK, PENALTY): the present sides' ranks."""
        if self.opcode not in EW_CORE_OPS:
            return 0
        r0, _, r1 = self.shape
        return (r0 if self.tab_on & 1 else 0) + (r1 if self.tab_on & 2 else 0)

    @property
    def reads_x(self) -> bool:
        """The x term is formed (every known op but ZERO)."""
        return self.opcode in EW_OPCODES.values() and self.opcode != EW_ZERO

    @property
    def z_term(self) -> bool:
        """The z term is formed: beta * z (AXPBY), (tau_left[r_prev] + tau_right[r_next]) * z (PENALTY) or
        beta * z^2 (ADAM_V)."""
        return self.opcode in (EW_AXPBY, EW_AXPBY_RELU, EW_PENALTY, EW_ADAM_V)

    @property
    def reads_z(self) -> bool:
        return self.z_term or self.opcode in (EW_RELU_BWD, EW_ADAM_STEP)

    @property
    def accumulate(self) -> bool:
        return self.opcode == EW_ACC

    @property
    def reads_old(self) -> bool:
        """The destination's old word is read: ACC adds to it, ADAM_STEP subtracts from it."""
        return self.opcode in (EW_ACC, EW_ADAM_STEP)

    @property
    def term_widths(self) -> tuple[int, int]:
        """The widths the accumulator bound takes for the x and z terms' operands (0: no such term)."""
        x = self.x_w + EW_RSQRT_W if self.opcode == EW_ADAM_STEP else self.x_w
        z = 2 * self.z_w - 1 if self.opcode == EW_ADAM_V else self.z_w
        return (x if self.reads_x else 0), (z if self.z_term else 0)

    @property
    def draws(self) -> int:
        return self.count if self.mode == STOCHASTIC else 0


def _ewfail(what: str, problem: str) -> NoReturn:
    raise ValueError(f"ewise descriptor for {what}: {problem}")


def _ew_what(desc: EwiseDesc) -> str:
    kind = {v: k for k, v in EW_OPCODES.items()}.get(desc.opcode, f"opcode {desc.opcode}")
    return f"{kind} {desc.names[2] or 'op'} <- {', '.join(n for n in desc.names[:2] if n) or '-'}"


def check_ewise(desc: EwiseDesc) -> EwiseDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""
    what = _ew_what(desc)

    def unsigned(name, v, bits, lo=0):
        if not lo <= v < 1 << bits:
            _ewfail(what, f"{name} {v} outside {lo}..{(1 << bits) - 1} ({bits}-bit field)")

    def signed(name, v, bits):
        if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
            _ewfail(what, f"{name} {v} outside the {bits}-bit two's complement field")

    unsigned("opcode", desc.opcode, EW_OP_W)
    unsigned("count", desc.count, ADDR_W, lo=1)
    for name, base, used in (
        ("x", desc.x_base, desc.reads_x),
        ("z", desc.z_base, desc.reads_z),
        ("y", desc.y_base, True),
    ):
        unsigned(f"{name}_base", base, ADDR_W)
        if used and base + desc.count - 1 >= 1 << ADDR_W:
            _ewfail(
                what,
                f"operand {name} spans addresses {base}..{base + desc.count - 1}, beyond the "
                f"{ADDR_W}-bit address field",
            )
    signed("alpha", desc.alpha, EW_CONST_W)
    signed("beta", desc.beta, EW_CONST_W)
    signed("align_x", desc.align_x, EW_ALIGN_W)
    signed("align_z", desc.align_z, EW_ALIGN_W)
    signed("shift", desc.shift, SHIFT_W)
    unsigned("mode", desc.mode, 1)
    for name in ("x_w", "z_w", "y_w"):
        unsigned(name, getattr(desc, name), OUT_W_W)
    r0, mn, r1 = desc.shape
    unsigned("r0", r0, EW_RANK_W)
    unsigned("m*n", mn, ADDR_W)
    unsigned("r1", r1, EW_RANK_W)
    unsigned("tab_on", desc.tab_on, 2)
    for name, base, bit, n in (("tab_left", desc.tab_left, 1, r0), ("tab_right", desc.tab_right, 2, r1)):
        unsigned(name, base, ADDR_W)
        if desc.tab_on & bit and base + n - 1 >= 1 << ADDR_W:
            _ewfail(what, f"{name} {base} + {n} words goes beyond the {ADDR_W}-bit address field")
    if desc.opcode not in EW_CORE_OPS and (desc.tab_on or desc.tab_left or desc.tab_right):
        _ewfail(what, "tables given to an op that reads none")
    if desc.opcode in EW_CORE_OPS and r0 * mn * r1 != desc.count:
        _ewfail(what, f"shape {desc.shape} has {r0 * mn * r1} elements, count is {desc.count}")
    return desc


def ewise_error(
    desc: EwiseDesc,
    x_w_max: int = EW_PORT_W,
    z_w_max: int = EW_PORT_W,
    out_w_max: int = EW_PORT_W,
    adam: bool = False,
    rank: bool = True,
) -> tuple[int, str]:
    """The RTL's start-time check: (error code, reason), (0, "") for a legal descriptor. The *_max are the RTL's
    port widths X_W, Z_W, OUT_W; `adam`: the unit was built with the Adam ops (its ADAM parameter); `rank`: with
    MASK and PENALTY (its RANK parameter)."""
    r0, mn, r1 = desc.shape
    op = desc.opcode
    known = (
        op in EW_OPCODES.values() and (adam or op not in EW_ADAM_OPS) and (rank or op not in EW_CORE_OPS)
    )  # an unknown opcode forms no term
    x_max = min(x_w_max, EW_ADAM_X_W) if op == EW_ADAM_STEP else x_w_max
    z_max = min(z_w_max, EW_ADAM_Z_W) if op == EW_ADAM_V else z_w_max
    wx, wz = desc.term_widths
    widths = [("x", desc.x_w, x_max)] if known and desc.reads_x else []
    widths += [("z", desc.z_w, z_max)] if known and (desc.z_term or op == EW_ADAM_STEP) else []
    terms = [("x", wx, desc.align_x)] if known and desc.reads_x else []
    terms += [("z", wz, desc.align_z)] if known and desc.z_term else []
    if not fxp.SHIFT_MIN <= desc.shift <= fxp.SHIFT_MAX:
        return EW_ERR_SHIFT, f"shift {desc.shift} outside {fxp.SHIFT_MIN}..{fxp.SHIFT_MAX}"
    if known and op == EW_ADAM_STEP:
        h_lo, h_hi = adam_h_range(desc.z_w, desc.align_z)
        if desc.shift + h_lo < fxp.SHIFT_MIN or desc.shift + h_hi > fxp.SHIFT_MAX:
            return EW_ERR_SHIFT, (
                f"adam step shift {desc.shift} + h in {h_lo}..{h_hi} (v: {desc.z_w} bits, "
                f"F_v {desc.align_z}) leaves {fxp.SHIFT_MIN}..{fxp.SHIFT_MAX}"
            )
    if not 2 <= desc.y_w <= out_w_max:
        return EW_ERR_WIDTH, f"y_w {desc.y_w} outside 2..{out_w_max}"
    for name, w, w_max in widths:
        if not 2 <= w <= w_max:
            return EW_ERR_WIDTH, f"{name}_w {w} outside 2..{w_max}"
    if desc.count == 0:
        return EW_ERR_COUNT, "count 0"
    if known and op in EW_CORE_OPS and not (1 <= r0 <= EW_MASK_N and 1 <= r1 <= EW_MASK_N and mn >= 1):
        return EW_ERR_COUNT, f"core shape {desc.shape}: ranks outside 1..{EW_MASK_N} or m*n = 0"
    top = EW_ALIGN_TOP + (len(terms) == 1)  # one term alone may take up to 2^46
    for name, w, e in terms:
        if e < EW_ALIGN_MIN or w + e > top:
            return EW_ERR_ALIGN, (
                f"align_{name} {e} with a {w}-bit {name} term: outside {EW_ALIGN_MIN}.."
                f"{top - w}, the {fxp.ACC_W}-bit accumulator could overflow"
            )
    if not known:
        why = (
            " (a unit built without Adam)"
            if op in EW_ADAM_OPS
            else " (a unit built without RANK)"
            if op in EW_CORE_OPS
            else ""
        )
        return EW_ERR_OPCODE, f"unknown opcode {op}{why}"
    if op == EW_ADAM_STEP and desc.beta < 1:
        return EW_ERR_EPS, f"adam step eps_q {desc.beta} below 1"
    return 0, ""


def _ew_range(comp, name: str) -> tuple[str, int, int]:
    bank, base = comp.layout[name]
    return bank, base, base + comp.tensors[name].size


def lower_ewise(comp, op, frac: dict[str, int], host_step: tuple[int, int] | None = None) -> EwiseDesc:
    """The descriptor of one compiled element-wise op with the current fraction bits `frac` (like Machine.frac).

    `host_step`: the step-size constant (q, F) of an SGD step or an Adam step (op.host_step), which the host writes
    before each update (Machine.sgd_step, Machine.adam_lr). Raises ValueError naming the field when the op does not fit
    the descriptor or
    could overflow the accumulator.
    """
    if op.kind not in EW_OPCODES:
        raise ValueError(f"op {op.kind} -> {op.out} is not an element-wise op")
    opcode = EW_OPCODES[op.kind]
    out_t = comp.tensors[op.out]
    y = op.out
    x = z = ""
    alpha, beta, align_x, align_z, shift, mode = 1, 0, 0, 0, 0, NEAREST
    tables = ("", "")
    shape = (1, out_t.size, 1)
    what = f"{op.kind} {op.out} <- {', '.join(n for n in op.ins if n) or '-'}"
    if op.kind in ("axpby", "axpby_relu"):
        x, z = op.ins
        (alpha, fa), (beta, fb) = op.alpha, op.beta
        if op.host_step:
            if host_step is None:
                _ewfail(what, "beta is the host's step size: pass host_step")
            beta, fb = host_step
        t = comp.tensors
        fc = axpby_fc(frac[y], (t[x].fmt.width, fa + frac[x]), (t[z].fmt.width, fb + frac[z]))
        # A right shift by 47 or more leaves 0 of any term (|product| < 2^45): clamp it to what the unit has.
        align_x, align_z = max(fc - (fa + frac[x]), EW_ALIGN_MIN), max(fc - (fb + frac[z]), EW_ALIGN_MIN)
        shift, mode = fc - frac[y], op.mode
    elif op.kind == "adam_v":  # v <- beta2 v + (1 - beta2) g^2: AXPBY's alignment with g^2 (2 F_g, 2 w_g - 1 bits)
        x, z = op.ins
        (alpha, fa), (beta, fb) = op.alpha, op.beta
        t = comp.tensors
        fc = axpby_fc(frac[y], (t[x].fmt.width, fa + frac[x]), (2 * t[z].fmt.width - 1, fb + 2 * frac[z]))
        align_x, align_z = fc - (fa + frac[x]), fc - (fb + 2 * frac[z])  # below -47: rejected, not clamped
        shift, mode = fc - frac[y], op.mode
    elif op.kind == "adam_step":  # w <- w - SAT_16(RQ(lr_t m RSQRT, F_lr + F_m + 16 + h - F_w)) (SPEC 5.5)
        w, x, z = op.ins
        if host_step is None:
            _ewfail(what, "alpha is the host's step size lr_t: pass host_step")
        alpha, f_lr = host_step
        beta = adam_eps_q(comp.cfg.train, frac[z])
        if beta > EW_EPS_MAX:
            _ewfail(
                what,
                f"eps_q {beta} (epsilon {comp.cfg.train.eps} at batch {comp.cfg.train.batch}, F_v "
                f"{frac[z]}) does not fit the 16-bit beta field (at most {EW_EPS_MAX})",
            )
        align_z, shift, mode = frac[z], f_lr + frac[x] + 16 - frac[w], op.mode
    elif op.kind == "acc":
        (x,) = op.ins
        shift, mode = frac[x] - frac[y], op.mode
    elif op.kind == "relu_bwd":
        x, z = op.ins
    elif op.kind == "derive":
        (x,) = op.ins
        shift = frac[x] - frac[y]  # always NEAREST (SPEC 5.5)
    elif op.kind == "zero":
        alpha = 0
    else:  # mask, penalty: ops over the rank slices of a core
        if op.kind == "mask":
            x, *ms = op.ins
            tables = (ms[0], ms[1])
        else:  # g <- RQ(A(g, align_x) + A((tau_l[r_prev] + tau_r[r_next]) w, align_z), align_x) (Machine._penalty)
            x, z, *ts = op.ins
            tables = (ts[0], ts[1])
            f_tau = frac[tables[0] or tables[1]]
            fc = penalty_fc((comp.tensors[x].fmt.width, frac[x]), (comp.tensors[z].fmt.width, frac[z]), f_tau)
            align_x, align_z, shift, mode = fc - frac[x], fc - f_tau - frac[z], fc - frac[y], op.mode
        if len(out_t.shape) != 4:
            _ewfail(what, f"{op.kind} target {y} has shape {out_t.shape}, not a core (r0, m, n, r1)")
        r0, m, n, r1 = out_t.shape
        shape = (r0, m * n, r1)
    if x and comp.tensors[x].size != out_t.size or z and comp.tensors[z].size != out_t.size:
        _ewfail(what, "operands of different sizes")
    ranges = {name: _ew_range(comp, name) for name in (x, z, y) if name}
    for name in (x, z):  # read-all-then-write semantics need a source to be the destination or apart from it
        if name and name != y and ranges[name][0] == ranges[y][0]:
            (_, lo, hi), (_, ylo, yhi) = ranges[name], ranges[y]
            if lo < yhi and ylo < hi and lo != ylo:
                _ewfail(what, f"{name} overlaps {y} at an offset")

    def width(name):
        return comp.tensors[name].fmt.width if name else 0

    def base(name):
        return comp.layout[name][1] if name else 0

    def bank(name):
        return comp.layout[name][0] if name else ""

    desc = EwiseDesc(
        opcode=opcode,
        count=out_t.size,
        x_base=base(x),
        z_base=base(z),
        y_base=base(y),
        alpha=alpha,
        beta=beta,
        align_x=align_x,
        align_z=align_z,
        shift=shift,
        mode=mode,
        x_w=width(x),
        z_w=width(z),
        y_w=out_t.fmt.width,
        shape=shape,
        tab_left=base(tables[0]),
        tab_right=base(tables[1]),
        tab_on=int(bool(tables[0])) | int(bool(tables[1])) << 1,
        banks=(bank(x), bank(z), bank(y)),
        tab_banks=(bank(tables[0]), bank(tables[1])),
        names=(x, z, y),
        tables=tables,
    )
    check_ewise(desc)
    # legal on the widest unit; golden/program.py checks the op against the accelerator's build
    code, why = ewise_error(desc, EW_WIDEST, EW_WIDEST, EW_WIDEST, adam=True)
    if code:
        _ewfail(what, why)
    return desc


def ewise_tables(desc: EwiseDesc, mem_tab) -> tuple[list[int], list[int]]:
    """The (left, right) tables a MASK or PENALTY op reads from `mem_tab` (its x port's memory): per slice the word
    as a 16-bit signed value (a wider word's low 16 bits); an absent side gives EW_MASK_N ones (MASK: every slice
    live) or zeros (PENALTY: no tau)."""
    r0, _, r1 = desc.shape
    absent = 1 if desc.opcode == EW_MASK else 0
    out = []
    for base, bit, n in ((desc.tab_left, 1, r0), (desc.tab_right, 2, r1)):
        if desc.tab_on & bit:
            out.append([((int(mem_tab[base + r]) + (1 << 15)) & 0xFFFF) - (1 << 15) for r in range(n)])
        else:
            out.append([absent] * EW_MASK_N)
    return out[0], out[1]


def execute_ewise(desc: EwiseDesc, mem_x, mem_z, mem_y, rand=None, mem_tab=None) -> tuple[np.ndarray, int, int, int]:
    """Plain reference of one descriptor on flat memories (exact Python ints; sources all read before the first
    write). Returns (the y memory after the op, saturations, max |word written|, draws consumed). `rand`: one
    draw per element (STOCHASTIC only); `mem_tab`: the memory MASK and PENALTY read their tables from
    (ewise_tables; default mem_x: the unit reads them on its x port). A source not read may be None. Saturations
    count the RQ clamp and, for ACC, the clamp of the sum, so one element may count twice; ADAM_STEP counts only
    the clamp of old_y - delta. Legal means legal on the widest unit (32-bit ports, Adam built).
    """
    code, why = ewise_error(desc, EW_WIDEST, EW_WIDEST, EW_WIDEST, adam=True)
    if code:
        raise ValueError(f"ewise descriptor for {_ew_what(desc)}: error {code}: {why}")
    fmt = Fmt(desc.y_w, 0)
    n = desc.count
    if desc.mode == STOCHASTIC:
        rand = np.asarray(rand, dtype=np.int64)
        if rand.shape != (n,):
            raise ValueError(f"need {n} draws, got shape {rand.shape}")
    mem_y = np.array(mem_y, dtype=np.int64, copy=True)
    xs = [int(mem_x[desc.x_base + i]) if desc.reads_x else 0 for i in range(n)]
    zs = [int(mem_z[desc.z_base + i]) if desc.reads_z else 0 for i in range(n)]
    olds = [int(mem_y[desc.y_base + i]) for i in range(n)]
    _, mn, r1 = desc.shape
    left, right = ewise_tables(desc, mem_x if mem_tab is None else mem_tab) if desc.opcode in EW_CORE_OPS else ([], [])

    def beta(i: int) -> int:  # element i = (r_prev, m*n, r_next)
        if desc.opcode == EW_PENALTY:
            return left[i // (mn * r1)] + right[i % r1]
        return desc.beta

    def gate(i: int) -> bool:
        if desc.opcode == EW_RELU_BWD:
            return zs[i] > 0
        if desc.opcode == EW_MASK:  # element i = (r_prev, m*n, r_next)
            return left[i // (mn * r1)] != 0 and right[i % r1] != 0
        return desc.opcode != EW_ZERO

    n_sat = maxabs = 0
    for i in range(n):
        g = gate(i)
        t, shift = 0, desc.shift
        x = xs[i]
        if desc.opcode == EW_ADAM_STEP:  # x = m times 1/sqrt(v + eps), the shift per element
            rs, h = rsqrt_parts(np.array([max(zs[i], 0) + desc.beta]), desc.align_z)
            x, shift = x * int(rs[0]), shift + int(h[0])
        z = zs[i] * zs[i] if desc.opcode == EW_ADAM_V else zs[i]
        if g and desc.reads_x:
            t += int(fxp.align_round(np.array([desc.alpha * x]), 0, desc.align_x)[0])
        if g and desc.z_term:
            t += int(fxp.align_round(np.array([beta(i) * z]), 0, desc.align_z)[0])
        acc = np.array([t], dtype=np.int64)
        fxp.check_acc(acc, f"ewise -> {desc.names[2]}")
        v = fxp.round_shift(acc, shift, desc.mode, rand[i : i + 1] if desc.mode == STOCHASTIC else None)
        if desc.opcode == EW_ADAM_STEP:  # w - SAT_16(delta): the delta's clamp does not count
            v, k = fxp.saturate(olds[i] - fxp.saturate(v, ADAM_DELTA_FMT)[0], fmt)
        else:
            v, k = fxp.saturate(v, fmt)
        n_sat += k
        if desc.accumulate:
            v, k = fxp.saturate(v + olds[i], fmt)
            n_sat += k
        mem_y[desc.y_base + i] = max(int(v[0]), 0) if desc.opcode == EW_AXPBY_RELU else int(v[0])
        maxabs = max(maxabs, abs(int(v[0])))
    return mem_y, n_sat, maxabs, desc.draws


def pack_ewise_ports(desc: EwiseDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_ewise.v)."""
    r0, mn, r1 = desc.shape

    def sgn(v, bits):
        return v & ((1 << bits) - 1)

    return {
        "opcode": desc.opcode,
        "count": desc.count,
        "x_base": desc.x_base,
        "z_base": desc.z_base,
        "y_base": desc.y_base,
        "alpha": sgn(desc.alpha, EW_CONST_W),
        "beta": sgn(desc.beta, EW_CONST_W),
        "align_x": sgn(desc.align_x, EW_ALIGN_W),
        "align_z": sgn(desc.align_z, EW_ALIGN_W),
        "shift": sgn(desc.shift, SHIFT_W),
        "mode": desc.mode,
        "x_w": desc.x_w,
        "z_w": desc.z_w,
        "y_w": desc.y_w,
        "r0": r0,
        "mn": mn,
        "r1": r1,
        "tab_left": desc.tab_left,
        "tab_right": desc.tab_right,
        "tab_on": desc.tab_on,
    }


# tt_ewise's cycles besides the elements and MEM_LAT: check, gate, multiply, align, add, requant x3, clamp, write,
# |y|, done; the Adam ops' stages before the multipliers: u, bit length, normalise, RSQRT, square or m * RSQRT
EW_PIPE = 12
EW_ADAM_PIPE = 5


def ewise_cycles(desc: EwiseDesc, mem_lat: int = MEM_LAT) -> int:
    """rtl/tt_ewise.v's cycles from start to done of a legal op, one element a cycle (its block test checks them);
    MASK and PENALTY read their tables first, one word a cycle, and wait for the last (one cycle with none)."""
    tables = 0
    if desc.opcode in EW_CORE_OPS:
        tables = desc.table_words + mem_lat if desc.table_words else 1
    return desc.count + mem_lat + EW_PIPE + tables + (EW_ADAM_PIPE if desc.opcode in EW_ADAM_OPS else 0)


__all__ += [
    "EwiseDesc",
    "lower_ewise",
    "execute_ewise",
    "check_ewise",
    "ewise_error",
    "pack_ewise_ports",
    "ewise_tables",
    "ewise_cycles",
    "EW_PIPE",
    "EW_OPCODES",
    "EW_MASK_N",
]


# === Softmax cross-entropy gradient unit (rtl/tt_sce.v) ======================================================
# One `SceDesc` per compiled `sce` op and sample (the label is the sample's): SPEC 5.4 for one sample, exactly
# golden.machine.sce_gradient. Logits z at z_base + j (j < n_out; the first `classes` used), errors e at
# e_base + j (0 for the padded j >= classes); the unit also returns pred, p[label] (the host's loss) and the
# saturation count. No random draws.
#
# Fields (ValueError from `check_sce` names the one that does not fit): bases ADDR_W = 20 bits unsigned (the last
# element addressable); n_out, classes, label SCE_N_W = 8 bits unsigned; frac_z SHIFT_W = 7 bits two's complement;
# err_w OUT_W_W = 6 bits; err_frac SCE_FRAC_W = 6 bits unsigned.
# Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_sce` a ValueError; see
# `sce_error`): 1 n_out 0, classes 0 or classes > n_out; 2 label >= classes; 3 err_w outside 2..OUT_W; 4 frac_z
# outside -32..47 (fxp.Fmt's fraction range: any format a configuration can give the logits) or err_frac above 31
# (p <= 2^err_frac then fits the unit's 32-bit p_label, and the subtraction of 2^err_frac needs err_frac >= 0).
# Several: the lowest code.
#
# The unit reads z three times (max, sum, output) and writes e[j] after reading z[j] in the last pass, so e may be
# z itself, below it or apart; `lower_sce` rejects e above z and overlapping it in the same bank.

SCE_N_W = 8  # n_out, classes, label (rtl/tt_sce.v N_W)
SCE_FRAC_W = 6  # err_frac field
SCE_FRAC_Z_MIN, SCE_FRAC_Z_MAX = -32, 47  # legal frac_z
SCE_ERR_FRAC_MAX = 31  # legal err_frac 0..31
SCE_PORT_W = 16  # the RTL's default error word width OUT_W
SCE_ERR_COUNT, SCE_ERR_LABEL, SCE_ERR_WIDTH, SCE_ERR_FRAC = 1, 2, 3, 4


@dataclass(frozen=True)
class SceDesc:
    z_base: int
    e_base: int
    n_out: int  # outputs: logits read, errors written
    classes: int  # used classes, 1..n_out
    label: int  # 0..classes-1
    frac_z: int  # fraction bits of the logits
    err_w: int  # error format: width, fraction bits
    err_frac: int
    banks: tuple[str, str] = ("", "")  # banks of z, e (for the sequencer; not a descriptor field)
    names: tuple[str, str] = field(default=("", ""), compare=False)  # tensors z, e, for messages


def _scefail(desc: SceDesc, problem: str):
    raise ValueError(f"sce descriptor for {desc.names[1] or 'op'} <- {desc.names[0] or '?'}: {problem}")


def check_sce(desc: SceDesc) -> SceDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""

    def unsigned(name, v, bits):
        if not 0 <= v < 1 << bits:
            _scefail(desc, f"{name} {v} outside 0..{(1 << bits) - 1} ({bits}-bit field)")

    for name, base in (("z_base", desc.z_base), ("e_base", desc.e_base)):
        unsigned(name, base, ADDR_W)
        if base + desc.n_out - 1 >= 1 << ADDR_W:
            _scefail(desc, f"{name} {base} + n_out {desc.n_out} goes beyond the {ADDR_W}-bit address field")
    for name in ("n_out", "classes", "label"):
        unsigned(name, getattr(desc, name), SCE_N_W)
    if not -(1 << (SHIFT_W - 1)) <= desc.frac_z < 1 << (SHIFT_W - 1):
        _scefail(desc, f"frac_z {desc.frac_z} outside the {SHIFT_W}-bit two's complement field")
    unsigned("err_w", desc.err_w, OUT_W_W)
    unsigned("err_frac", desc.err_frac, SCE_FRAC_W)
    return desc


def sce_error(desc: SceDesc, out_w_max: int = SCE_PORT_W) -> tuple[int, str]:
    """The RTL's start-time check: (error code, reason), (0, "") for a legal descriptor. out_w_max is the RTL's
    error word width OUT_W."""
    if desc.n_out == 0 or desc.classes == 0 or desc.classes > desc.n_out:
        return SCE_ERR_COUNT, f"n_out {desc.n_out}, classes {desc.classes}: need 1 <= classes <= n_out"
    if desc.label >= desc.classes:
        return SCE_ERR_LABEL, f"label {desc.label} >= classes {desc.classes}"
    if not 2 <= desc.err_w <= out_w_max:
        return SCE_ERR_WIDTH, f"err_w {desc.err_w} outside 2..{out_w_max}"
    if not SCE_FRAC_Z_MIN <= desc.frac_z <= SCE_FRAC_Z_MAX:
        return SCE_ERR_FRAC, f"frac_z {desc.frac_z} outside {SCE_FRAC_Z_MIN}..{SCE_FRAC_Z_MAX}"
    if desc.err_frac > SCE_ERR_FRAC_MAX:
        return SCE_ERR_FRAC, f"err_frac {desc.err_frac} above {SCE_ERR_FRAC_MAX}"
    return 0, ""


def lower_sce(comp, op, frac: dict[str, int], label: int) -> SceDesc:
    """The descriptor of a compiled sce op for one sample of class `label`, with the current fraction bits `frac`
    (like Machine.frac). Raises ValueError when the op does not fit the descriptor or is illegal."""
    if op.kind != "sce":
        raise ValueError(f"op {op.kind} -> {op.out} is not a softmax cross-entropy")
    (z,) = op.ins
    e = op.out
    zt, et = comp.tensors[z], comp.tensors[e]
    (zbank, zbase), (ebank, ebase) = comp.layout[z], comp.layout[e]
    desc = SceDesc(
        z_base=zbase,
        e_base=ebase,
        n_out=et.size,
        classes=comp.cfg.classes,
        label=int(label),
        frac_z=frac[z],
        err_w=et.fmt.width,
        err_frac=frac[e],
        banks=(zbank, ebank),
        names=(z, e),
    )
    if zt.size != et.size:
        _scefail(desc, f"{z} has {zt.size} elements, {e} {et.size}")
    if zbank == ebank and zbase < ebase < zbase + zt.size:
        _scefail(desc, f"{e} overlaps {z} above its base: a write would overtake a read")
    check_sce(desc)
    code, why = sce_error(desc)
    if code:
        _scefail(desc, why)
    return desc


def execute_sce(desc: SceDesc, mem_z, mem_e, out_w_max: int = SCE_PORT_W) -> tuple[np.ndarray, int, int, int]:
    """Plain reference of one descriptor on flat memories: golden.machine.sce_gradient on the sample's logits
    (all read before the first write). Returns (the e memory after the op, saturations, p[label], pred)."""
    from golden.machine import sce_gradient

    code, why = sce_error(desc, out_w_max)
    if code:
        raise ValueError(f"sce descriptor for {desc.names[1] or 'op'}: error {code}: {why}")
    z = np.array([int(v) for v in mem_z[desc.z_base : desc.z_base + desc.n_out]], dtype=np.int64)
    err, n_sat, p, pred = sce_gradient(
        z[None, :], desc.frac_z, np.array([desc.label]), desc.classes, Fmt(desc.err_w, desc.err_frac)
    )
    mem_e = np.array(mem_e, dtype=np.int64, copy=True)
    mem_e[desc.e_base : desc.e_base + desc.n_out] = err[0]
    return mem_e, int(n_sat), int(p[0, desc.label]), int(pred[0])


def pack_sce_ports(desc: SceDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_sce.v)."""
    return {
        "z_base": desc.z_base,
        "e_base": desc.e_base,
        "n_out": desc.n_out,
        "classes": desc.classes,
        "label": desc.label,
        "frac_z": desc.frac_z & ((1 << SHIFT_W) - 1),
        "err_w": desc.err_w,
        "err_frac": desc.err_frac,
    }


SCE_PIPE = 35  # cycles besides 2 classes + n_out + 2 MEM_LAT (the header of rtl/tt_sce.v)


def sce_cycles(desc: SceDesc, mem_lat: int = MEM_LAT) -> int:
    """rtl/tt_sce.v's cycles from start to done (its block test checks them): two passes over the used logits, the
    divider and the pipeline, then one error written a cycle."""
    return 2 * desc.classes + desc.n_out + 2 * mem_lat + SCE_PIPE


__all__ += [
    "SceDesc",
    "lower_sce",
    "execute_sce",
    "check_sce",
    "sce_error",
    "pack_sce_ports",
    "SCE_N_W",
    "sce_cycles",
    "SCE_PIPE",
    "SCE_ERR_COUNT",
    "SCE_ERR_LABEL",
    "SCE_ERR_WIDTH",
    "SCE_ERR_FRAC",
]


# === Rank-update unit (rtl/tt_rank.v) ===============================================================================
# One `RankDesc` per bond: SPEC 5.6 steps 1-4, exactly golden.machine.rank_bond. The bond's cores are master
# cores: core k (r0, mn, R) with slice r at left_base + i R + r (i < left_rows = r0 mn), core k+1 (R, mn', r1)
# with slice r at right_base + r right_cols + j (j < right_cols = mn' r1). Its state, 16-bit words in the same
# address space: lambda r at lam_base + 2r (low half) and + 2r + 1 (high half, signed), the mask at mask_base + r
# (live if not 0; written 0 or 1), tau at tau_base + r.
#
# Fields (ValueError from `check_rank` names the one that does not fit): bases ADDR_W = 20 bits unsigned (every
# word addressable), rank RANK_W = 5 bits, left_rows and right_cols CNT_W = 16 bits, inv_d 24 bits, q_shift 6
# bits, threshold 32 bits, tau_num 48 bits, all unsigned. The state must not overlap the cores.
# Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_rank` a ValueError; see
# `rank_error`): 1 rank 0 or above MASK_N; 2 left_rows or right_cols 0; 3 q_shift above 47.

RANK_W = 5
RANK_INV_W = 24
RANK_Q_SHIFT_W = 6
RANK_Q_SHIFT_MAX = 47
RANK_THR_W = 32
RANK_NUM_W = 48
RANK_ERR_RANK, RANK_ERR_COUNT, RANK_ERR_SHIFT = 1, 2, 3


@dataclass(frozen=True)
class RankDesc:
    left_base: int
    right_base: int
    lam_base: int
    mask_base: int
    tau_base: int
    rank: int  # R, the bond's rank
    left_rows: int  # words of a slice in core k
    right_cols: int  # words of a slice in core k+1
    inv_d: int  # round(2^24 / (D + 1))
    q_shift: int  # 2 F_w + 24 - F_lambda
    threshold: int  # lambda's pruning threshold, 24 fraction bits
    tau_num: int  # tau = tau_num // lambda
    banks: tuple[str, ...] = ("",) * 5  # banks of the five bases (for the sequencer; not a descriptor field)
    names: tuple[str, str] = field(default=("", ""), compare=False)  # the cores, for messages

    @property
    def slice_words(self) -> int:
        return self.left_rows + self.right_cols

    def bases(self) -> tuple[int, ...]:
        return self.left_base, self.right_base, self.lam_base, self.mask_base, self.tau_base

    def regions(self) -> dict[str, tuple[int, int]]:
        """The words each part of the op touches: name -> (first, end)."""
        return {
            "left core": (self.left_base, self.left_base + self.left_rows * self.rank),
            "right core": (self.right_base, self.right_base + self.right_cols * self.rank),
            "lambda": (self.lam_base, self.lam_base + 2 * self.rank),
            "mask": (self.mask_base, self.mask_base + self.rank),
            "tau": (self.tau_base, self.tau_base + self.rank),
        }


def _rankfail(desc: RankDesc, problem: str):
    raise ValueError(f"rank descriptor for bond {desc.names[0] or '?'} - {desc.names[1] or '?'}: {problem}")


def check_rank(desc: RankDesc) -> RankDesc:
    """Every field within its width and the state apart from the cores and from itself (in one bank: a lowered
    descriptor's bases are bank-local until golden/program.py globalises them); raises ValueError naming the field
    or the overlap."""

    def unsigned(name, bits):
        v = getattr(desc, name)
        if not 0 <= v < 1 << bits:
            _rankfail(desc, f"{name} {v} outside 0..{(1 << bits) - 1} ({bits}-bit field)")

    for name in ("left_base", "right_base", "lam_base", "mask_base", "tau_base"):
        unsigned(name, ADDR_W)
    for name, bits in (
        ("rank", RANK_W),
        ("left_rows", CNT_W),
        ("right_cols", CNT_W),
        ("inv_d", RANK_INV_W),
        ("q_shift", RANK_Q_SHIFT_W),
        ("threshold", RANK_THR_W),
        ("tau_num", RANK_NUM_W),
    ):
        unsigned(name, bits)
    regions = desc.regions()
    for name, (lo, hi) in regions.items():
        if hi - 1 >= 1 << ADDR_W:
            _rankfail(desc, f"{name} words {lo}..{hi - 1} go beyond the {ADDR_W}-bit address field")
    state = ("lambda", "mask", "tau")
    bank = dict(zip(regions, desc.banks))  # bases in different banks cannot overlap
    for a in state:
        for b in regions:
            (alo, ahi), (blo, bhi) = regions[a], regions[b]
            if a != b and (b not in state or a < b) and bank[a] == bank[b] and alo < bhi and blo < ahi:
                _rankfail(desc, f"{a} words {alo}..{ahi - 1} overlap {b} words {blo}..{bhi - 1}")
    return desc


def rank_error(desc: RankDesc, mask_n: int = EW_MASK_N) -> tuple[int, str]:
    """The RTL's start-time check: (error code, reason), (0, "") for a legal descriptor. mask_n is the RTL's
    MASK_N, the largest rank."""
    if not 1 <= desc.rank <= mask_n:
        return RANK_ERR_RANK, f"rank {desc.rank} outside 1..{mask_n}"
    if desc.left_rows == 0 or desc.right_cols == 0:
        return RANK_ERR_COUNT, f"left_rows {desc.left_rows}, right_cols {desc.right_cols}: need both >= 1"
    if desc.q_shift > RANK_Q_SHIFT_MAX:
        return RANK_ERR_SHIFT, f"q_shift {desc.q_shift} above {RANK_Q_SHIFT_MAX}"
    return 0, ""


def rank_fields(comp, op, frac: dict[str, int], rank_constants: tuple[float, float] | None = None) -> dict[str, int]:
    """The descriptor fields of a compiled rank op that do not depend on where its tensors sit: rank, the slice
    shape, inv_d, q_shift, threshold and tau_num, with the current fraction bits `frac` (like Machine.frac).
    `rank_constants`: (the prior per mini-batch, the pruning threshold) the host schedules (Machine.rank_constants);
    None: the config's (prior * batch, threshold)."""
    from golden.compiler import LAMBDA_FMT, quant_const
    from golden.machine import inv_d

    if op.kind != "rank":
        raise ValueError(f"op {op.kind} -> {op.out} is not a rank update")
    w_left, w_right, tau, _ = op.ins
    r0, m, n, r = comp.tensors[w_left].shape
    _, m2, n2, r1 = comp.tensors[w_right].shape
    if frac[w_left] != frac[w_right]:
        raise ValueError(
            f"rank update of {w_left} - {w_right}: the cores have {frac[w_left]} and {frac[w_right]} fraction bits"
        )
    rank = comp.cfg.train.rank
    prior, threshold = (rank.prior * comp.cfg.train.batch, rank.threshold) if rank_constants is None else rank_constants
    c_q, c_f = quant_const(prior)
    return {
        "rank": r,
        "left_rows": r0 * m * n,
        "right_cols": m2 * n2 * r1,
        "inv_d": inv_d(r0 * m * n + m2 * n2 * r1),
        "q_shift": 2 * frac[w_left] + 24 - LAMBDA_FMT.frac,
        "threshold": round(threshold * 2**LAMBDA_FMT.frac),
        "tau_num": c_q << (LAMBDA_FMT.frac + frac[tau] - c_f),
    }


def lower_rank(comp, op, frac: dict[str, int], rank_constants: tuple[float, float] | None = None) -> RankDesc:
    """The descriptor of a compiled rank op, bases in words of each tensor's bank (golden/program.py globalises
    them), with the current fraction bits `frac` and the host's `rank_constants` (rank_fields). Raises ValueError
    when it does not fit the descriptor."""
    w_left, w_right, tau, mask = op.ins
    names = (w_left, w_right, op.out, mask, tau)
    (banks, bases) = zip(*(comp.layout[n] for n in names))
    left_base, right_base, lam_base, mask_base, tau_base = bases
    desc = RankDesc(
        left_base,
        right_base,
        lam_base,
        mask_base,
        tau_base,
        **rank_fields(comp, op, frac, rank_constants),
        banks=banks,
        names=(w_left, w_right),
    )
    check_rank(desc)
    code, why = rank_error(desc)
    if code:
        _rankfail(desc, why)
    return desc


def _signed16(v: int) -> int:
    v &= 0xFFFF
    return v - (1 << 16) if v >> 15 else v


def rank_reads(desc: RankDesc) -> list[int]:
    """The addresses rtl/tt_rank.v reads, in order: per slice lambda (low, high), the mask, its words in core k
    then in core k+1; then per slice lambda again."""
    out = []
    for r in range(desc.rank):
        out += [desc.lam_base + 2 * r, desc.lam_base + 2 * r + 1, desc.mask_base + r]
        out += [desc.left_base + i * desc.rank + r for i in range(desc.left_rows)]
        out += [desc.right_base + r * desc.right_cols + j for j in range(desc.right_cols)]
    for r in range(desc.rank):
        out += [desc.lam_base + 2 * r, desc.lam_base + 2 * r + 1]
    return out


def execute_rank(desc: RankDesc, mem, mask_n: int = EW_MASK_N) -> np.ndarray:
    """Plain reference of one descriptor on a flat memory of signed 16-bit words: golden.machine.rank_bond on the
    words the op reads. Returns the memory after the op."""
    from golden.machine import rank_bond

    code, why = rank_error(desc, mask_n)
    if code:
        raise ValueError(f"rank descriptor for bond {desc.names[0] or '?'}: error {code}: {why}")
    mem = np.array(mem, dtype=np.int64, copy=True)
    r_, lb, rb = desc.rank, desc.left_base, desc.right_base
    lam = [(int(mem[desc.lam_base + 2 * r + 1]) << 16) | (int(mem[desc.lam_base + 2 * r]) & 0xFFFF) for r in range(r_)]
    mask = [int(mem[desc.mask_base + r]) for r in range(r_)]
    sums = [
        sum(int(mem[lb + i * r_ + r]) ** 2 for i in range(desc.left_rows))
        + sum(int(mem[rb + r * desc.right_cols + j]) ** 2 for j in range(desc.right_cols))
        for r in range(r_)
    ]
    new, keep, taus = rank_bond(lam, mask, sums, desc.inv_d, desc.q_shift, desc.threshold, desc.tau_num)
    for r in range(r_):
        mem[desc.lam_base + 2 * r] = _signed16(new[r])
        mem[desc.lam_base + 2 * r + 1] = new[r] >> 16
        mem[desc.mask_base + r] = keep[r]
        mem[desc.tau_base + r] = taus[r]
    return mem


def pack_rank_ports(desc: RankDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_rank.v)."""
    return {
        name: getattr(desc, name)
        for name in (
            "left_base",
            "right_base",
            "lam_base",
            "mask_base",
            "tau_base",
            "rank",
            "left_rows",
            "right_cols",
            "inv_d",
            "q_shift",
            "threshold",
            "tau_num",
        )
    }


RANK_SLICE_PIPE = 69  # cycles per slice besides its words, 2 MEM_LAT and q_shift (the header of rtl/tt_rank.v)


def rank_cycles(desc: RankDesc, mem_lat: int = MEM_LAT) -> int:
    """rtl/tt_rank.v's cycles from start to done (its block test checks them): per slice, its words read one a
    cycle, the serial products and the shift, the divider."""
    return 3 + desc.rank * (desc.slice_words + 2 * mem_lat + desc.q_shift + RANK_SLICE_PIPE)


__all__ += [
    "RankDesc",
    "check_rank",
    "rank_error",
    "rank_fields",
    "lower_rank",
    "rank_reads",
    "execute_rank",
    "pack_rank_ports",
    "rank_cycles",
    "RANK_SLICE_PIPE",
    "RANK_ERR_RANK",
    "RANK_ERR_COUNT",
    "RANK_ERR_SHIFT",
]
