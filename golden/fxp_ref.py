"""Scalar reference of the arithmetic primitives, built on the `fixedpoint` library (golden/SPEC.md 1-2, 5.2-5.5).

An independent second definition of what golden/fxp.py (vectorised numpy) and golden/machine.py compute, one
element at a time, written the way a datapath does it: operands are `FixedPoint` words of explicit width,
products and sums are the library's full-precision operations, shifts are moves of the binary point followed
by the library's rounding, and every clamp is the library's `overflow='clamp'` whose overflow alert is caught
and counted. golden/tests/test_fxp_ref.py checks the two definitions against each other.

Modelling notes (fixedpoint 1.0.1, read from its documentation and source):

- A `FixedPoint` needs `n >= 0` fraction bits and, if signed, `m >= 1` integer bits, so a stored format
  Q(W-F).F with F < 0 or F >= W (both legal here, SPEC 1.1) cannot be expressed directly. Every stored value is
  therefore held as its raw two's-complement word, a signed Q W.0 `FixedPoint`; the format's F is tracked by the
  caller and only enters as the shift amount, exactly as in the hardware, where the requantiser sees an integer
  accumulator and a shift.
- Right shifts reinterpret the accumulator bits with `s` fraction bits (value acc * 2^-s) and then drop the
  fraction with the library's rounding: `'down'` is floor (SPEC 2.1), `'nearest'` is round-half-up
  (ties towards +inf, SPEC 2.2 NEAREST). The library's `'up'` is the ceiling (not half-up) and its default for
  signed numbers (`rounding='auto'`) is `'convergent'` (ties to even), so the rounding is always given
  explicitly. Before rounding, one integer bit is added so that the library's own overflow handling of a
  round-up can never fire (the hardware adder is one bit wider than the accumulator).
- Every alert is 'error', so an overflow that is not an explicit clamp raises `FixedPointOverflowError`
  (an `OverflowError`) instead of silently wrapping or clamping; a property mismatch between operands raises too.
  The MAC sums at full precision and checks that the result fits the 48-bit accumulator (SPEC 1.2).
- The library has no division: the one division of SCE (SPEC 5.4 step 4) is a restoring divider built from
  `FixedPoint` subtractions and comparisons.
"""

from __future__ import annotations

import functools
import operator
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from fixedpoint import FixedPoint, FixedPointOverflowError

from golden.fxp import ACC_W, NEAREST, RAND_BITS, SHIFT_MAX, SHIFT_MIN, STOCHASTIC, Fmt

CONST_W = 16  # AXPBY constants alpha, beta are 16-bit signed (SPEC 5.2)
AXPBY_GUARD = 12  # AXPBY aligns both products to F_y + 12 fraction bits (SPEC 5.2)
LOG2E_Q12 = 5909  # round(log2(e) * 2^12) (SPEC 5.4)
EXP2_BITS = 15  # EXP2 ROM fraction bits (SPEC 5.4)
R_BITS = 31  # R = floor(2^31 / S) (SPEC 5.4)

_PROPS: dict[str, Any] = dict(
    overflow="clamp",
    rounding="down",
    overflow_alert="error",
    mismatch_alert="error",
    implicit_cast_alert="error",
    str_base=16,
)


# --- words --------------------------------------------------------------------------------------------------


def word(q: int, width: int) -> FixedPoint:
    """A signed `width`-bit integer word (Q width.0). A value that does not fit raises (never wraps)."""
    if not isinstance(q, int):
        q = int(q)
    return FixedPoint(q, True, width, 0, **_PROPS)


_ZERO_ACC = word(0, ACC_W)  # never mutated: `+` returns a new word


def _grow(x: FixedPoint, m: int) -> FixedPoint:
    """Sign-extend to at least `m` integer bits (exact)."""
    if x.m < m:
        x.resize(m, x.n)
    return x


def _reinterpret(x: FixedPoint, n: int) -> FixedPoint:
    """The same bits with the binary point moved `n` places left: an integer word q becomes q * 2^-n."""
    assert x.n == 0 and len(x) - n >= 1
    return FixedPoint(hex(x.bits), True, len(x) - n, n, **_PROPS)


def _shr(x: FixedPoint, s: int, rounding: str) -> FixedPoint:
    """Integer word x -> x / 2^s rounded to an integer word by the library (`'down'` floor, `'nearest'` half-up)."""
    if s <= 0:
        return _shl(x, -s)
    y = _reinterpret(_grow(x, max(x.m + 1, s + 1)), s)  # a spare integer bit: rounding up cannot overflow
    y.resize(y.m, 0, rounding=rounding)
    return y


def _shl(x: FixedPoint, k: int) -> FixedPoint:
    """Exact left shift by k >= 0 (the word grows by k bits first, so the library's `<<` cannot drop bits)."""
    if k == 0:
        return x
    x = _grow(x, x.m + k)
    return x << k


