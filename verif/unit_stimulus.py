"""Stimulus shared by the testbenches: of the op-executing units (tt_contract, tt_ewise, tt_sce, tt_rank), and random
words of any width (tt_delay, tt_lane_sum)."""

from __future__ import annotations

import numpy as np
from cocotb.triggers import FallingEdge


def random_word(rng: np.random.Generator, width: int) -> int:
    """A uniformly random unsigned word of `width` bits (any width, wider than 64 too)."""
    return int.from_bytes(rng.bytes((width + 7) // 8), "little") & ((1 << width) - 1)


def busy_restarts(gen: np.random.Generator, total: int) -> frozenset:
    """Cycles (1 .. total-1: the unit is busy) in which to pulse start again during an op of `total` cycles:
    the cycle right after the start (start held two cycles) and the last busy cycle (the last write is on the
    port), start held high for a stretch, or one to three random cycles."""
    last = total - 1
    kind = int(gen.integers(0, 4))
    if kind == 0:
        return frozenset({1, last})
    if kind == 1:
        a = int(gen.integers(1, last + 1))
        return frozenset(range(a, min(last, a + int(gen.integers(1, 6))) + 1))
    return frozenset(int(c) for c in gen.integers(1, last + 1, size=int(gen.integers(1, 4))))


async def start_and_wait(dut, limit: int, restarts: frozenset = frozenset()) -> int:
    """Pulse the unit's start (its descriptor ports already driven and held), wait for done (at most `limit`
    cycles) at falling edges; returns the cycles from start to done. busy must stay high until done and fall with
    it. `restarts`: cycles after the start (1 = the next) in which start is driven high again while the op runs;
    the unit must ignore them."""
    dut.start.value = 1
    await FallingEdge(dut.clk)
    dut.start.value = 0
    cycles = 1
    while not int(dut.done.value):
        assert cycles < limit, f"no done after {cycles} cycles" + (
            f" (start pulsed again in cycles {sorted(restarts)})" if restarts else ""
        )
        if cycles > 1 or cycles in restarts:
            assert int(dut.busy.value) == 1, f"busy low before done (cycle {cycles})"
        dut.start.value = int(cycles in restarts)
        await FallingEdge(dut.clk)
        cycles += 1
    dut.start.value = 0
    assert int(dut.busy.value) == 0, "busy with done"
    assert all(c < cycles for c in restarts), f"restarts {sorted(restarts)} after done (cycle {cycles})"
    return cycles
