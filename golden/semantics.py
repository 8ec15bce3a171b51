"""The arithmetic of golden/SPEC.md beyond the primitives of golden/fxp.py: AXPBY's alignment, Adam's reciprocal
square root, the softmax cross-entropy gradient, the rank update of a bond, and the quantised constants.

Each is a function of integers that both executors of the programs (golden/machine.py, golden/scalar_machine.py) and
the units' plain references (golden/isa/) compute the same way; nothing here knows a tensor or a program.
"""

from __future__ import annotations

import math

import numpy as np

from golden import fxp
from golden.fxp import Fmt, align, align_round

EXP2_ROM = np.array([round(2**15 * 2 ** (-f / 256)) for f in range(256)], dtype=np.int64)
LOG2E_Q12 = 5909  # round(log2(e) * 2^12), SPEC 5.4
RSQRT_ROM = np.array([round(2**16 / math.sqrt(i)) if i >= 64 else 0 for i in range(256)], dtype=np.int64)
SAT_COUNTER_MAX = 2**32 - 1  # the saturation counters of SPEC 2.3
ADAM_DELTA_FMT = Fmt(16, 0)  # the Adam step saturates to 16 bits before it is subtracted
AXPBY_GUARD = 12  # fraction bits kept below the output LSB when AXPBY aligns its two terms (SPEC 5.2)
MOMENTUM_HEADROOM_BITS = 4  # momentum sums about 1/(1 - mu) = 10 gradients: 4 more integer bits than they
LAMBDA_FMT = Fmt(32, 24)  # SPEC 5.6
LAMBDA_DECAY_Q16 = 58982  # round(0.9 * 2^16)
LAMBDA_GAIN_Q16 = 6554  # round(0.1 * 2^16)


def shift_control(max_abs: int, width: int, frac: int, frac_min: int, frac_max: int) -> int:
    """SPEC 4.2: a tensor's next fraction bits from the max |x| written since the last adaptation: one fewer above
    0.9 of full scale, one more below 0.3, within frac_min..frac_max; the same where nothing but zeros was written
    (no evidence of scale)."""
    if max_abs == 0:
        return frac
    if max_abs > (9 << (width - 1)) // 10:
        return max(frac - 1, frac_min)
    if max_abs < (3 << (width - 1)) // 10:
        return min(frac + 1, frac_max)
    return frac


def axpby_fc(fy: int, *terms: tuple[int, int]) -> int:
    """SPEC 5.2: the fraction bits Fc both AXPBY terms are aligned to: F_y + AXPBY_GUARD, lowered where a term
    (operand width w, product fraction bits f) would need more than ACC_W - 17 bits (w + Fc - f <= ACC_W - 17,
    the element-wise unit's accumulator bound). The final RQ shifts by Fc - F_y."""
    return _within_acc_bound(fy + AXPBY_GUARD, terms)


def axpby_sum(
    x: np.ndarray,
    fx: int,
    z: np.ndarray,
    fz: int,
    alpha: tuple[int, int],
    beta: tuple[int, int],
    fy: int,
    widths: tuple[int, int],
) -> tuple[np.ndarray, int]:
    """SPEC 5.2: alpha x and beta z (constants as (q, F)) aligned to Fc fraction bits (axpby_fc; rounded half up when
    finer) and summed; returns (the sum, the final RQ's shift Fc - F_y). `widths` (of x and z): the element-wise
    unit's bound on Fc; Adam's second moment passes 2 w_g - 1 for g^2."""
    (qa, fa), (qb, fb) = alpha, beta
    fc = axpby_fc(fy, (widths[0], fa + fx), (widths[1], fb + fz))
    return align_round(qa * x, fa + fx, fc) + align_round(qb * z, fb + fz, fc), fc - fy


def penalty_fc(g: tuple[int, int], w: tuple[int, int], f_tau: int) -> int:
    """SPEC 5.6: the fraction bits Fc PENALTY aligns g and (tau_l + tau_r) w to: every bit of both (g's F_g, the
    product's F_tau + F_w), lowered where a term (operand width, fraction bits) would pass the accumulator bound, as
    AXPBY's. A small prior against a coarse gradient format needs the lowering (F_tau + F_w - F_g above 15)."""
    (wg, fg), (ww, fw) = g, w
    return _within_acc_bound(max(fg, f_tau + fw), [(wg, fg), (ww, f_tau + fw)])