def _clamp(x: FixedPoint, width: int) -> tuple[FixedPoint, bool]:
    """Saturate an integer word to `width` bits with the library's clamp; returns (word, whether it clamped).

    The clamp is tried with overflow_alert='error': the alert (raised before anything changes, and the resize
    context restores the word) is what is counted; the clamp is then done with the alert silenced.
    """
    assert x.n == 0
    if x.m <= width:
        x.resize(width, 0)
        return x, False
    try:
        x.resize(width, 0, overflow="clamp", alert="error")
        return x, False
    except FixedPointOverflowError:
        x.resize(width, 0, overflow="clamp", alert="ignore")
        return x, True


def _fit_acc(x: FixedPoint, what: str = "accumulator") -> FixedPoint:
    """Bring a full-precision integer sum back to ACC_W bits; a value that does not fit raises OverflowError."""
    assert x.n == 0
    if x.m < ACC_W:
        return _grow(x, ACC_W)
    try:
        x.resize(ACC_W, 0, overflow="clamp", alert="error")
    except FixedPointOverflowError as e:
        raise OverflowError(f"{what} exceeds the {ACC_W}-bit accumulator") from e
    return x


# --- SPEC 2: requantisation ---------------------------------------------------------------------------------


def check_shift_scalar(shift: int) -> int:
    shift = operator.index(shift)  # an integer (a float is refused)
    if not SHIFT_MIN <= shift <= SHIFT_MAX:
        raise ValueError(f"requantisation shift {shift} outside {SHIFT_MIN}..{SHIFT_MAX}")
    return shift


def saturate_scalar(q: int, fmt: Fmt) -> tuple[int, bool]:
    """SPEC 2.3: clamp an integer to `fmt`; returns (value, saturated)."""
    q = int(q)
    y, sat = _clamp(word(q, max(fmt.width, q.bit_length() + 1)), fmt.width)
    return int(y), sat


def _round_shift_word(acc: int, shift: int, mode: int, rand: int | None) -> FixedPoint:
    shift = check_shift_scalar(shift)
    if mode not in (NEAREST, STOCHASTIC):
        raise ValueError(f"unknown rounding mode {mode}")
    if mode == STOCHASTIC:
        if rand is None or not 0 <= int(rand) < (1 << RAND_BITS):
            raise ValueError(f"STOCHASTIC rounding needs a {RAND_BITS}-bit random draw, got {rand!r}")
    try:
        a = word(int(acc), ACC_W)
    except FixedPointOverflowError as e:
        raise OverflowError(f"accumulator value {acc} exceeds {ACC_W} bits") from e
    if shift <= 0:  # exact left shift
        return _shl(a, -shift)
    if mode == NEAREST:  # acc * 2^-s rounded half up by the library
        return _shr(a, shift, "nearest")
    # STOCHASTIC: the byte r and a constant 1 below it as the fraction (2r + 1) / 2^9, cut to the s kept bits
    # (floor), added, then floor.
    assert rand is not None, "stochastic rounding needs the random byte"
    bias = FixedPoint(hex(2 * int(rand) + 1), True, 1, RAND_BITS + 1, **_PROPS)  # Q1.9 in (0, 1)
    if shift < RAND_BITS + 1:
        bias.resize(1, shift, rounding="down")  # s < 9: floor((2r + 1) 2^s / 2^9) / 2^s; s > 9: exact
    y = _reinterpret(a, shift) + bias  # acc / 2^s + bias, full precision: one more integer bit
    y.resize(y.m, 0, rounding="down")  # floor
    return y


def round_shift_scalar(acc: int, shift: int, mode: int, rand: int | None = None) -> int:
    """SPEC 2.1-2.2 on one ACC_W-bit accumulator value (no saturation). STOCHASTIC always needs its draw."""
    return int(_round_shift_word(acc, shift, mode, rand))


def requantize_scalar(acc: int, shift: int, mode: int, fmt: Fmt, rand: int | None = None) -> tuple[int, bool]:
    """RQ(acc, s, mode) -> (value in `fmt`, saturated) (SPEC 2). `rand` is the element's LFSR byte (STOCHASTIC)."""
    y, sat = _clamp(_round_shift_word(acc, shift, mode, rand), fmt.width)
    return int(y), sat


def accumulate_scalar(buf: int, y: int, fmt: Fmt) -> tuple[int, bool]:
    """out <- SAT(out + y) for a gradient buffer (SPEC 5.1 `accumulate`): a full-precision add, then the clamp."""
    s = word(buf, fmt.width) + word(y, fmt.width)
    y2, sat = _clamp(s, fmt.width)
    return int(y2), sat


# --- SPEC 1.2: multiply-accumulate ----------------------------------------------------------------------------


