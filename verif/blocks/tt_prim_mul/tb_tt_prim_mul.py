"""cocotb test of tt_prim_mul (any technology): p is the exact signed product of the a and b of IN_REG + OUT_REG
cycles before, at the extremes of both ranges and at random values. numpy is seeded from cocotb.RANDOM_SEED."""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from verif.host import to_signed


@cocotb.test()
async def products_are_exact(dut):
    a_w, b_w, in_reg, out_reg = (int(getattr(dut, p).value) for p in ("A_W", "B_W", "IN_REG", "OUT_REG"))
    lat = in_reg + out_reg
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    Clock(dut.clk, 10, unit="ns").start()
    edges_a = [-(1 << (a_w - 1)), (1 << (a_w - 1)) - 1, 0, -1, 1]
    edges_b = [-(1 << (b_w - 1)), (1 << (b_w - 1)) - 1, 0, -1, 1]
    pairs = [(x, y) for x in edges_a for y in edges_b]
    pairs += [
        (int(rng.integers(-(1 << (a_w - 1)), 1 << (a_w - 1))), int(rng.integers(-(1 << (b_w - 1)), 1 << (b_w - 1))))
        for _ in range(400)
    ]
    want = [x * y for x, y in pairs]
    await FallingEdge(dut.clk)
    for i in range(len(pairs) + lat):
        if i < len(pairs):
            x, y = pairs[i]
            dut.a.value = x & ((1 << a_w) - 1)
            dut.b.value = y & ((1 << b_w) - 1)
        await Timer(1, unit="ns")  # the combinational path settles
        if i >= lat:
            got = to_signed(int(dut.p.value), a_w + b_w)
            assert got == want[i - lat], f"pair {i - lat} {pairs[i - lat]}: p {got}, expected {want[i - lat]}"
        await FallingEdge(dut.clk)  # a rising edge in between