def _within_acc_bound(fc: int, terms) -> int:
    """`fc`, lowered until every term (operand width w, fraction bits f) fits the element-wise unit's accumulator
    bound w + Fc - f <= ACC_W - 17."""
    for w, f in terms:
        fc = min(fc, fxp.ACC_W - 17 - w + f)
    return fc


def rsqrt_parts(u: np.ndarray, frac: int) -> tuple[np.ndarray, np.ndarray]:
    """SPEC 5.5: 1/sqrt(u 2^-frac) = RSQRT_ROM[idx] 2^-16 2^-h for u >= 1, with idx in [64, 256)."""
    b = np.frexp(u.astype(np.float64))[1].astype(np.int64)  # bit length: exact, u < 2^53
    t = b - 8
    t += (t + frac) & 1  # make t + frac even so the square root of 2^(t - frac) is a power of two
    idx = np.where(t >= 0, u >> np.maximum(t, 0), u << np.maximum(-t, 0))
    return RSQRT_ROM[idx], (t - frac) >> 1


def adam_eps_q(train, frac_v: int) -> int:
    """SPEC 5.5: Adam's epsilon on the batch-summed gradient's second moment, in v's format, at least 1."""
    return max(1, round((train.eps * train.batch) ** 2 * 2.0**frac_v))


def adam_h_range(v_w: int, f_v: int) -> tuple[int, int]:
    """The normalisation exponents h of rsqrt_parts that an Adam step over a v of v_w bits with F_v fraction bits
    can give, as the element-wise unit's start-time check bounds them (SPEC 5.5): (-8 - F_v) >> 1 (u = 1) to
    (max(v_w, 16) + 1 - F_v) >> 1 (u = max(v, 0) + eps_q below 2^max(v_w, 16), eps_q < 2^15)."""
    return (-8 - f_v) >> 1, (max(v_w, 16) + 1 - f_v) >> 1


def sce_gradient(z: np.ndarray, frac_z: int, labels: np.ndarray, classes: int, err_fmt: Fmt):
    """SPEC 5.4 for a batch of logits z [B, n_out]: returns (error [B, n_out] saturated, n_sat, p [B, C], pred)."""
    zc = z[:, :classes]
    d = zc.max(axis=1, keepdims=True) - zc
    t = (d * LOG2E_Q12) >> (frac_z + 4) if frac_z + 4 >= 0 else (d * LOG2E_Q12) << -(frac_z + 4)
    ip = t >> 8
    e = np.where(ip >= 16, 0, EXP2_ROM[t & 255] >> np.minimum(ip, 63))
    s = e.sum(axis=1, keepdims=True)
    r = (1 << 31) // s
    p = align(e * r, 31, err_fmt.frac)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(labels)), labels] = 1 << err_fmt.frac
    err = np.zeros_like(z)
    err[:, :classes] = p - onehot
    err, n_sat = fxp.saturate(err, err_fmt)
    return err, n_sat, p, np.argmax(zc, axis=1)


def sce_loss(p_label: np.ndarray, frac_err: int) -> np.ndarray:
    """Cross-entropy of each sample from the probability of its label as the SCE unit gives it (err format)."""
    return -np.log(np.maximum(p_label, 1) / 2.0**frac_err)


def inv_d(d: int) -> int:
    """INV_D = round(2^24 / (D + 1)) for a slice of D elements (SPEC 5.6 step 2)."""
    return round(2**24 / (d + 1))


def pack_lambdas(lam: list[int]) -> np.ndarray:
    """Lambdas as the state bank's words: per slice the low half (as a signed 16-bit word), then the high half."""
    return np.array([w for v in lam for w in ((v & 0xFFFF) - ((v & 0x8000) << 1), v >> 16)], dtype=np.int64)


def unpack_lambdas(words: np.ndarray) -> list[int]:
    """The inverse of pack_lambdas: per slice the low half, then the high half (signed)."""
    return [(int(hi) << 16) | (int(lo) & 0xFFFF) for lo, hi in zip(words[0::2], words[1::2])]


def bond_sums(left: np.ndarray, right: np.ndarray) -> tuple[list[int], int]:
    """SPEC 5.6 step 1: M, the sum of squares of every slice r of the bond between cores `left` (r_prev, m, n, R) and
    `right` (R, m', n', r_next), on Python ints; and D, the words of a slice."""
    m = (left * left).sum(axis=(0, 1, 2)) + (right * right).sum(axis=(1, 2, 3))
    return [int(v) for v in m], left[..., 0].size + right[0].size