def mac_scalar(a_vals, b_vals, wa: int, wb: int, what: str = "accumulator") -> int:
    """Exact sum of products of `wa`- and `wb`-bit signed words in the ACC_W-bit accumulator, in the given order.

    Products and sums are the library's full-precision operations (nothing is dropped or wrapped); the sum is
    then brought to ACC_W bits with overflow_alert='error', so a result that does not fit raises OverflowError.
    (A two's-complement accumulator gives the exact result whenever the final sum fits, whatever its partial
    sums did, so checking the final sum is checking the hardware.) An operand that does not fit raises too.
    """
    acc = _ZERO_ACC
    for a, b in zip(a_vals, b_vals, strict=True):
        acc = acc + _operand(a, wa) * _operand(b, wb)
    return int(_fit_acc(acc, what))


@functools.lru_cache(maxsize=1 << 16)
def _operand(q: int, width: int) -> FixedPoint:
    """A read-only operand word (cached: contractions read the same words many times; never mutated)."""
    return word(q, width)


# --- SPEC 5.2: AXPBY -------------------------------------------------------------------------------------------


def _align(prod: FixedPoint, frac: int, to: int) -> FixedPoint:
    """SPEC 5.2 `A`: re-express an integer word with `frac` fraction bits with `to`: exact left shift, or round
    half up."""
    return _shl(prod, to - frac) if to >= frac else _shr(prod, frac - to, "nearest")


def axpby_fc_scalar(fy: int, wx: int, px: int, wz: int | None, pz: int) -> int:
    """SPEC 5.2 Fc: F_y + 12, lowered so that each term's width + alignment stays <= 31 (48-bit accumulator)."""
    fc = fy + AXPBY_GUARD
    fc = min(fc, 31 - wx + px)
    return fc if wz is None else min(fc, 31 - wz + pz)


def axpby_acc_scalar(
    x: int, fx: int, wx: int, z: int | None, fz: int, wz: int, alpha: tuple[int, int], beta: tuple[int, int], fy: int
) -> int:
    """The accumulator of AXPBY: A(alpha x) + A(beta z), each product re-expressed with Fc = F_y + 8 fraction
    bits (SPEC 5.2); a term or a sum that does not fit the accumulator raises OverflowError."""
    (qa, fa), (qb, fb) = alpha, beta
    fc = axpby_fc_scalar(fy, wx, fa + fx, wz if z is not None else None, fb + fz)
    acc = _fit_acc(_align(word(qa, CONST_W) * word(x, wx), fa + fx, fc), "axpby term")
    if z is not None:
        acc = acc + _fit_acc(_align(word(qb, CONST_W) * word(z, wz), fb + fz, fc), "axpby term")
    return int(_fit_acc(acc, "axpby accumulator"))


def axpby_scalar(
    x: int,
    fx: int,
    wx: int,
    z: int | None,
    fz: int,
    wz: int,
    alpha: tuple[int, int],
    beta: tuple[int, int],
    fmt_y: Fmt,
    mode: int,
    rand: int | None = None,
) -> tuple[int, bool]:
    """y = RQ(A(alpha x) + A(beta z), 8, mode) -> (value in fmt_y, saturated) (SPEC 5.2)."""
    acc = axpby_acc_scalar(x, fx, wx, z, fz, wz, alpha, beta, fmt_y.frac)
    fc = axpby_fc_scalar(fmt_y.frac, wx, alpha[1] + fx, wz if z is not None else None, beta[1] + fz)
    return requantize_scalar(acc, fc - fmt_y.frac, mode, fmt_y, rand)


# --- SPEC 5.5 step 3: DERIVE -----------------------------------------------------------------------------------


def derive_scalar(w: int, frac_w: int, fmt_c: Fmt) -> tuple[int, bool]:
    """Compute-core element from a master element: RQ(w, F_w - F_c, NEAREST) saturated to the compute format."""
    return requantize_scalar(w, frac_w - fmt_c.frac, NEAREST, fmt_c)


# --- SPEC 5.4: SCE -------------------------------------------------------------------------------------------------


def exp2_rom() -> tuple[int, ...]:
    """EXP2[f] = round(2^15 * 2^(-f/256)), f = 0..255, computed in 50-digit decimal arithmetic (no float)."""
    with localcontext() as ctx:
        ctx.prec = 50
        ln2 = Decimal(2).ln()
        return tuple(
            int((ln2 * (Decimal(EXP2_BITS) - Decimal(f) / 256)).exp().quantize(Decimal(1), rounding=ROUND_HALF_UP))
            for f in range(256)
        )


EXP2_ROM_REF = exp2_rom()


