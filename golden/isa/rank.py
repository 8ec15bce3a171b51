"""The rank-update unit's descriptor (rtl/tt_rank.v): its fields, their legality, the plain reference of one
descriptor and the RTL's port values.

One `RankDesc` per bond: SPEC 5.6 steps 1-4, exactly golden/semantics.py rank_bond. The bond's cores are master
cores: core k (r0, mn, R) with slice r at left_base + i R + r (i < left_rows = r0 mn), core k+1 (R, mn', r1)
with slice r at right_base + r right_cols + j (j < right_cols = mn' r1). Its state, 16-bit words in the same
address space: lambda r at lam_base + 2r (low half) and + 2r + 1 (high half, signed), the mask at mask_base + r
(live if not 0; written 0 or 1), tau at tau_base + r.

Fields (golden/arch.py; ValueError from `check_rank` names the one that does not fit): bases ADDR_W = 20 bits unsigned
(every word addressable), rank RANK_W = 5 bits, left_rows and right_cols CNT_W = 16 bits, inv_d 24 bits, q_shift 6 bits,
threshold 32 bits, tau_num 48 bits, all unsigned. The state must not overlap the cores.
Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_rank` a ValueError; see
`rank_error`): 1 rank 0 or above MASK_N; 2 left_rows or right_cols 0; 3 q_shift above 47.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from golden.arch import (
    ADDR_W,
    CNT_W,
    EW_MASK_N,
    RANK_ERR_COUNT,
    RANK_ERR_RANK,
    RANK_ERR_SHIFT,
    RANK_INV_W,
    RANK_NUM_W,
    RANK_Q_SHIFT_W,
    RANK_THR_W,
    RANK_W,
)
from golden.semantics import rank_bond

RANK_Q_SHIFT_MAX = 47


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


def rank_fail(desc: RankDesc, problem: str) -> NoReturn:
    raise ValueError(f"rank descriptor for bond {desc.names[0] or '?'} - {desc.names[1] or '?'}: {problem}")


def check_rank(desc: RankDesc) -> RankDesc:
    """Every field within its width and the state apart from the cores and from itself (in one bank: a lowered
    descriptor's bases are bank-local until golden/program.py globalises them); raises ValueError naming the field
    or the overlap."""

    def unsigned(name, bits):
        v = getattr(desc, name)
        if not 0 <= v < 1 << bits:
            rank_fail(desc, f"{name} {v} outside 0..{(1 << bits) - 1} ({bits}-bit field)")

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
            rank_fail(desc, f"{name} words {lo}..{hi - 1} go beyond the {ADDR_W}-bit address field")
    state = ("lambda", "mask", "tau")
    bank = dict(zip(regions, desc.banks))  # bases in different banks cannot overlap
    for a in state:
        for b in regions:
            (alo, ahi), (blo, bhi) = regions[a], regions[b]
            if a != b and (b not in state or a < b) and bank[a] == bank[b] and alo < bhi and blo < ahi:
                rank_fail(desc, f"{a} words {alo}..{ahi - 1} overlap {b} words {blo}..{bhi - 1}")
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
    """Plain reference of one descriptor on a flat memory of signed 16-bit words: golden/semantics.py rank_bond on the
    words the op reads. Returns the memory after the op."""
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
