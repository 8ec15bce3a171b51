"""cocotb tests of tt_loop_addr: every beat of random loop nests against a Python model of the nest, with
random back-pressure (ready), restarts while busy, counts of 0 and at the field maximum, address wrap-around,
and (the engine's shape, NLOOPS=10 NRED=4) the beat sequence of lowered contract descriptors against
golden/isa/loop_nest.py desc_beats. numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from __future__ import annotations

import itertools
import math

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden.arch import ADDR_W, CNT_W, MAX_RED, NLOOPS
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.ir import OpKind
from golden.isa.contract import pack_ports
from golden.isa.loop_nest import desc_beats
from golden.lowering import lower_contract


class Nest:
    """One loop nest, loop 0 innermost (the RTL's packing), and its beats from a direct formulation."""

    def __init__(self, counts, sa, sb, so, bases, nred, walk_w):
        """walk_w: the bits of the a, b and o walks (A_AW, ADDR_W, O_AW); each wraps there."""
        self.counts, self.strides, self.bases = list(counts), (list(sa), list(sb), list(so)), list(bases)
        self.nred, self.masks = nred, [(1 << w) - 1 for w in walk_w]

    def beats(self):
        """(addr_a, addr_b, addr_o, first_red, last_red, last) per beat, the outermost loop slowest."""
        eff = [max(c, 1) for c in self.counts]  # a count of 0 acts as 1
        n = len(eff)
        total = math.prod(eff)
        for k, outer_first in enumerate(itertools.product(*(range(c) for c in reversed(eff)))):
            idx = list(reversed(outer_first))
            addr = [
                (base + sum(i * s for i, s in zip(idx, st))) & mask
                for base, st, mask in zip(self.bases, self.strides, self.masks)
            ]
            first = all(idx[i] == 0 for i in range(self.nred))
            last_red = all(idx[i] == eff[i] - 1 for i in range(self.nred))
            yield (*addr, first, last_red, k == total - 1)
        assert n == len(self.counts)


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.nloops = int(dut.NLOOPS.value)
        self.nred = int(dut.NRED.value)
        self.cnt_w = int(dut.CNT_W.value)
        self.addr_w = int(dut.ADDR_W.value)
        self.walk_w = (int(dut.A_AW.value), self.addr_w, int(dut.O_AW.value))
        assert len(dut.counts) == self.nloops * self.cnt_w and len(dut.stride_a) == self.nloops * self.addr_w
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED)

    def pack(self, values, width):
        word = 0
        for i, v in enumerate(values):
            word |= (int(v) & ((1 << width) - 1)) << (width * i)
        return word

    def load(self, nest: Nest):
        d = self.dut
        d.counts.value = self.pack(nest.counts, self.cnt_w)
        for port, st in zip((d.stride_a, d.stride_b, d.stride_o), nest.strides):
            port.value = self.pack(st, self.addr_w)
        for port, b in zip((d.base_a, d.base_b, d.base_o), nest.bases):
            port.value = b

    def random_nest(self, max_beats=300) -> Nest:
        g = self.gen
        cmax = (1 << self.cnt_w) - 1
        counts = []
        for _ in range(self.nloops):
            r = g.random()
            small = int(g.integers(1, min(cmax, 4) + 1))
            counts.append(0 if r < 0.05 else 1 if r < 0.35 else cmax if r < 0.45 else small)
        while math.prod(max(c, 1) for c in counts) > max_beats:  # bound the run: shrink a big loop
            i = int(np.argmax(counts))
            counts[i] = max(1, counts[i] // 3)
        amax = 1 << self.addr_w
        strides = [[int(x) for x in g.integers(0, amax, size=self.nloops)] for _ in range(3)]
        for st in strides:  # some zero and unit strides, as in real descriptors
            for i in range(self.nloops):
                st[i] = int(g.choice([0, 1, st[i]], p=[0.3, 0.2, 0.5]))
        bases = [int(x) for x in g.integers(0, amax, size=3)]
        sa, sb, so = strides
        return Nest(counts, sa, sb, so, bases, self.nred, self.walk_w)

    def observe(self):
        d = self.dut
        return (
            int(d.addr_a.value),
            int(d.addr_b.value),
            int(d.addr_o.value),
            int(d.first_red.value),
            int(d.last_red.value),
            int(d.last.value),
        )

    async def run(self, nest: Nest, p_ready=0.7, abort_after=None):
        """Start the nest, consume every beat with random ready, check each against the model; with
        `abort_after` stop after that many beats (the caller restarts)."""
        d = self.dut
        self.load(nest)
        d.start.value = 1
        d.ready.value = int(self.gen.random() < p_ready)  # ignored: valid is low during start
        await FallingEdge(d.clk)
        d.start.value = 0
        want = list(nest.beats())
        got = 0
        cycles = 0
        while got < len(want):
            assert int(d.valid.value) == 1, f"valid fell after {got} of {len(want)} beats"
            assert int(d.done.value) == 0, "done while beats remain"
            beat = self.observe()
            assert beat == tuple(int(x) for x in want[got]), (
                f"beat {got} of {len(want)} counts {nest.counts}: got {beat}, want {want[got]}"
            )
            ready = int(self.gen.random() < p_ready)
            d.ready.value = ready
            await FallingEdge(d.clk)
            got += ready
            cycles += 1
            if abort_after is not None and got >= abort_after:
                return
        assert int(d.valid.value) == 0 and int(d.done.value) == 1, "after the last beat: valid low, done high"
        for _ in range(2):  # done holds, valid stays low whatever ready does
            d.ready.value = int(self.gen.integers(0, 2))
            await FallingEdge(d.clk)
            assert int(d.valid.value) == 0 and int(d.done.value) == 1
        return cycles


async def setup(dut) -> Tb:
    tb = Tb(dut)
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    dut.start.value = 0
    dut.ready.value = 0
    tb.load(Nest([1] * tb.nloops, [0] * tb.nloops, [0] * tb.nloops, [0] * tb.nloops, [0, 0, 0], tb.nred, tb.walk_w))
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    assert int(dut.valid.value) == 0 and int(dut.done.value) == 0, "after reset: idle"
    return tb


@cocotb.test()
async def test_random_nests(dut):
    tb = await setup(dut)
    for n in range(40):
        await tb.run(tb.random_nest(), p_ready=1.0 if n % 4 == 0 else 0.7)


@cocotb.test()
async def test_restart_and_reset(dut):
    """start while busy restarts from the new bases; rst stops a nest and clears done."""
    tb = await setup(dut)
    for _ in range(6):
        nest = tb.random_nest()
        beats = len(list(nest.beats()))
        await tb.run(nest, abort_after=int(tb.gen.integers(0, beats)))
        await tb.run(tb.random_nest())
    nest = tb.random_nest()
    await tb.run(nest, abort_after=0)
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    assert int(dut.valid.value) == 0 and int(dut.done.value) == 0
    await tb.run(tb.random_nest())


@cocotb.test()
async def test_single_beat(dut):
    """All counts 1 (or 0): one beat that is first, last of its reduction and last of the nest."""
    tb = await setup(dut)
    for c in (1, 0):
        await tb.run(
            Nest([c] * tb.nloops, [5] * tb.nloops, [6] * tb.nloops, [7] * tb.nloops, [1, 2, 3], tb.nred, tb.walk_w),
            p_ready=0.5,
        )


@cocotb.test()
async def test_contract_descriptors(dut):
    """The engine's shape: lowered descriptors of tiny and digits ops give golden/isa/loop_nest.py desc_beats
    exactly."""
    tb = await setup(dut)
    if (tb.nloops, tb.nred, tb.cnt_w, tb.walk_w) != (NLOOPS, MAX_RED, CNT_W, (ADDR_W,) * 3):
        dut._log.info("not the descriptor's shape: skipped")
        return
    for model in ("tiny", "digits"):
        comp = compile_network(load_config(model))
        frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
        ops = [op for op in comp.train_sample if op.kind == OpKind.CONTRACT and op.macs <= 2048]
        for op in ops:
            desc = lower_contract(comp, op, frac)
            p = pack_ports(desc)
            dut.counts.value = p["counts"]
            dut.stride_a.value, dut.stride_b.value, dut.stride_o.value = p["stride_a"], p["stride_b"], p["stride_o"]
            dut.base_a.value, dut.base_b.value, dut.base_o.value = p["a_base"], p["b_base"], p["o_base"]
            dut.start.value = 1
            dut.ready.value = 1
            await FallingEdge(dut.clk)
            dut.start.value = 0
            want = list(desc_beats(desc))
            for k, w in enumerate(want):
                got = tb.observe()
                assert got[:5] == tuple(int(x) for x in w) and got[5] == (k == len(want) - 1), (
                    f"{op.out} ({op.spec}) beat {k}: got {got}, want {w}"
                )
                await FallingEdge(dut.clk)
            assert int(dut.done.value) == 1 and int(dut.valid.value) == 0
