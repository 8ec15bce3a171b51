"""Requantisation and LFSR primitives against their spec (golden/SPEC.md sections 2-3)."""

import numpy as np
import pytest

from golden import fxp
from golden.fxp import NEAREST, STOCHASTIC, Fmt


def test_lfsr_stream_equals_scalar_steps():
    stream = fxp.LfsrStream(seed=7)
    state, ref = fxp.lfsr_seed_state(7), []
    for _ in range(5000):
        state, r = fxp.lfsr_draw(state)
        ref.append(r)
    assert stream.take(1234).tolist() + stream.take(3766).tolist() == ref
    assert stream.state == state


def test_lfsr_polynomial_is_maximal():
    """The state-transition matrix A has order exactly 2^32-1: A^(2^32-1) = I, A^((2^32-1)/p) != I."""
    step = fxp._gf2_matrix_of(fxp.lfsr_step)

    def mat_mul(x, y):  # columns of x*y
        return np.array([fxp._gf2_apply(x, int(c)) for c in y], dtype=np.uint64)

    def mat_pow(m, e):
        result = np.array([1 << b for b in range(32)], dtype=np.uint64)
        while e:
            if e & 1:
                result = mat_mul(m, result)
            m = mat_mul(m, m)
            e >>= 1
        return result

    ident = np.array([1 << b for b in range(32)], dtype=np.uint64)
    order = 2**32 - 1
    assert np.array_equal(mat_pow(step, order), ident)
    for p in (3, 5, 17, 257, 65537):
        assert not np.array_equal(mat_pow(step, order // p), ident)


def test_seed_zero_state_is_nonzero():
    assert fxp.lfsr_seed_state(0xA5A5A5A5) == 1


@pytest.mark.parametrize("shift", [1, 3, 8, 12])
def test_stochastic_rounding_is_unbiased(shift):
    rng = np.random.default_rng(0)
    acc = rng.integers(-(2**20), 2**20, size=200_000)
    rand = fxp.LfsrStream(seed=3).take(acc.size)
    y = fxp.round_shift(acc, shift, STOCHASTIC, rand)
    err = y - acc / 2**shift
    assert abs(err.mean()) < 2**-9 + 4 / np.sqrt(acc.size)
    assert np.all((y == np.floor(acc / 2**shift)) | (y == np.floor(acc / 2**shift) + 1))


@pytest.mark.parametrize("shift", [10, 16, 47])
def test_stochastic_rounding_has_no_sign_preference_below_the_draw(shift):
    rand = np.arange(256)  # every draw once

    def ups(acc: int) -> int:
        return int(fxp.round_shift(np.full(256, acc), shift, STOCHASTIC, rand).sum())

    # |acc| < 2^(s-10): far below the 8 random bits' resolution, every draw rounds it to 0. With the bits
    # below the draw floored (the old rule) a negative one became -1 for r = 0.
    small = (1 << (shift - 10)) - 1
    for acc in (-small, -1, 1, small):
        assert fxp.round_shift(np.full(256, acc), shift, STOCHASTIC, rand).tolist() == [0] * 256, acc
    # +-j/2^10 LSB (j odd, no tie) moves one LSB away from 0 for round(j/4) of the 256 draws, either sign.
    for j in (1, 3, 5, 511):
        assert ups(j << (shift - 10)) == -ups(-(j << (shift - 10))) == (j + 2) // 4, j


def test_nearest_rounds_half_up_and_left_shift_is_exact():
    assert fxp.round_shift(np.array([3, -3, 5, -5]), 1, NEAREST).tolist() == [2, -1, 3, -2]
    assert fxp.round_shift(np.array([3, -3]), -2, NEAREST).tolist() == [12, -12]


def test_saturation_counts_and_never_wraps():
    y, n = fxp.requantize(np.array([1000, -1000, 5, 7, 8, -9]), 0, NEAREST, Fmt(4, 3))
    assert y.tolist() == [7, -8, 5, 7, 7, -8] and n == 4


@pytest.mark.parametrize("bad", [fxp.SHIFT_MIN - 1, fxp.SHIFT_MAX + 1])
def test_shift_out_of_range_is_rejected(bad):
    with pytest.raises(ValueError, match="shift"):
        fxp.round_shift(np.array([1]), bad, NEAREST)


def test_accumulator_overflow_is_caught():
    with pytest.raises(OverflowError):
        fxp.requantize(np.array([1 << 47]), 0, NEAREST, Fmt(16, 0))
