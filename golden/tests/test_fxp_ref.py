"""The vectorised primitives (golden/fxp.py, machine.sce_gradient) against their fixedpoint-library scalar
definitions (golden/fxp_ref.py): SPEC sections 1.2, 2, 5.2, 5.4, 5.5."""

import numpy as np
import pytest
from fixedpoint import FixedPoint
from hypothesis import HealthCheck, example, given, settings, strategies as st

from golden import fxp, fxp_ref as ref
from golden.fxp import ACC_W, NEAREST, SHIFT_MAX, SHIFT_MIN, STOCHASTIC, Fmt
from golden.semantics import EXP2_ROM, axpby_sum, sce_gradient

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ACC_LO, ACC_HI = -(1 << (ACC_W - 1)), (1 << (ACC_W - 1)) - 1

# accumulator values: the full 48-bit range, small values, and values next to powers of two and the ends
accs = st.one_of(
    st.integers(ACC_LO, ACC_HI),
    st.integers(-300, 300),
    st.builds(
        lambda k, d, sign: max(ACC_LO, min(ACC_HI, sign * (1 << k) + d)),
        st.integers(0, ACC_W - 1),
        st.integers(-2, 2),
        st.sampled_from([-1, 1]),
    ),
)
fmts = st.builds(Fmt, st.integers(2, 32), st.integers(-32, 47))
shifts = st.integers(SHIFT_MIN, SHIFT_MAX)
modes = st.sampled_from([NEAREST, STOCHASTIC])
bytes_ = st.integers(0, 255)


def vec_requantize(acc, shift, mode, fmt, r):
    y, n = fxp.requantize(
        np.array([acc], dtype=np.int64), shift, mode, fmt, np.array([r], dtype=np.int64) if mode == STOCHASTIC else None
    )
    return int(y[0]), n


# --- the library does what the model relies on -------------------------------------------------------------


def test_library_rounding_names():
    """'nearest' is round half up (SPEC 2.2), 'up' is the ceiling, and the signed default is convergent."""

    def rounded(v, how):
        x = FixedPoint(v, True, 8, 2, rounding=how)
        x.resize(8, 0)
        return int(x)

    assert [rounded(v, "nearest") for v in (2.5, -2.5, 2.25, -2.75)] == [3, -2, 2, -3]
    assert [rounded(v, "up") for v in (2.25, -2.75)] == [3, -2]
    assert [rounded(v, "down") for v in (2.75, -2.25)] == [2, -3]
    assert FixedPoint(1.5, True, 8, 2).rounding == "convergent"


# --- SPEC 2: requantisation --------------------------------------------------------------------------------


@SETTINGS
@given(acc=accs, shift=shifts, mode=modes, fmt=fmts, r=bytes_)
@example(acc=ACC_HI, shift=SHIFT_MAX, mode=NEAREST, fmt=Fmt(2, 0), r=0)
@example(acc=ACC_HI, shift=SHIFT_MAX, mode=STOCHASTIC, fmt=Fmt(2, 0), r=255)
@example(acc=ACC_LO, shift=SHIFT_MIN, mode=STOCHASTIC, fmt=Fmt(32, 0), r=0)
@example(acc=ACC_HI, shift=SHIFT_MIN, mode=NEAREST, fmt=Fmt(32, 47), r=0)
@example(acc=-1, shift=1, mode=NEAREST, fmt=Fmt(2, -32), r=0)
def test_requantize_equals_fixedpoint(acc, shift, mode, fmt, r):
    rr = r if mode == STOCHASTIC else None
    y_vec = int(fxp.round_shift(np.array([acc]), shift, mode, np.array([r]) if mode == STOCHASTIC else None)[0])
    assert y_vec == ref.round_shift_scalar(acc, shift, mode, rr)
    y, n = vec_requantize(acc, shift, mode, fmt, r)
    y_ref, sat = ref.requantize_scalar(acc, shift, mode, fmt, rr)
    assert (y, n) == (y_ref, int(sat))
    assert fmt.qmin <= y <= fmt.qmax


@pytest.mark.parametrize("shift", range(SHIFT_MIN, SHIFT_MAX + 1))
def test_every_shift_both_modes(shift):
    """Every legal shift, both modes, the edge random bytes, on values around the rounding boundaries."""
    s = max(shift, 1)
    base = [
        0,
        1,
        -1,
        3,
        -3,
        ACC_HI,
        ACC_LO,
        (1 << (s - 1)),
        -(1 << (s - 1)),
        (1 << s) - 1,
        -(1 << s) + 1,
        123456789,
        -987654321,
    ]
    acc = np.array([max(ACC_LO, min(ACC_HI, v + d)) for v in base for d in (-1, 0, 1)], dtype=np.int64)
    fmt = Fmt(24, 0)
    y, n = fxp.requantize(acc, shift, NEAREST, fmt)
    ref_pairs = [ref.requantize_scalar(int(a), shift, NEAREST, fmt) for a in acc]
    assert y.tolist() == [v for v, _ in ref_pairs] and n == sum(s for _, s in ref_pairs)
    rs = np.array([0, 1, 2, 63, 64, 127, 128, 129, 191, 254, 255], dtype=np.int64)
    for a in acc[::3]:
        ys = fxp.round_shift(np.full(rs.size, a), shift, STOCHASTIC, rs).tolist()
        assert ys == [ref.round_shift_scalar(int(a), shift, STOCHASTIC, int(r)) for r in rs]