def divide_scalar(num: int, den: int, width: int = 32) -> int:
    """floor(num / den) for 0 <= num < 2^width, 0 < den < 2^width: a restoring divider, one quotient bit a step.

    The partial remainder is a (width + 2)-bit word: shifted left (`<<`, never losing a bit since rem < den),
    the next numerator bit ORed in, compared with the divisor and, if not smaller, reduced by it.
    """
    if not 0 < den < (1 << width) or not 0 <= num < (1 << width):
        raise ValueError(f"divider operands out of range: {num} / {den}")
    wd = width + 2
    d = word(den, wd)
    rem = word(0, wd)
    q = 0
    for i in reversed(range(width)):
        rem = rem << 1
        if (num >> i) & 1:
            rem = rem | 1
        if rem >= d:
            rem = _fit_width(rem - d, wd)
            q |= 1 << i
    return q


def _fit_width(x: FixedPoint, width: int) -> FixedPoint:
    x.resize(width, 0, overflow="clamp", alert="error")  # raises if the value does not fit
    return x


def sce_scalar(
    z: list[int], frac_z: int, width_z: int, label: int, classes: int, err_fmt: Fmt
) -> tuple[list[int], int, list[int], int]:
    """SPEC 5.4 for one sample: (error [n_out] saturated to err_fmt, saturations, p [classes], prediction)."""
    if not 0 <= label < classes <= len(z):
        raise ValueError(f"label {label} / classes {classes} / outputs {len(z)} inconsistent")
    if err_fmt.frac < 0:
        raise ValueError(f"SCE needs F_e >= 0 (the label term is 2^F_e), got {err_fmt.frac}")
    zw = [word(v, width_z) for v in z[:classes]]
    # 1. zmax, d_j = zmax - z_j >= 0 (fraction F_z); 6. the lowest index among equal maxima
    pred = 0
    for j in range(1, classes):
        if zw[j] > zw[pred]:
            pred = j
    zmax = zw[pred]
    # 2. t_j = floor(d_j * 5909 / 2^(F_z + 4))
    c_log2e = word(LOG2E_Q12, 14)
    t = [_shr(_grow(zmax - zj, width_z + 1) * c_log2e, frac_z + 4, "down") for zj in zw]
    # 3. E_j = EXP2[t_j mod 256] >> floor(t_j / 256), or 0 if floor(t_j / 256) >= 16
    e = []
    for tj in t:  # t_j >= 0 is an integer word: its low 8 bits index the ROM, the rest is the shift
        ip = int(tj >> 8)
        frac_idx = int(tj & 0xFF)
        e.append(word(0, EXP2_BITS + 2) if ip >= 16 else word(EXP2_ROM_REF[frac_idx], EXP2_BITS + 2) >> ip)
    # 4. S = sum E_j; R = floor(2^31 / S)
    s = word(0, 2 * EXP2_BITS)
    for ej in e:
        s = _fit_width(s + ej, 2 * EXP2_BITS)
    r = divide_scalar(1 << R_BITS, int(s), R_BITS + 1)
    rw = word(r, R_BITS + 2)
    # 5. p_j = floor(E_j R / 2^(31 - F_e)); e_j = p_j - [j == c] 2^F_e, saturated
    p = [int(_shr(ej * rw, R_BITS - err_fmt.frac, "down")) for ej in e]
    err, n_sat = [], 0
    for j, pj in enumerate(p):
        v = word(pj, pj.bit_length() + 1)
        if j == label:
            v = v - _shl(word(1, 2), err_fmt.frac)  # full-precision subtract of 2^F_e
        y, sat = _clamp(v, err_fmt.width)
        err.append(int(y))
        n_sat += sat
    err += [0] * (len(z) - classes)  # padded outputs: error 0
    return err, n_sat, p, pred


# --- host side: float -> stored word ---------------------------------------------------------------------------


def quantize_float_scalar(x: float, fmt: Fmt) -> tuple[int, bool]:
    """A float to `fmt`, round half up, saturating (host-side loading of parameters and inputs).

    x * 2^F is exact in binary floating point (a power-of-two scale); the library then rounds it to an integer
    word with 'nearest' (half up) and clamps, raising its overflow alert, which is counted.
    """
    v = float(x) * 2.0**fmt.frac
    if v != v:
        raise ValueError("cannot quantise NaN")
    props: dict[str, Any] = dict(_PROPS, rounding="nearest")
    try:
        return int(FixedPoint(v, True, fmt.width, 0, **props)), False
    except FixedPointOverflowError:
        return int(FixedPoint(v, True, fmt.width, 0, **dict(props, overflow_alert="ignore"))), True


__all__ = [
    "word",
    "check_shift_scalar",
    "saturate_scalar",
    "round_shift_scalar",
    "requantize_scalar",
    "accumulate_scalar",
    "mac_scalar",
    "axpby_acc_scalar",
    "axpby_scalar",
    "derive_scalar",
    "exp2_rom",
    "EXP2_ROM_REF",
    "divide_scalar",
    "sce_scalar",
    "quantize_float_scalar",
]
