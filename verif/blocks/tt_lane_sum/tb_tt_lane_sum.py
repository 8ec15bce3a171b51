"""cocotb tests of tt_lane_sum: the fold trees of the lane sum. With `stages` s, word c of out_sums is the sum of the
words c + (N >> s) r, r < 2^s, of the N words taken s cycles before (modulo 2^WIDTH, two's complement: the engine's
sums never wrap, SPEC 1.2, but the adders are the same either way), for c < N >> s, and 0 beyond; the tag and valid
leave with them.

The reference is exact integer arithmetic on the words driven, kept for the last STAGES cycles (parameters read from
the HDL). numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from verif.unit_stimulus import random_word


class Tree:
    def __init__(self, dut):
        self.dut = dut
        self.n, self.stages, self.width, self.tag_w = (
            int(getattr(dut, p).value) for p in ("N", "STAGES", "WIDTH", "TAG_W")
        )
        assert len(dut.in_data) == self.n * self.width and len(dut.out_sums) == self.n // 2 * self.width
        self.rng = np.random.default_rng(cocotb.RANDOM_SEED)
        self.line = deque([(0, None, None)] * self.stages, maxlen=self.stages)  # (valid, tag, words), newest last
        self.seen = set()  # the stage counts whose sums were compared

    def sums(self, words, s):
        """The model: the N >> s fold sums of `words` with s stages, then zeros up to N / 2 words."""
        mask = (1 << self.width) - 1
        out = [sum(words[c + (self.n >> s) * r] for r in range(1 << s)) & mask for c in range(self.n >> s)]
        return out + [0] * (self.n // 2 - len(out))

    async def start(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.stages.value = 1
        d.in_valid.value = 0
        d.in_tag.value = 0
        d.in_data.value = 0
        for _ in range(self.stages + 1):
            await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst.value = 0

    async def step(self, s, valid, words, tag, rst=0):
        """Drive one cycle's words with s stages at the falling edge, clock, and compare the outputs with the words
        of s cycles back (the model's line)."""
        d = self.dut
        mask = (1 << self.width) - 1
        tag &= (1 << self.tag_w) - 1
        d.rst.value = rst
        d.stages.value = s
        d.in_valid.value = valid
        d.in_tag.value = tag
        d.in_data.value = sum((w & mask) << (self.width * i) for i, w in enumerate(words))
        await RisingEdge(d.clk)
        if rst:
            self.line.extend([(0, None, None)] * self.stages)
        else:
            self.line.append((valid, tag, [w & mask for w in words]))
        await FallingEdge(d.clk)
        want_valid, want_tag, want_words = self.line[-s]
        assert int(d.out_valid.value) == want_valid, (
            f"stages {s}: out_valid {int(d.out_valid.value)}, want {want_valid}"
        )
        if not want_valid:
            return False
        assert int(d.out_tag.value) == want_tag, f"stages {s}: tag {int(d.out_tag.value):#x}, want {want_tag:#x}"
        got = int(d.out_sums.value)
        want = self.sums(want_words, s)
        got_words = [(got >> (self.width * c)) & mask for c in range(self.n // 2)]
        assert got_words == want, f"stages {s}: sums {got_words}, want {want}"
        self.seen.add(s)
        return True

    def words(self):
        return [random_word(self.rng, self.width) for _ in range(self.n)]


@cocotb.test()
async def sums_after_the_stages(dut):
    """Every stage count in turn (the pipeline flushed between, as between ops): corner words (all at the most
    negative or the most positive value, alternating signs), then random words, a new set every cycle or with gaps;
    each set's sums and tag leave exactly `stages` cycles later, and nothing in between."""
    t = Tree(dut)
    await t.start()
    lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    corners = [[lo] * t.n, [hi] * t.n, [lo if i % 2 else hi for i in range(t.n)], [-1] * t.n, [0] * t.n]
    checked = 0
    ops = [*range(1, t.stages + 1), *t.rng.integers(1, t.stages + 1, size=3).tolist()]
    for s in ops:
        for i in range(60):
            words = corners[i] if i < len(corners) else t.words()
            valid = int(i < 10 or t.rng.random() < 0.7)
            checked += await t.step(s, valid, words, random_word(t.rng, t.tag_w))
        for _ in range(t.stages):  # flush before the next op's stage count
            checked += await t.step(s, 0, [0] * t.n, 0)
    assert t.seen == set(range(1, t.stages + 1)) and checked >= 30 * len(ops), (t.seen, checked)


@cocotb.test()
async def reset_drops_sums_in_flight(dut):
    """A reset while sums are in the trees: no valid leaves afterwards for them; the next sums are exact."""
    t = Tree(dut)
    await t.start()
    s = t.stages
    for _ in range(s):
        await t.step(s, 1, t.words(), 1)
    await t.step(s, 0, [0] * t.n, 0, rst=1)
    checked = 0
    for _ in range(s - 1 + 8):  # the sums of a step's words are compared in the step s - 1 later
        checked += await t.step(s, 1, t.words(), 2)
    assert checked == 8