@SETTINGS
@given(q=st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-70000, 70000)), fmt=fmts)
def test_saturate_equals_fixedpoint(q, fmt):
    y, n = fxp.saturate(np.array([q], dtype=np.int64), fmt)
    assert (int(y[0]), n) == (lambda t: (t[0], int(t[1])))(ref.saturate_scalar(q, fmt))


@pytest.mark.parametrize("shift", [SHIFT_MIN - 1, SHIFT_MAX + 1, -100, 100])
@pytest.mark.parametrize("mode", [NEAREST, STOCHASTIC])
def test_shift_outside_range_rejected_by_both(shift, mode):
    with pytest.raises(ValueError):
        fxp.requantize(np.array([5]), shift, mode, Fmt(8, 0), np.array([7]))
    with pytest.raises(ValueError):
        ref.requantize_scalar(5, shift, mode, Fmt(8, 0), 7)


@pytest.mark.parametrize("acc", [ACC_HI + 1, ACC_LO - 1, 1 << 60])
def test_accumulator_overflow_rejected_by_both(acc):
    with pytest.raises(OverflowError):
        fxp.requantize(np.array([acc]), 3, NEAREST, Fmt(16, 0))
    with pytest.raises(OverflowError):
        ref.requantize_scalar(acc, 3, NEAREST, Fmt(16, 0))


def test_stochastic_needs_a_draw():
    with pytest.raises(ValueError):
        ref.requantize_scalar(100, 3, STOCHASTIC, Fmt(8, 0), None)
    with pytest.raises(ValueError):
        ref.requantize_scalar(100, 3, STOCHASTIC, Fmt(8, 0), 256)


# --- SPEC 1.2: MAC -----------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=st.data(), wa=st.integers(2, 16), wb=st.integers(2, 16), k=st.integers(1, 12))
def test_mac_is_exact(data, wa, wb, k):
    a = data.draw(st.lists(st.integers(-(1 << (wa - 1)), (1 << (wa - 1)) - 1), min_size=k, max_size=k))
    b = data.draw(st.lists(st.integers(-(1 << (wb - 1)), (1 << (wb - 1)) - 1), min_size=k, max_size=k))
    assert ref.mac_scalar(a, b, wa, wb) == sum(x * y for x, y in zip(a, b))


def test_mac_overflow_raises_never_wraps():
    big = -(1 << 31)
    with pytest.raises(OverflowError):  # 2 * 2^62 does not fit 48 bits
        ref.mac_scalar([big, big], [big, big], 32, 32)
    assert ref.mac_scalar([1 << 23, -(1 << 23)], [1 << 23, 1 << 23], 25, 25) == 0  # partial 2^46: fine
    with pytest.raises(OverflowError):  # an operand that does not fit its width
        ref.mac_scalar([8], [1], 4, 4)


# --- SPEC 5.2 / 5.5: AXPBY and DERIVE -------------------------------------------------------------------------


consts = st.one_of(st.just((1, 0)), st.tuples(st.integers(-32768, 32767), st.integers(-16, 30)))


@SETTINGS
@given(
    x=st.integers(-32768, 32767),
    z=st.integers(-32768, 32767),
    fx=st.integers(-8, 30),
    fz=st.integers(-8, 30),
    alpha=consts,
    beta=consts,
    fy=st.integers(-8, 30),
    mode=modes,
    r=bytes_,
)
@example(x=-32768, z=-1, fx=0, fz=20, alpha=(1, 0), beta=(-3, 24), fy=-8, mode=NEAREST, r=0)  # floors
def test_axpby_equals_machine(x, z, fx, fz, alpha, beta, fy, mode, r):
    def machine_acc():
        acc, shift = axpby_sum(np.array([x]), fx, np.array([z]), fz, alpha, beta, fy, (16, 16))
        fxp.check_acc(acc)
        return acc, shift

    try:
        acc_ref = ref.axpby_acc_scalar(x, fx, 16, z, fz, 16, alpha, beta, fy)
    except OverflowError:  # a term or the sum does not fit 48 bits: the machine must refuse too
        with pytest.raises(OverflowError):
            machine_acc()
        return
    acc, shift = machine_acc()
    fc = ref.axpby_fc_scalar(fy, 16, alpha[1] + fx, 16, beta[1] + fz)
    assert (int(acc[0]), shift) == (acc_ref, fc - fy)
    fmt = Fmt(16, fy)
    rand = r if mode == STOCHASTIC else None
    if not fxp.SHIFT_MIN <= shift <= fxp.SHIFT_MAX:  # the unit refuses such an op (error 1): both models raise
        with pytest.raises(ValueError):
            vec_requantize(acc_ref, shift, mode, fmt, r)
        with pytest.raises(ValueError):
            ref.axpby_scalar(x, fx, 16, z, fz, 16, alpha, beta, fmt, mode, rand)
        return
    assert vec_requantize(acc_ref, shift, mode, fmt, r) == (lambda t: (t[0], int(t[1])))(
        ref.axpby_scalar(x, fx, 16, z, fz, 16, alpha, beta, fmt, mode, rand)
    )


