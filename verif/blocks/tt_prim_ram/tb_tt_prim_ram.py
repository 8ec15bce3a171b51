"""cocotb test of tt_prim_ram (any technology): a read returns the word written last, 1 + OUT_REG cycles after rd_en,
and rd_data holds while no read is made; a write changes only the parts it names (PARTS > 1).

The reference is a Python list of the words (parameters read from the HDL). Every word is written first (the words are
not initialised), then random writes and reads, a read never of the word written at the same edge (left undefined by
tt_prim_ram). numpy is seeded from cocotb.RANDOM_SEED.
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge


@cocotb.test()
async def reads_return_the_words_written(dut):
    width, depth, out_reg, parts = (int(getattr(dut, p).value) for p in ("WIDTH", "DEPTH", "OUT_REG", "PARTS"))
    pw = width // parts
    rng = np.random.default_rng(cocotb.RANDOM_SEED)
    Clock(dut.clk, 10, unit="ns").start()
    dut.wr_en.value = 0
    dut.wr_part.value = (1 << parts) - 1
    dut.rd_en.value = 0
    dut.wr_addr.value = 0
    dut.rd_addr.value = 0
    dut.wr_data.value = 0
    words = [0] * depth
    order = rng.permutation(depth)  # every word once, in a random order
    await FallingEdge(dut.clk)
    for a in order:
        w = int(rng.integers(0, 1 << width))
        dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = 1, int(a), w
        words[a] = w
        await FallingEdge(dut.clk)
    dut.wr_en.value = 0

    expect = []  # (cycle due, word)
    held = None  # the word rd_data holds once every read has arrived
    checked = 0
    for cycle in range(8 * depth + 200):
        wr = rng.random() < 0.5
        rd = rng.random() < 0.6
        wa = int(rng.integers(0, depth))
        ra = int(rng.integers(0, depth))
        if rd and wr and ra == wa:
            rd = False
        if rd:
            expect.append((cycle + 1 + out_reg, words[ra]))
        w = int(rng.integers(0, 1 << width))
        part = int(rng.integers(1, 1 << parts))  # the parts written, at least one
        dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = int(wr), wa, w
        dut.wr_part.value = part
        dut.rd_en.value, dut.rd_addr.value = int(rd), ra
        if wr:
            keep = sum(((1 << pw) - 1) << (pw * k) for k in range(parts) if not part >> k & 1)
            words[wa] = (words[wa] & keep) | (w & ~keep & ((1 << width) - 1))
        await RisingEdge(dut.clk)
        await FallingEdge(dut.clk)
        due = [v for c, v in expect if c == cycle + 1]
        expect = [(c, v) for c, v in expect if c != cycle + 1]
        if due:
            held = due[-1]
        if held is not None:
            got = int(dut.rd_data.value)
            assert got == held, f"cycle {cycle + 1}: rd_data {got:#x}, expected {held:#x}"
            checked += 1
    assert checked > 4 * depth, checked
