"""cocotb tests of tt_mac_array: exact signed dot products (SPEC 1.2), clear / en / rst behaviour, the latency.

The reference is exact integer arithmetic (the SPEC's accumulator never wraps): every stimulus is
generated so that no partial sum leaves the ACC_W range (fxp.check_acc for the 48-bit accumulator), and
the narrow parameter set drives the sums right up to both limits. numpy is seeded from cocotb.RANDOM_SEED.
"""

from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import fxp


class Mac:
    """Parameters from the HDL, packing, and the cycle model.

    `model` holds the sums of every product accepted so far; the accumulators show them 1 + IN_REG + PROD_REG
    cycles after the en edge (the latency), so `visible` keeps the model of the last `latency` clocks and `check`
    compares with the oldest. The accumulators are not reset: after rst a lane is undefined (None) until a product
    with clear reaches it, and `check` compares only the defined lanes."""

    def __init__(self, dut):
        self.dut = dut
        self.lanes = int(dut.LANES.value)
        self.a_w = int(dut.A_W.value)
        self.b_w = int(dut.B_W.value)
        self.acc_w = int(dut.ACC_W.value)
        self.latency = 1 + int(dut.IN_REG.value) + int(dut.PROD_REG.value)
        assert len(dut.a) == self.a_w * self.lanes and len(dut.b) == self.b_w * self.lanes
        assert len(dut.acc) == self.acc_w * self.lanes
        self.a_min, self.a_max = -(1 << (self.a_w - 1)), (1 << (self.a_w - 1)) - 1
        self.b_min, self.b_max = -(1 << (self.b_w - 1)), (1 << (self.b_w - 1)) - 1
        self.acc_min, self.acc_max = -(1 << (self.acc_w - 1)), (1 << (self.acc_w - 1)) - 1
        self.model = [None] * self.lanes  # undefined until a product with clear
        self.compared = 0  # lane values checked against a defined model value
        self.visible = deque([self.model] * self.latency, maxlen=self.latency)
        self.peak = [0, 0]  # most negative, most positive partial sum seen

    def per_lane(self, a):
        """a as one word per lane: a list as it is, a number for every lane (the engine's usual operand)."""
        return list(a) if isinstance(a, (list, tuple)) else [a] * self.lanes

    def drive(self, en, clear, a, b):
        d = self.dut
        d.en.value = int(en)
        d.clear.value = int(clear)
        d.a.value = pack(self.per_lane(a), self.a_w)
        d.b.value = pack(b, self.b_w)

    def next_sums(self, clear, a, b):
        return [
            None if acc is None and not clear else (0 if clear else acc) + int(al) * int(bl)
            for acc, al, bl in zip(self.model, self.per_lane(a), b)
        ]

    def fits(self, sums):
        return all(self.acc_min <= s <= self.acc_max for s in sums if s is not None)

    def clock(self, rst, en, clear, a, b):
        if rst:
            self.model = [None] * self.lanes
            self.visible.extend([self.model] * self.latency)
            return
        if en:
            sums = self.next_sums(clear, a, b)
            assert self.fits(sums), "testbench bug: stimulus overflows the accumulator"
            known = [s for s in sums if s is not None]
            if known and self.acc_w == fxp.ACC_W:
                fxp.check_acc(np.array(known, dtype=np.int64))
            self.model = sums
            if known:
                self.peak = [min(self.peak[0], *known), max(self.peak[1], *known)]
        self.visible.append(self.model)

    def check(self, what):
        bits = str(self.dut.acc.value)  # MSB first; an undefined lane may hold X
        want = self.visible[0]
        for i, w in enumerate(want):
            if w is None:
                continue
            lane = bits[len(bits) - self.acc_w * (i + 1) : len(bits) - self.acc_w * i]
            assert set(lane) <= {"0", "1"}, f"{what}: lane {i} is {lane}, expected {w}"
            v = int(lane, 2)
            got = v - (1 << self.acc_w) if v >> (self.acc_w - 1) else v
            assert got == w, f"{what}: lane {i} acc {got} != expected {w}"
            self.compared += 1


def pack(words, width: int) -> int:
    """Signed words into one bus, word i in [width*i +: width]."""
    bus = 0
    for i, v in enumerate(words):
        bus |= (int(v) & ((1 << width) - 1)) << (width * i)
    return bus


