"""Lowering of compiled ops to the accelerator's op descriptors, and a plain reference of each descriptor.

v1 covers CONTRACT (SPEC 5.1): one `ContractDesc` per op is what `rtl/tt_contract.v` executes. A descriptor is
a loop nest over element addresses, nothing else: the engine knows no einsum, no tensor and no format.

Loop nest: up to MAX_OUT output loops (outer to inner, the output indices in the order the spec writes them,
so the output address steps by 1 per innermost step: row-major, contiguous), then up to MAX_RED reduction
loops (the contracted indices in first-appearance order in operand a, then b). Each loop has a count >= 1 and
three strides in elements (a, b, out); a stride is 0 where the index is absent from that operand (the output
strides of reduction loops are always 0). Unused loops have count 1 and strides 0 and sit on the outer side of
their group, so the innermost slot of each group is always a real loop (or both are padding).

Field widths (what the RTL's ports hold; `lower_contract` raises ValueError naming the field that overflows):
  counts CNT_W = 16 bits unsigned (1..65535), strides and addresses ADDR_W = 20 bits unsigned (a word address
  in the operand's bank, and the last element of every operand must be addressable), shift SHIFT_W = 7 bits
  two's complement (the field range; SPEC 2.1's legal range -16..47 is checked when the op runs: the RTL
  raises an error, `execute_desc` a ValueError), out width OUT_W_W = 6 bits (2..32), mode 1 bit, accumulate
  1 bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from golden import fxp
from golden.fxp import NEAREST, STOCHASTIC, Fmt

MAX_OUT = 6  # output loops of a descriptor
MAX_RED = 4  # reduction loops
NLOOPS = MAX_OUT + MAX_RED
CNT_W = 16  # loop count field, unsigned
ADDR_W = 20  # base address and stride fields, unsigned element addresses
SHIFT_W = 7  # shift field, two's complement
OUT_W_W = 6  # output width field (2..32)


@dataclass(frozen=True)
class Loop:
    count: int
    sa: int = 0  # element strides in a, b and the output
    sb: int = 0
    so: int = 0
    index: str = ""  # the einsum letter (documentation only; "" for padding)


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

    @property
    def loops(self) -> tuple[Loop, ...]:
        """All NLOOPS loops, outer to inner."""
        return self.out_loops + self.red_loops

    @property
    def red_count(self) -> int:
        return math.prod(lp.count for lp in self.red_loops)

    @property
    def macs(self) -> int:
        return self.out_count * self.red_count


def _fail(what: str, problem: str):
    raise ValueError(f"contract descriptor for {what}: {problem}")


def check_desc(desc: ContractDesc) -> ContractDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""
    what = f"{desc.names[2] or 'op'} <- {' x '.join(n or '?' for n in desc.names[:2])}"
    if len(desc.out_loops) != MAX_OUT or len(desc.red_loops) != MAX_RED:
        _fail(what, f"expected {MAX_OUT} output and {MAX_RED} reduction loops, got {len(desc.out_loops)} and "
                    f"{len(desc.red_loops)}")
    for i, lp in enumerate(desc.loops):
        if not 1 <= lp.count < 1 << CNT_W:
            _fail(what, f"loop {i} ({lp.index or 'pad'}) count {lp.count} outside 1..{(1 << CNT_W) - 1} "
                        f"({CNT_W}-bit count field)")
        for name, s in (("a", lp.sa), ("b", lp.sb), ("out", lp.so)):
            if not 0 <= s < 1 << ADDR_W:
                _fail(what, f"loop {i} ({lp.index or 'pad'}) {name} stride {s} outside 0..{(1 << ADDR_W) - 1} "
                            f"({ADDR_W}-bit stride field)")
    for i, lp in enumerate(desc.red_loops):
        if lp.so:
            _fail(what, f"reduction loop {i} has output stride {lp.so}; must be 0")
    for name, base, key in (("a", desc.a_base, "sa"), ("b", desc.b_base, "sb"), ("out", desc.o_base, "so")):
        last = base + sum((lp.count - 1) * getattr(lp, key) for lp in desc.loops)
        if base < 0 or last >= 1 << ADDR_W:
            _fail(what, f"operand {name} spans addresses {base}..{last}, beyond the {ADDR_W}-bit address field")
    if desc.out_count != math.prod(lp.count for lp in desc.out_loops):
        _fail(what, f"out_count {desc.out_count} is not the product of the output loop counts")
    if not -(1 << (SHIFT_W - 1)) <= desc.shift < 1 << (SHIFT_W - 1):
        _fail(what, f"shift {desc.shift} outside the {SHIFT_W}-bit shift field")
    if not 2 <= desc.out_w <= 32:
        _fail(what, f"output width {desc.out_w} outside 2..32")
    if desc.mode not in (NEAREST, STOCHASTIC):
        _fail(what, f"unknown rounding mode {desc.mode}")
    return desc


def _strides(indices: str, sizes: dict[str, int]) -> dict[str, int]:
    """Row-major element stride of every letter of an operand (a repeated letter, a diagonal, sums them)."""
    out: dict[str, int] = {}
    step = 1
    for c in reversed(indices):
        out[c] = out.get(c, 0) + step
        step *= sizes[c]
    return out


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
    red_idx = "".join(c for c in dict.fromkeys(ia + ib) if c not in out_idx)
    if len(out_idx) > MAX_OUT:
        _fail(what, f"{len(out_idx)} output loops, the descriptor has {MAX_OUT}")
    if len(red_idx) > MAX_RED:
        _fail(what, f"{len(red_idx)} reduction loops, the descriptor has {MAX_RED}")
    st_a, st_b, st_o = _strides(ia, sizes), _strides(ib, sizes), _strides(out_idx, sizes)

    def loop(c: str) -> Loop:
        return Loop(sizes[c], st_a.get(c, 0), st_b.get(c, 0), st_o.get(c, 0), c)

    out_loops = (PAD,) * (MAX_OUT - len(out_idx)) + tuple(loop(c) for c in out_idx)
    red_loops = (PAD,) * (MAX_RED - len(red_idx)) + tuple(loop(c) for c in red_idx)
    out_t = comp.tensors[op.out]
    persistent = not out_t.per_sample
    if bool(op.accumulate) != persistent:
        # The machine accumulates exactly into persistent buffers (gradients): the flag must say so.
        _fail(what, f"accumulate={op.accumulate} but the output is {'persistent' if persistent else 'per-sample'}")
    bank = tuple(comp.layout[n][0] for n in names)
    base = tuple(comp.layout[n][1] for n in names)
    desc = ContractDesc(a_base=base[0], b_base=base[1], o_base=base[2], out_count=out_t.size,
                        out_loops=out_loops, red_loops=red_loops, shift=frac[a] + frac[b] - frac[op.out],
                        mode=op.mode, accumulate=bool(op.accumulate), out_w=out_t.fmt.width, banks=bank,
                        names=names)
    return check_desc(desc)


def desc_beats(desc: ContractDesc):
    """The MAC beats of a descriptor in execution order: (addr a, addr b, addr out, first of a reduction,
    last of a reduction), the sequence rtl/tt_loop_addr.v produces."""
    loops = desc.loops
    n_out = len(desc.out_loops)
    idx = [0] * len(loops)
    while True:
        yield (desc.a_base + sum(i * lp.sa for i, lp in zip(idx, loops)),
               desc.b_base + sum(i * lp.sb for i, lp in zip(idx, loops)),
               desc.o_base + sum(i * lp.so for i, lp in zip(idx, loops)),
               all(i == 0 for i in idx[n_out:]),
               all(i == lp.count - 1 for i, lp in zip(idx[n_out:], desc.red_loops)))
        k = len(loops) - 1  # odometer step, innermost loop first
        while k >= 0 and idx[k] == loops[k].count - 1:
            idx[k] = 0
            k -= 1
        if k < 0:
            return
        idx[k] += 1


def execute_desc(desc: ContractDesc, mem_a, mem_b, mem_o, rand=None) -> tuple[np.ndarray, int, int]:
    """Plain reference of one descriptor on flat memories (exact Python ints).

    Returns (the output memory after the op, saturations, max |word written|). `rand`: one draw per output
    element in output order (STOCHASTIC only). Saturations count the RQ clamp and, when accumulating, the clamp
    of the sum (SPEC 5.1), so one element may count twice.
    """
    fmt = Fmt(desc.out_w, 0)
    mem_o = np.array(mem_o, dtype=np.int64, copy=True)
    if desc.mode == STOCHASTIC:
        rand = np.asarray(rand, dtype=np.int64)
        if rand.shape != (desc.out_count,):
            raise ValueError(f"need {desc.out_count} draws, got shape {rand.shape}")
    accs, addrs = [], []
    acc = 0
    for ra, rb, ro, first, last in desc_beats(desc):
        acc = (0 if first else acc) + int(mem_a[ra]) * int(mem_b[rb])
        if last:
            accs.append(acc)
            addrs.append(ro)
    acc_v = np.array(accs, dtype=np.int64)
    fxp.check_acc(acc_v, f"contract -> {desc.names[2]}")
    y = fxp.round_shift(acc_v, desc.shift, desc.mode, rand if desc.mode == STOCHASTIC else None)
    n_sat, maxabs = 0, 0
    for addr, v in zip(addrs, y):
        v, n = fxp.saturate(np.array([v]), fmt)
        n_sat += n
        if desc.accumulate:
            v, n = fxp.saturate(v + mem_o[addr], fmt)
            n_sat += n
        mem_o[addr] = int(v[0])
        maxabs = max(maxabs, abs(int(v[0])))
    return mem_o, n_sat, maxabs


def pack_ports(desc: ContractDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_contract.v): packed buses with loop 0 the innermost
    (the innermost reduction loop), loops 0..MAX_RED-1 the reductions, MAX_RED..NLOOPS-1 the output loops."""
    inner_first = list(reversed(desc.red_loops)) + list(reversed(desc.out_loops))
    counts = sa = sb = so = 0
    for i, lp in enumerate(inner_first):
        counts |= lp.count << (CNT_W * i)
        sa |= lp.sa << (ADDR_W * i)
        sb |= lp.sb << (ADDR_W * i)
        so |= lp.so << (ADDR_W * i)
    return {"a_base": desc.a_base, "b_base": desc.b_base, "o_base": desc.o_base, "counts": counts,
            "stride_a": sa, "stride_b": sb, "stride_o": so, "shift": desc.shift & ((1 << SHIFT_W) - 1),
            "mode": desc.mode, "accumulate": int(desc.accumulate), "out_w": desc.out_w}


__all__ = ["ContractDesc", "Loop", "lower_contract", "execute_desc", "desc_beats", "check_desc", "pack_ports",
           "MAX_OUT", "MAX_RED", "NLOOPS", "CNT_W", "ADDR_W", "SHIFT_W"]
