"""cocotb tests of tt_requant against golden/fxp.py (SPEC section 2).

Each element (acc, shift, mode, rnd) is checked bit-exactly: y and sat against fxp.requantize (fxp.round_shift
+ fxp.saturate when ACC_W != 48), shift_err against fxp.check_shift. The pipeline latency is read from the
RTL's LATENCY localparam. numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from collections import deque
from collections.abc import Iterable, Sequence

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import fxp
from verif.lanes import pack, unpack

SHIFT_W = 7  # width of each lane's shift field (signed)
Elem = tuple[int, int, int, int]  # one lane's input: (acc, shift, mode, rnd)
Result = tuple[int, int, int]  # its golden output: (y, sat, shift_err)
ILLEGAL_SHIFTS = [fxp.SHIFT_MIN - 1, fxp.SHIFT_MAX + 1, -(1 << (SHIFT_W - 1)), (1 << (SHIFT_W - 1)) - 1]


class Dut:
    """Parameters read from the HDL, and packing of the per-lane fields."""

    def __init__(self, dut):
        self.dut = dut
        self.acc_w = int(dut.ACC_W.value)
        self.out_w = int(dut.OUT_W.value)
        self.lanes = int(dut.LANES.value)
        self.latency = int(dut.LATENCY.value)
        self.fmt = fxp.Fmt(self.out_w, 0)
        assert len(dut.acc) == self.acc_w * self.lanes and len(dut.y) == self.out_w * self.lanes
        assert 1 <= self.latency <= 8
        self.acc_min, self.acc_max = -(1 << (self.acc_w - 1)), (1 << (self.acc_w - 1)) - 1

    def drive(self, valid, elems):
        """elems: LANES tuples (acc, shift, mode, rnd); lanes beyond len(elems) get zeros."""
        elems = list(elems) + [(0, 0, 0, 0)] * (self.lanes - len(elems))
        d = self.dut
        d.in_valid.value = int(valid)
        d.acc.value = pack([e[0] for e in elems], self.acc_w)
        d.shift.value = pack([e[1] for e in elems], SHIFT_W)
        d.mode.value = pack([e[2] for e in elems], 1)
        d.rnd.value = pack([e[3] for e in elems], 8)

    def sample(self):
        """(out_valid, y, sat, shift_err); the data registers are not reset, so they are read only when valid."""
        d = self.dut
        if not int(d.out_valid.value):
            return 0, None, None, None
        return (
            1,
            unpack(int(d.y.value), self.out_w, self.lanes, True),
            unpack(int(d.sat.value), 1, self.lanes, False),
            unpack(int(d.shift_err.value), 1, self.lanes, False),
        )

    def expect(self, elem: Elem) -> Result:
        """Golden (y, sat, shift_err) of one element."""
        acc, shift, mode, rnd = elem
        try:
            fxp.check_shift(shift)
        except ValueError:
            return 0, 0, 1  # illegal op: y forced to 0, no saturation, error raised
        a = np.array([acc], dtype=np.int64)
        r = np.array([rnd], dtype=np.int64) if mode == fxp.STOCHASTIC else None
        if self.acc_w == fxp.ACC_W:
            y, n_sat = fxp.requantize(a, shift, mode, self.fmt, r)
        else:
            y, n_sat = fxp.saturate(fxp.round_shift(a, shift, mode, r), self.fmt)
        return int(y[0]), n_sat, 0


class Stats:
    """Which corners the stimulus actually reached (checked at the end so a weak stimulus fails)."""

    def __init__(self):
        self.n = self.sat_hi = self.sat_lo = self.err = self.ties = 0
        self.shifts = set()
        self.modes = set()

    def add(self, elem, exp, qmax):
        acc, shift, mode, _ = elem
        y, sat, err = exp
        self.n += 1
        self.err += err
        self.sat_hi += bool(sat and y == qmax)
        self.sat_lo += bool(sat and y != qmax)
        self.shifts.add(shift)
        self.modes.add(mode)
        if not err and shift > 0 and mode == fxp.NEAREST and acc & ((1 << shift) - 1) == 1 << (shift - 1):
            self.ties += 1


async def start(dut) -> Dut:
    h = Dut(dut)
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    h.drive(0, [])
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    return h


async def stream(h: Dut, cycles: Iterable[tuple[int, Sequence[Elem]]], stats: Stats | None = None):
    """Drive (valid, elems) per cycle; check every cycle's outputs against the golden model."""
    # Expected outputs, oldest first, as each lane's (element, golden result), None for a cycle with out_valid
    # low: an input driven now is sampled LATENCY falling edges later, and one falling edge passes per loop
    # iteration before the pop.
    pending: deque[list[tuple[Elem, Result]] | None] = deque([None] * (h.latency - 1))
    qmax = h.fmt.qmax
    idle: list[tuple[int, Sequence[Elem]]] = [(0, [])] * h.latency  # drain the pipeline at the end
    for i, (valid, elems) in enumerate([*cycles, *idle]):
        h.drive(valid, elems)
        lanes = None
        if valid:
            padded = list(elems) + [(0, 0, 0, 0)] * (h.lanes - len(elems))
            lanes = [(e, h.expect(e)) for e in padded]
            if stats is not None:
                for e, x in lanes:
                    stats.add(e, x, qmax)
        pending.append(lanes)
        await FallingEdge(h.dut.clk)
        want = pending.popleft()
        exp_valid = int(want is not None)
        got_valid, y, sat, err = h.sample()
        assert got_valid == exp_valid, f"cycle {i}: out_valid {got_valid} != {exp_valid}"
        if want is not None:
            for lane, (e, (ey, es, ee)) in enumerate(want):
                got = (y[lane], sat[lane], err[lane])
                assert got == (ey, es, ee), (
                    f"cycle {i} lane {lane}: acc={e[0]} shift={e[1]} mode={e[2]} rnd={e[3]}: "
                    f"(y, sat, shift_err) = {got} != golden {(ey, es, ee)}"
                )


