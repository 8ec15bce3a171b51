"""cocotb tests of tt_lane_sum: the sum of N signed words (modulo 2^WIDTH, two's complement: the engine's sums never
wrap, SPEC 1.2, but the tree is the same adder either way) with its tag, valid exactly clog2(N) cycles after the words.

The reference is exact integer arithmetic on the words driven, kept in a deque of the last clog2(N) cycles
(parameters read from the HDL). numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""
import math
from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from verif.unit_stimulus import random_word


class Tree:
    def __init__(self, dut):
        self.dut = dut
        self.n, self.width, self.tag_w = (int(getattr(dut, p).value) for p in ("N", "WIDTH", "TAG_W"))
        self.stages = max(1, math.ceil(math.log2(self.n)))
        assert len(dut.in_data) == self.n * self.width and len(dut.out_sum) == self.width
        self.rng = np.random.default_rng(cocotb.RANDOM_SEED)
        self.line = deque([None] * self.stages, maxlen=self.stages)  # (valid, tag, sum) of the last cycles

    def signed(self, v):
        return v - (1 << self.width) if v >> (self.width - 1) else v

    async def start(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.in_valid.value = 0
        d.in_tag.value = 0
        d.in_data.value = 0
        for _ in range(self.stages + 1):
            await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst.value = 0
        self.line.extend([(0, None, None)] * self.stages)

    async def step(self, valid, words, tag, rst=0):
        """Drive one cycle's words at the falling edge, clock, and compare the outputs with the model's line."""
        d = self.dut
        tag &= (1 << self.tag_w) - 1
        d.rst.value = rst
        d.in_valid.value = valid
        d.in_tag.value = tag
        d.in_data.value = sum((w & ((1 << self.width) - 1)) << (self.width * i) for i, w in enumerate(words))
        await RisingEdge(d.clk)
        total = sum(self.signed(w & ((1 << self.width) - 1)) for w in words) % (1 << self.width)
        if rst:
            self.line.extend([(0, None, None)] * self.stages)
        else:
            self.line.append((valid, tag, total))
        await FallingEdge(d.clk)
        want_valid, want_tag, want_sum = self.line[0]
        assert int(d.out_valid.value) == want_valid, f"out_valid {int(d.out_valid.value)}, want {want_valid}"
        if want_valid:
            assert int(d.out_tag.value) == want_tag, f"tag {int(d.out_tag.value):#x}, want {want_tag:#x}"
            assert int(d.out_sum.value) == want_sum, f"sum {int(d.out_sum.value):#x}, want {want_sum:#x}"
        return bool(want_valid)


@cocotb.test()
async def sums_after_the_stages(dut):
    """Random words, corner words (all at the most negative or the most positive value, alternating signs), a new set
    every cycle or with gaps; each sum and its tag leave exactly clog2(N) cycles later, and nothing in between."""
    t = Tree(dut)
    await t.start()
    lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    corners = [[lo] * t.n, [hi] * t.n, [lo if i % 2 else hi for i in range(t.n)], [-1] * t.n, [0] * t.n]
    checked = 0
    for i in range(300):
        words = corners[i] if i < len(corners) else [random_word(t.rng, t.width) for _ in range(t.n)]
        valid = int(i < 40 or t.rng.random() < 0.7)
        checked += await t.step(valid, words, random_word(t.rng, t.tag_w))
    assert checked >= 150, f"only {checked} sums compared"


@cocotb.test()
async def reset_drops_sums_in_flight(dut):
    """A reset while sums are in the tree: no valid leaves afterwards for them; the next sums are exact."""
    t = Tree(dut)
    await t.start()
    for _ in range(t.stages):
        await t.step(1, [random_word(t.rng, t.width) for _ in range(t.n)], 1)
    await t.step(0, [0] * t.n, 0, rst=1)
    checked = 0
    for _ in range(t.stages - 1 + 8):  # the sum of a step's words is compared in the step stages - 1 later
        checked += await t.step(1, [random_word(t.rng, t.width) for _ in range(t.n)], 2)
    assert checked == 8
