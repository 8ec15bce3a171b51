"""cocotb tests of tt_delay: q is d of DEPTH cycles ago; with RESET = 1, rst clears every stage.

The reference is a Python deque of the last DEPTH inputs (parameters read from the HDL). With RESET = 0 the
stages are not reset: after a reset the test only compares q once DEPTH new inputs have entered.
numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from collections import deque

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from verif.unit_stimulus import random_word


async def setup(dut):
    width, depth, reset = (int(getattr(dut, p).value) for p in ("WIDTH", "DEPTH", "RESET"))
    assert len(dut.d) == width and len(dut.q) == width
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    dut.d.value = 0
    for _ in range(depth + 1):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    return width, depth, reset, rng


@cocotb.test()
async def delays_by_depth(dut):
    """Random words (all-zero and all-one words among them) come out exactly DEPTH cycles later, in order."""
    width, depth, reset, rng = await setup(dut)
    line = deque([0] * depth if reset else [None] * depth, maxlen=depth)
    corner = [0, (1 << width) - 1, 1, 1 << (width - 1)]
    checked = 0
    for i in range(40 + 4 * depth):
        word = corner[i] if i < len(corner) else random_word(rng, width)
        dut.d.value = word
        await RisingEdge(dut.clk)
        line.append(word)
        await FallingEdge(dut.clk)
        expected = line[0]
        if expected is not None:
            assert int(dut.q.value) == expected, f"cycle {i}: q {int(dut.q.value):#x} != {expected:#x}"
            checked += 1
    assert checked >= 40, f"only {checked} outputs compared"


@cocotb.test()
async def reset_mid_stream(dut):
    """A reset with the line full: RESET = 1 zeroes every stage (no stale valid survives), RESET = 0 keeps
    shifting data only when rst is low."""
    width, depth, reset, rng = await setup(dut)
    ones = (1 << width) - 1
    for _ in range(depth):
        dut.d.value = ones
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 1
    dut.d.value = ones
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    dut.d.value = 0
    if reset:
        for i in range(depth):
            assert int(dut.q.value) == 0, f"{i} cycles after reset: q {int(dut.q.value):#x}, expected 0"
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
    else:
        # the reset cycle shifted the line like any other: all ones still in it, then the zeros arrive
        for _ in range(depth - 1):
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
        assert int(dut.q.value) == ones, f"q {int(dut.q.value):#x} before the zeros arrive, expected all ones"
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
    assert int(dut.q.value) == 0, f"q {int(dut.q.value):#x} after the zeros arrived, expected 0"