def test_axpby_wide_shift_overflow_detected():
    """4096 << 52 = 2^64 would wrap in int64 at Fc = F_y + 12: the operand widths (every AXPBY op, Adam's second
    moment too) make both models lower Fc so that the term fits, and they agree."""
    acc, shift = axpby_sum(np.array([4096]), 0, np.array([0]), 0, (1, -14), (1, 0), 30, (16, 16))
    assert int(acc[0]) == ref.axpby_acc_scalar(4096, 0, 16, 0, 0, 16, (1, -14), (1, 0), 30)
    assert shift == ref.axpby_fc_scalar(30, 16, -14, 16, 0) - 30


@SETTINGS
@given(w=st.integers(-128, 127), fw=st.integers(0, 12), fc=st.integers(-4, 8))
def test_derive_equals_vectorised(w, fw, fc):
    fmt = Fmt(4, fc)
    y, n = fxp.saturate(fxp.round_shift(np.array([w]), fw - fc, NEAREST), fmt)
    assert (int(y[0]), n) == (lambda t: (t[0], int(t[1])))(ref.derive_scalar(w, fw, fmt))


# --- SPEC 5.4: SCE ------------------------------------------------------------------------------------------------


def test_exp2_rom_equals_machine():
    assert ref.EXP2_ROM_REF == tuple(int(v) for v in EXP2_ROM)
    assert ref.EXP2_ROM_REF[0] == 1 << 15


@settings(max_examples=60, deadline=None)
@given(num=st.integers(0, (1 << 32) - 1), den=st.integers(1, (1 << 32) - 1))
def test_divider(num, den):
    assert ref.divide_scalar(num, den, 32) == num // den


@st.composite
def sce_cases(draw):
    n_out = draw(st.integers(2, 10))
    classes = draw(st.integers(2, n_out))
    wz = draw(st.integers(2, 32))
    # keep d * 5909 * 2^-(F_z + 4) inside int64 for the vectorised model (and F_z in the configurable range)
    fz = draw(st.integers(-8, 30) if wz > 16 else st.integers(-32, 47))
    lo, hi = -(1 << (wz - 1)), (1 << (wz - 1)) - 1
    small = st.integers(max(lo, -64), min(hi, 64))
    z = draw(st.lists(st.one_of(st.integers(lo, hi), small, st.sampled_from([lo, hi])), min_size=n_out, max_size=n_out))
    label = draw(st.integers(0, classes - 1))
    fe = Fmt(draw(st.integers(2, 32)), draw(st.integers(0, 31)))
    return z, fz, wz, label, classes, fe


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=sce_cases())
@example(case=([5, 5, 5, 5], 8, 16, 2, 4, Fmt(16, 14)))  # ties: lowest index wins, p uniform
@example(case=([-32768, 32767, 0], -8, 16, 0, 3, Fmt(2, 0)))  # a huge d, E underflows, saturation
def test_sce_equals_fixedpoint(case):
    z, fz, wz, label, classes, fe = case
    err, n, p, pred = sce_gradient(np.array([z], dtype=np.int64), fz, np.array([label]), classes, fe)
    err_ref, n_ref, p_ref, pred_ref = ref.sce_scalar(z, fz, wz, label, classes, fe)
    assert err[0].tolist() == err_ref
    assert n == n_ref
    assert p[0].tolist() == p_ref
    assert int(pred[0]) == pred_ref


def test_sce_negative_err_frac_rejected_by_both():
    with pytest.raises(ValueError):
        sce_gradient(np.array([[1, 2]]), 8, np.array([0]), 2, Fmt(16, -1))
    with pytest.raises(ValueError):
        ref.sce_scalar([1, 2], 8, 16, 0, 2, Fmt(16, -1))


def test_sce_err_frac_above_31():
    z, fe = [100, 200, -50, 7], Fmt(32, 32)
    err, n, p, _ = sce_gradient(np.array([z]), 8, np.array([1]), 4, fe)
    err_ref, n_ref, p_ref, _ = ref.sce_scalar(z, 8, 16, 1, 4, fe)
    # fixedpoint: p = [1151512824, 1700593664, 641614974, 801097528], err = [1151512824, -2147483648, ...]
    assert p[0].tolist() == p_ref and err[0].tolist() == err_ref and n == n_ref