async def start(dut) -> Mac:
    m = Mac(dut)
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    m.drive(0, 0, 0, [0] * m.lanes)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    m.check("after reset")
    return m


async def cycle(m: Mac, en, clear, a, b, rst=0, what=""):
    """Drive at the falling edge, clock, then check the accumulators against the model."""
    m.dut.rst.value = rst
    m.drive(en, clear, a, b)
    await FallingEdge(m.dut.clk)
    m.clock(rst, en, clear, a, b)
    m.check(what)


@cocotb.test()
async def test_corner_products(dut):
    """Every pair of corner operands (min, max, -1, 0, 1), each as a fresh dot product (clear) and accumulated."""
    m = await start(dut)
    a_c = [m.a_min, m.a_min + 1, -1, 0, 1, m.a_max]
    b_c = [m.b_min, m.b_min + 1, -1, 0, 1, m.b_max]
    for clear in (1, 0):
        for a in a_c:
            for j in range(len(b_c)):
                b = [b_c[(j + l) % len(b_c)] for l in range(m.lanes)]  # each lane gets a different corner
                if not m.fits(m.next_sums(clear, a, b)):
                    clear = 1
                await cycle(m, 1, clear, a, b, what=f"a={a} b={b} clear={clear}")


@cocotb.test()
async def test_random_dot_products(dut):
    """Random operands, en and clear; dot products of random length; every cycle checked."""
    gen = np.random.default_rng(cocotb.RANDOM_SEED)
    m = await start(dut)
    for i in range(3000):
        en = gen.random() < 0.85
        clear = gen.random() < 0.08
        rst = gen.random() < 0.005
        if gen.random() < 0.2:  # corner operands
            a = [int(gen.choice([m.a_min, m.a_max, 0, -1, 1])) for _ in range(m.lanes)]
            b = [int(gen.choice([m.b_min, m.b_max, 0, -1, 1])) for _ in range(m.lanes)]
        else:
            a = [int(v) for v in gen.integers(m.a_min, m.a_max + 1, size=m.lanes)]
            b = [int(v) for v in gen.integers(m.b_min, m.b_max + 1, size=m.lanes)]
        if gen.random() < 0.5:  # one a word for every lane, as the engine gives but in a lane sum
            a = a[0]
        if en and not m.fits(m.next_sums(clear, a, b)):
            clear = 1
        await cycle(m, en, clear, a, b, rst, what=f"cycle {i}")
    # a lane is undefined only from a rst to its next clear (about 15 cycles in 200)
    assert m.compared >= 1500 * m.lanes, f"only {m.compared} lane values were defined and checked"


@cocotb.test()
async def test_accumulate_to_limits(dut):
    """Largest products of one sign until the next would overflow, then of the other sign: the partial sums
    sweep through the accumulator's top bits (reaching both limits when ACC_W is narrow)."""
    m = await start(dut)
    n = 1000  # cycles per quarter sweep: bounds the run when ACC_W is wide
    big_pos = (m.a_min, [m.b_min] * m.lanes)  # min * min: the largest product
    big_neg = (m.a_min, [m.b_max] * m.lanes)
    await cycle(m, 1, 1, *big_pos, what="first product")
    for (a, b), limit in ((big_pos, n), (big_neg, 2 * n), (big_pos, n)):
        steps = 0
        while m.fits(m.next_sums(0, a, b)) and steps < limit:
            await cycle(m, 1, 0, a, b, what=f"a={a} b={b[0]} step {steps}")
            steps += 1
        # en low: the sums must hold even though the operands would overflow them
        await cycle(m, 0, 0, a, b, what="hold")
    dut._log.info("partial sums reached %d .. %d (accumulator %d .. %d)", *m.peak, m.acc_min, m.acc_max)
    if m.acc_w <= 24:
        span = m.a_min * m.b_min  # the largest product: the limits are reached to within one product
        assert m.peak[1] > m.acc_max - span and m.peak[0] < m.acc_min + span
    # after rst the accumulators are undefined until a product with clear starts a new dot product
    await cycle(m, 1, 0, m.a_max, [m.b_max] * m.lanes, rst=1, what="reset")
    await cycle(m, 1, 1, -1, [m.b_max] * m.lanes, what="first product after reset")
    for k in range(m.latency):
        await cycle(m, 0, 0, 0, [0] * m.lanes, what=f"hold {k}")
    assert None not in m.visible[0], "testbench bug: the product after reset was not checked"