def slice_gate(shape: tuple[int, ...], left: np.ndarray | None, right: np.ndarray | None) -> np.ndarray:
    """SPEC 5.6 MASK: per element of a core of `shape` (r_prev, m, n, r_next), in address order, 1 where neither
    adjoining slice is pruned: a mask word other than 0 is live; an outer bond (None) has every slice live."""
    r0, _, _, r1 = shape
    lv = (left != 0) if left is not None else np.ones(r0, dtype=bool)
    rv = (right != 0) if right is not None else np.ones(r1, dtype=bool)
    return (lv[:, None, None, None] * rv[None, None, None, :] * np.ones(shape, dtype=np.int64)).ravel()


def slice_taus(shape: tuple[int, ...], left: np.ndarray | None, right: np.ndarray | None) -> np.ndarray:
    """SPEC 5.6 PENALTY: per element of a core of `shape` (r_prev, m, n, r_next), in address order, tau_left[r_prev]
    + tau_right[r_next]; an outer bond (None) has no tau."""
    r0, _, _, r1 = shape
    lt = left if left is not None else np.zeros(r0, dtype=np.int64)
    rt = right if right is not None else np.zeros(r1, dtype=np.int64)
    return (lt[:, None, None, None] + rt[None, None, None, :] + np.zeros(shape, dtype=np.int64)).ravel()


TAU_MAX = (1 << 15) - 1  # tau is a 16-bit signed table entry
Q_CLAMP = 1 << 36  # any Q at or above this saturates lambda, whatever the old one: rtl/tt_rank.v keeps 37 bits of Q


def slice_mean_squares(sums: list[int], inv: int, q_shift: int) -> list[int]:
    """Q = RQ(M * INV_D, q_shift, NEAREST) per slice (q_shift = 2 F_w + 24 - F_lambda >= 0), on Python ints."""
    return [(m * inv + ((1 << q_shift) >> 1)) >> q_shift for m in sums]


def rank_bond(
    lam: list[int], mask: list[int], sums: list[int], inv: int, q_shift: int, threshold: int, tau_num: int
) -> tuple[list[int], list[int], list[int]]:
    """SPEC 5.6 steps 2-4 for one bond, on Python ints (exact at any width): the new lambdas, masks (1 live, 0
    pruned; a mask word other than 0 is live) and taus, from the old lambdas and masks and the slices' sums of squares.
    rtl/tt_rank.v computes the same (golden/isa/rank.py execute_rank)."""
    lo, hi = LAMBDA_FMT.qmin, LAMBDA_FMT.qmax
    new = [
        min(max((LAMBDA_DECAY_Q16 * l + LAMBDA_GAIN_Q16 * q + (1 << 15)) >> 16, lo), hi)
        for l, q in zip(lam, slice_mean_squares(sums, inv, q_shift))
    ]
    keep = [int(l >= threshold and m != 0) for l, m in zip(new, mask)]
    if not any(keep):  # a bond never goes to rank 0: its live slice with the largest lambda stays (the first of
        live = [r for r, m in enumerate(mask) if m != 0]  # equals; slice 0 if none was live)
        keep[max(live, key=lambda r: (new[r], -r)) if live else 0] = 1
    taus = [min(tau_num // max(l, 1), TAU_MAX) if k else 0 for l, k in zip(new, keep)]
    return new, keep, taus


def draw_index(layout: str, order: str, sizes: dict[str, int]) -> np.ndarray:
    """Per element of a tensor stored row-major over the indices `layout`, in address order: its position in the
    row-major order over `order`, the same indices permuted (SPEC 5.1: which draw of its op the element takes)."""
    pos = np.arange(math.prod(sizes[c] for c in order)).reshape([sizes[c] for c in order])
    return pos.transpose([order.index(c) for c in layout]).ravel()


def quant_const(x: float, width: int = 16, max_frac: int = 30) -> tuple[int, int]:
    """A constant as a `width`-bit integer with as many fraction bits as fit (at most max_frac): (q, F)."""
    if x == 0:
        return 0, 0
    lim = (1 << (width - 1)) - 1
    frac = max_frac
    while frac > -16 and abs(round(x * 2**frac)) > lim:
        frac -= 1
    q = round(x * 2**frac)
    if abs(q) > lim:
        raise ValueError(f"constant {x} cannot be represented in {width} bits")
    return (q, frac) if q else (0, 0)  # below half an LSB at the finest format: zero (e.g. the end of a schedule)
