"""The units' cycles from start to done, exactly as the RTL counts them (each unit's block test checks its model
cycle for cycle): the contraction engine's groups, its lane buffers' load and preload, and where its cycles over the
ideal go; the element-wise, softmax cross-entropy and rank units' closed formulas; the sequencer's cycles per record
and the head start a preloaded contraction gets. golden/program.py sums them over a program.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from golden.arch import EW_ADAM_OPS, EW_CORE_OPS, KIND_CONTRACT, KIND_EWISE, KIND_RANK, KIND_SCE, MAX_OUT
from golden.isa.contract import ContractDesc, buffer_words, drain_beats, sum_stages
from golden.isa.ewise import EwiseDesc
from golden.isa.loop_nest import nest_steps
from golden.isa.rank import RankDesc
from golden.isa.sce import SceDesc

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
    first_word = nest_steps(desc, counts)[4]  # every group's first buffer word, in group order
    ready = (first_word // slice_words + 1) * (desc.load_lanes // desc.vec) * slice_words + mem_lat - head
    return g + np.maximum.accumulate(np.maximum(ready - g, 0))


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


SCE_PIPE = 35  # cycles besides 2 classes + n_out + 2 MEM_LAT (the header of rtl/tt_sce.v)


def sce_cycles(desc: SceDesc, mem_lat: int = MEM_LAT) -> int:
    """rtl/tt_sce.v's cycles from start to done (its block test checks them): two passes over the used logits, the
    divider and the pipeline, then one error written a cycle."""
    return 2 * desc.classes + desc.n_out + 2 * mem_lat + SCE_PIPE


RANK_SLICE_PIPE = 69  # cycles per slice besides its words, 2 MEM_LAT and q_shift (the header of rtl/tt_rank.v)


def rank_cycles(desc: RankDesc, mem_lat: int = MEM_LAT) -> int:
    """rtl/tt_rank.v's cycles from start to done (its block test checks them): per slice, its words read one a
    cycle, the serial products and the shift, the divider."""
    return 3 + desc.rank * (desc.slice_words + 2 * mem_lat + desc.q_shift + RANK_SLICE_PIPE)


# --- the sequencer (rtl/tt_seq.v) -------------------------------------------------------------------------------
SEQ_OP_CYCLES = 2  # the back end per op besides its unit's: the seed and statistics cycles
SEQ_FETCH_CYCLES = 3  # the front end per record besides the payload: fetch, header, and the cycle the back end takes it


def unit_cycles(kind: int, desc, mem_lat: int = MEM_LAT, head: int = 0) -> int:
    """The start-to-done cycles of the unit that runs a record of `kind` (golden/arch.py KIND_*) with descriptor
    `desc`; `head`: a preloaded contraction's head start (head_start)."""
    if kind == KIND_CONTRACT:
        return contract_cycles(desc, mem_lat, head=head)
    by_kind: dict[int, Callable[..., int]] = {KIND_EWISE: ewise_cycles, KIND_SCE: sce_cycles, KIND_RANK: rank_cycles}
    return by_kind[kind](desc, mem_lat)


def record_wait(prev_unit: int | None, nwords: int) -> int:
    """The cycles rtl/tt_seq.v's back end waits for a record of `nwords` payload words (S_NEXT, and the cycle that
    takes it) after the op before it, whose unit held it `prev_unit` cycles (None: the program's first record). The
    front end reads the record from the take of the one before on; the back end is there after that op's seed, unit
    and statistics cycles."""
    if prev_unit is None:
        return nwords + SEQ_FETCH_CYCLES
    return max(0, nwords + SEQ_FETCH_CYCLES - prev_unit - SEQ_OP_CYCLES)


def head_start(d: ContractDesc, d_head: int, nwords: int, mem_lat: int = MEM_LAT) -> int:
    """The head start of the op that `d` (itself with head start d_head) preloads, whose record has `nwords`
    payload words: from d's start to the next op's (d's unit cycles, SEQ_OP_CYCLES and the record_wait for that
    record) less when d's preload walk issues its first beat (preload_start)."""
    unit = contract_cycles(d, mem_lat, head=d_head) + 1
    return unit + SEQ_OP_CYCLES + record_wait(unit, nwords) - preload_start(d, d_head)