def group(h: Dut, elems):
    """Split a flat element list into per-cycle LANES groups."""
    return [elems[i : i + h.lanes] for i in range(0, len(elems), h.lanes)]


def corner_elements(h: Dut, gen: np.random.Generator):
    """Accumulator extremes, zero, +-1, rounding ties and values at the saturation edges, for every corner shift,
    both modes and the extreme random bytes."""
    shifts = [fxp.SHIFT_MIN, -h.out_w, -1, 0, 1, 2, 7, 8, 9, h.out_w, fxp.SHIFT_MAX - 1, fxp.SHIFT_MAX] + ILLEGAL_SHIFTS
    elems = []
    for s in shifts:
        accs = {h.acc_min, h.acc_max, 0, 1, -1, h.acc_min + 1, h.acc_max - 1}
        legal_s = min(max(s, fxp.SHIFT_MIN), fxp.SHIFT_MAX)
        for q in (h.fmt.qmax, h.fmt.qmax + 1, h.fmt.qmin, h.fmt.qmin - 1, 0, -1, 1):
            if legal_s > 0:
                base = q << legal_s
                half = 1 << (legal_s - 1)
                accs |= {base, base - 1, base + half, base + half - 1, base - half, base - half - 1}
            else:
                base = q >> -legal_s  # floor: the largest acc whose left shift is <= q * 2^0
                accs |= {base, base + 1, base - 1}
        for acc in sorted(a for a in accs if h.acc_min <= a <= h.acc_max):
            for mode in (fxp.NEAREST, fxp.STOCHASTIC):
                for rnd in (0x80,) if mode == fxp.NEAREST else (0, 0x7F, 0x80, 0xFF, int(gen.integers(256))):
                    elems.append((acc, s, mode, rnd))
    gen.shuffle(elems)
    return elems


def random_elements(h: Dut, gen: np.random.Generator, n: int):
    elems = []
    for _ in range(n):
        kind = gen.random()
        if kind < 0.05:
            s = int(gen.choice(ILLEGAL_SHIFTS + [int(gen.integers(-64, 64))]))
        elif kind < 0.25:
            s = int(gen.choice([fxp.SHIFT_MIN, fxp.SHIFT_MAX, 0, 1]))
        else:
            s = int(gen.integers(fxp.SHIFT_MIN, fxp.SHIFT_MAX + 1))
        # Magnitudes spread over every bit width, so both saturated and in-range results are common.
        bits = int(gen.integers(1, h.acc_w + 1))
        acc = int(gen.integers(-(1 << (bits - 1)), 1 << (bits - 1), dtype=np.int64)) if bits > 1 else 0
        mode = int(gen.integers(2))
        elems.append((acc, s, mode, int(gen.integers(256))))
    return elems


@cocotb.test()
async def test_corners(dut):
    """Every corner element, back to back (full throughput), then again with random gaps in in_valid."""
    gen = np.random.default_rng(cocotb.RANDOM_SEED)
    h = await start(dut)
    stats = Stats()
    groups = group(h, corner_elements(h, gen))
    await stream(h, [(1, g) for g in groups], stats)
    gaps = gen.random(len(groups)) < 0.3
    cycles = []
    for g, gap in zip(groups, gaps):
        if gap:
            cycles.append((0, group(h, random_elements(h, gen, h.lanes))[0]))  # junk inputs, not valid
        cycles.append((1, g))
    await stream(h, cycles)
    dut._log.info(
        "corners: %d elements, sat hi %d, sat lo %d, shift_err %d, ties %d",
        stats.n,
        stats.sat_hi,
        stats.sat_lo,
        stats.err,
        stats.ties,
    )
    assert stats.sat_hi and stats.sat_lo and stats.err and stats.ties
    assert {fxp.SHIFT_MIN, fxp.SHIFT_MAX, 0} <= stats.shifts and stats.modes == {0, 1}


@cocotb.test()
async def test_random(dut):
    """Random elements with random in_valid, every lane checked every cycle."""
    gen = np.random.default_rng(cocotb.RANDOM_SEED + 1)
    h = await start(dut)
    stats = Stats()
    n_cycles = max(500, 4000 // h.lanes)
    valid = gen.random(n_cycles) < 0.8
    cycles = [(int(v), random_elements(h, gen, h.lanes)) for v in valid]
    await stream(h, cycles, stats)
    dut._log.info(
        "random: %d elements, sat hi %d, sat lo %d, shift_err %d", stats.n, stats.sat_hi, stats.sat_lo, stats.err
    )
    assert stats.sat_hi and stats.sat_lo and stats.err


@cocotb.test()
async def test_reset_clears_valid(dut):
    """A reset in the middle of a burst drops every in-flight element: out_valid stays low for LATENCY cycles."""
    gen = np.random.default_rng(cocotb.RANDOM_SEED + 2)
    h = await start(dut)
    for _ in range(h.latency):
        h.drive(1, random_elements(h, gen, h.lanes))
        await FallingEdge(dut.clk)
    dut.rst.value = 1
    h.drive(0, [])
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    for i in range(h.latency + 1):
        assert int(dut.out_valid.value) == 0, f"out_valid high {i} cycles after reset"
        await FallingEdge(dut.clk)
    # and the block works normally afterwards
    await stream(h, [(1, random_elements(h, gen, h.lanes)) for _ in range(20)])
