"""Scalar arithmetic primitives of the accelerator, vectorised with numpy (golden/SPEC.md sections 1-3).

Every integer here is an exact Python/numpy int64; nothing is rounded implicitly. These functions are the
reference the RTL requantiser, LFSR and element-wise unit are checked against, and are themselves checked
against the scalar `fixedpoint`-library model in golden/fxp_ref.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden.arch import LFSR_MASK, LFSR_SEED_XOR, LFSR_STEPS_PER_DRAW  # SPEC 3

ACC_W = 48  # accumulator width in bits (SPEC 1.2)
RAND_BITS = 8  # random bits per stochastic rounding (SPEC 2.2)
SHIFT_MIN, SHIFT_MAX = -16, 47  # legal requantisation shifts (SPEC 2.1)

NEAREST, STOCHASTIC = 0, 1


@dataclass(frozen=True)
class Fmt:
    """Signed two's-complement format: `width` bits, `frac` fraction bits; value = q * 2**-frac."""

    width: int
    frac: int

    def __post_init__(self):
        if not 2 <= self.width <= 32:
            raise ValueError(f"format width {self.width} out of range 2..32")
        if not -32 <= self.frac <= 47:
            raise ValueError(f"format fraction bits {self.frac} out of range -32..47")

    @property
    def qmin(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def qmax(self) -> int:
        return (1 << (self.width - 1)) - 1

    def __str__(self):
        return f"Q{self.width - self.frac}.{self.frac}"


def check_shift(shift: int) -> int:
    if not SHIFT_MIN <= shift <= SHIFT_MAX:
        raise ValueError(f"requantisation shift {shift} outside the RTL's range {SHIFT_MIN}..{SHIFT_MAX}")
    return shift


def check_acc(acc: np.ndarray, what: str = "accumulator") -> None:
    """The RTL accumulator is ACC_W bits; the compiler bounds every op so this can never fire."""
    lim = 1 << (ACC_W - 1)
    if acc.size and (acc.max() >= lim or acc.min() < -lim):
        raise OverflowError(f"{what} exceeds the {ACC_W}-bit accumulator")


def saturate(q: np.ndarray, fmt: Fmt) -> tuple[np.ndarray, int]:
    """Clamp to the format's range; returns (values, number of elements that were clamped)."""
    q = np.asarray(q, dtype=np.int64)
    if not q.size or (q.max() <= fmt.qmax and q.min() >= fmt.qmin):  # the common case: two passes, no temporaries
        return q, 0
    n_sat = int(np.count_nonzero(q > fmt.qmax)) + int(np.count_nonzero(q < fmt.qmin))
    return np.clip(q, fmt.qmin, fmt.qmax), n_sat


def max_abs(q: np.ndarray) -> int:
    """max |q| over the array (0 when empty), from its max and min: two passes and no temporary."""
    return max(int(q.max()), -int(q.min())) if q.size else 0


def round_shift(acc: np.ndarray, shift: int, mode: int, rand: np.ndarray | None = None) -> np.ndarray:
    """Arithmetic shift right by `shift` with rounding (SPEC 2.1-2.2); a negative shift is an exact left shift.

    NEAREST adds half an output LSB (ties go up). STOCHASTIC adds the RAND_BITS random bits placed just
    below the kept LSB and a constant 1 below them: bias = floor((2 r + 1) * 2**shift / 2**(RAND_BITS + 1)).
    """
    acc = np.asarray(acc, dtype=np.int64)
    check_shift(shift)
    if shift <= 0:
        return acc << -shift
    if mode == NEAREST:
        return (acc + (1 << (shift - 1))) >> shift
    if mode != STOCHASTIC:
        raise ValueError(f"unknown rounding mode {mode}")
    r = np.asarray(rand, dtype=np.int64)
    if r.shape != acc.shape:
        raise ValueError(f"random bits shape {r.shape} != values shape {acc.shape}")
    # (2 r + 1) scaled: the draw and the constant half below it (SPEC 2.2). Below the kept LSB by more than
    # RAND_BITS that is r << (k + 1) plus 1 << k; otherwise the constant's bit is shifted out: r >> (RAND_BITS - shift).
    if shift > RAND_BITS:
        k = shift - RAND_BITS - 1
        bias = r << (k + 1)
        bias += acc
        bias += 1 << k
    else:
        bias = r >> (RAND_BITS - shift)
        bias += acc
    bias >>= shift
    return bias


def requantize(acc, shift: int, mode: int, fmt: Fmt, rand=None) -> tuple[np.ndarray, int]:
    """RQ(acc, s, mode) -> saturated output in `fmt` and the saturation count (SPEC 2)."""
    check_acc(np.asarray(acc, dtype=np.int64))
    return saturate(round_shift(acc, shift, mode, rand), fmt)


def quantize_float(x, fmt: Fmt) -> tuple[np.ndarray, int]:
    """Host side: floats to `fmt`, round half up, saturating. Exact: x 2^F is exact in float64 (a power-of-two
    scale) and the half-up decision compares the exact remainder, with no rounding of x 2^F + 0.5."""
    v = np.asarray(x, dtype=np.float64) * 2.0**fmt.frac
    if not np.isfinite(v).all():
        raise ValueError("cannot quantise NaN or infinity")
    lo = np.floor(v)
    q = lo + (v - lo >= 0.5)
    n_sat = int(np.count_nonzero(q > fmt.qmax)) + int(np.count_nonzero(q < fmt.qmin))
    return np.clip(q, fmt.qmin, fmt.qmax).astype(np.int64), n_sat


def align(q: np.ndarray, frac: int, to: int) -> np.ndarray:
    """Re-express q (with `frac` fraction bits) with `to` fraction bits: exact left shift, or floor.
    A left shift that would leave the accumulator raises rather than wrap."""
    q = np.asarray(q, dtype=np.int64)
    if to >= frac:
        up = to - frac
        if up >= ACC_W - 1 and q.any() or q.size and int(np.abs(q).max()) >= 1 << max(ACC_W - 1 - up, 0):
            raise OverflowError(f"aligning by {up} bits exceeds the {ACC_W}-bit accumulator")
        return q << up
    return q >> (frac - to)


def align_round(q: np.ndarray, frac: int, to: int) -> np.ndarray:
    """Like align, but a right shift rounds half up (SPEC 5.2's A: AXPBY's terms). A floor there is a bias of
    -1 at the aligned LSB for every negative product, and after the 8-bit stochastic rounding of the result that is
    a step of 1/256 output LSB per update that no learning rate scales (the end of a cosine schedule drifts)."""
    q = np.asarray(q, dtype=np.int64)
    if to >= frac:
        return align(q, frac, to)
    d = frac - to
    return (q + (1 << (d - 1))) >> d


# --- LFSR (SPEC 3) -------------------------------------------------------------------------------------


def lfsr_seed_state(seed: int) -> int:
    state = (int(seed) ^ LFSR_SEED_XOR) & 0xFFFFFFFF
    return state or 1


def lfsr_step(state: int) -> int:
    """One Galois step (right shift; the bit shifted out selects the feedback mask)."""
    return (state >> 1) ^ (LFSR_MASK if state & 1 else 0)


def lfsr_draw(state: int) -> tuple[int, int]:
    """Scalar reference: advance LFSR_STEPS_PER_DRAW steps, return (new state, random byte)."""
    for _ in range(LFSR_STEPS_PER_DRAW):
        state = lfsr_step(state)
    return state, state & ((1 << RAND_BITS) - 1)


def _gf2_matrix_of(fn) -> np.ndarray:
    """32x32 GF(2) matrix (as 32 column words) of a linear map on 32-bit states."""
    return np.array([fn(1 << b) for b in range(32)], dtype=np.uint64)


def _gf2_apply(cols: np.ndarray, state: int) -> int:
    out = 0
    for b in range(32):
        if state >> b & 1:
            out ^= int(cols[b])
    return out


class LfsrStream:
    """The single random stream of the accelerator: one draw per stochastically rounded element.

    `take(n)` returns the next n random bytes and advances the state, equal to n calls of `lfsr_draw`.
    Vectorised with byte-sliced jump tables: the draw j+1 blocks ahead of a state s is linear in s, so its low
    byte is the XOR of four table rows indexed by the bytes of s.
    """

    BLOCK = 4096
    _low = None  # uint8 (4, 256, BLOCK): low byte of J^(j+1) (v << 8p)
    _full = None  # uint32 (4, 256, BLOCK): all of J^(j+1) (v << 8p), for the state after the last draw

    def __init__(self, seed: int = 0, state: int | None = None):
        self.state = lfsr_seed_state(seed) if state is None else int(state)
        if not self.state:
            raise ValueError("LFSR state must be non-zero")
        self.drawn = 0  # total draws, for reports

    @classmethod
    def _tables(cls):
        if cls._low is None:
            one = _gf2_matrix_of(lambda s: lfsr_draw(s)[0])
            cols = np.empty((cls.BLOCK, 32), dtype=np.uint64)  # column b of J^(j+1)
            cur = one
            for j in range(cls.BLOCK):
                cols[j] = cur
                cur = np.array([_gf2_apply(one, int(c)) for c in cur], dtype=np.uint64)
            full = np.zeros((4, 256, cls.BLOCK), dtype=np.uint32)
            for p in range(4):
                for v in range(1, 256):
                    low = (v & -v).bit_length() - 1
                    full[p, v] = full[p, v & (v - 1)] ^ cols[:, 8 * p + low].astype(np.uint32)
            cls._low = (full & 0xFF).astype(np.uint8)
            cls._full = full
        return cls._low, cls._full

    def take(self, n: int) -> np.ndarray:
        low, full = self._tables()
        out = np.empty(n, dtype=np.int64)
        pos = 0
        while pos < n:
            m = min(self.BLOCK, n - pos)
            b = [(self.state >> (8 * p)) & 0xFF for p in range(4)]
            out[pos : pos + m] = low[0, b[0], :m] ^ low[1, b[1], :m] ^ low[2, b[2], :m] ^ low[3, b[3], :m]
            self.state = int(full[0, b[0], m - 1] ^ full[1, b[1], m - 1] ^ full[2, b[2], m - 1] ^ full[3, b[3], m - 1])
            pos += m
        self.drawn += n
        return out
