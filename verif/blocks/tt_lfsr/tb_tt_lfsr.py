"""cocotb tests of tt_lfsr against golden/fxp.py (SPEC section 3): seed mapping, leap-ahead, control.

Every expected value comes from golden.fxp (lfsr_seed_state, lfsr_draw, LfsrStream); numpy is seeded from
cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import fxp

RESET_STATE = fxp.lfsr_seed_state(0)  # rst loads the state of seed 0


def rng() -> np.random.Generator:
    return np.random.default_rng(cocotb.RANDOM_SEED)


class LfsrModel:
    """Cycle model of tt_lfsr built from the golden scalar primitives."""

    def __init__(self, draws: int):
        self.draws = draws
        self.state = RESET_STATE

    def peek(self) -> tuple[list[int], int]:
        """The DRAWS draws offered now and the state after consuming them."""
        s, out = self.state, []
        for _ in range(self.draws):
            s, r = fxp.lfsr_draw(s)
            out.append(r)
        return out, s

    def clock(self, rst: int, seed_load: int, seed: int, advance: int, leap: int) -> None:
        if rst:
            self.state = RESET_STATE
        elif seed_load:
            self.state = fxp.lfsr_seed_state(seed)
        elif advance and leap:
            self.state = self.peek()[1]
        elif advance:
            self.state = fxp.lfsr_draw(self.state)[0]


def draws_of(dut) -> int:
    draws = int(dut.DRAWS.value)
    assert len(dut.rnd) == 8 * draws, f"rnd is {len(dut.rnd)} bits for DRAWS={draws}"
    return draws


def unpack_bytes(value: int, n: int) -> list[int]:
    return [(value >> (8 * i)) & 0xFF for i in range(n)]


async def start(dut) -> None:
    """Clock, idle inputs, one reset cycle; returns at a falling edge (inputs are driven there)."""
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    dut.seed_load.value = 0
    dut.seed.value = 0
    dut.advance.value = 0
    dut.leap.value = 0
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


def check(dut, model: LfsrModel, what: str) -> None:
    exp_rnd, _ = model.peek()
    got_state = int(dut.state.value)
    got_rnd = unpack_bytes(int(dut.rnd.value), model.draws)
    assert got_state == model.state, f"{what}: state {got_state:#010x} != golden {model.state:#010x}"
    assert got_rnd == exp_rnd, f"{what}: rnd {got_rnd} != golden {exp_rnd} (state {got_state:#010x})"


async def cycle(dut, model: LfsrModel, rst=0, seed_load=0, seed=0, advance=0, leap=1) -> None:
    """Drive one cycle's inputs at the falling edge, clock, and apply the same cycle to the model."""
    dut.rst.value = rst
    dut.seed_load.value = seed_load
    dut.seed.value = seed
    dut.advance.value = advance
    dut.leap.value = leap
    await FallingEdge(dut.clk)
    model.clock(rst, seed_load, seed, advance, leap)


@cocotb.test()
async def test_reset_and_seed_mapping(dut):
    """Reset state, then corner and random seeds: state = map(seed), rnd = first DRAWS draws of the stream."""
    draws = draws_of(dut)
    model = LfsrModel(draws)
    await start(dut)
    check(dut, model, "after reset")
    corners = [
        0,
        1,
        0xFFFFFFFF,
        fxp.LFSR_SEED_XOR,
        fxp.LFSR_SEED_XOR ^ 1,
        fxp.LFSR_SEED_XOR ^ 0xFFFFFFFF,
        0x80000000,
        0x7FFFFFFF,
    ]
    seeds = corners + [int(s) for s in rng().integers(0, 1 << 32, size=40, dtype=np.uint64)]
    for seed in seeds:
        await cycle(dut, model, seed_load=1, seed=seed, advance=1)  # seed_load wins over advance
        check(dut, model, f"seed {seed:#010x}")
        assert int(dut.state.value) == fxp.lfsr_seed_state(seed)
        exp = [int(r) for r in fxp.LfsrStream(seed).take(draws)]
        assert unpack_bytes(int(dut.rnd.value), draws) == exp, f"seed {seed:#010x}: rnd != LfsrStream"
    # The seed that maps to the all-zero state must give state 1 (else the LFSR would be stuck at 0).
    await cycle(dut, model, seed_load=1, seed=fxp.LFSR_SEED_XOR)
    assert int(dut.state.value) == 1
    # rst wins over seed_load and advance.
    await cycle(dut, model, rst=1, seed_load=1, seed=12345, advance=1)
    check(dut, model, "rst with seed_load and advance")


@cocotb.test()
async def test_random_control(dut):
    """Random rst / seed_load / advance / leap patterns, every output checked every cycle."""
    draws = draws_of(dut)
    model = LfsrModel(draws)
    gen = rng()
    await start(dut)
    n = 1500
    rst = gen.random(n) < 0.01
    load = gen.random(n) < 0.03
    adv = gen.random(n) < 0.6
    leap = gen.random(n) < 0.5
    seeds = gen.integers(0, 1 << 32, size=n, dtype=np.uint64)
    for i in range(n):
        await cycle(dut, model, int(rst[i]), int(load[i]), int(seeds[i]), int(adv[i]), int(leap[i]))
        check(dut, model, f"cycle {i}")


@cocotb.test()
async def test_stream_matches_lfsr_stream(dut):
    """Advancing every cycle, by DRAWS (leap) or one draw at random, the draws consumed (all DRAWS rnd bytes of a
    leap, byte 0 otherwise) are exactly LfsrStream(seed).take(n)."""
    draws = draws_of(dut)
    model = LfsrModel(draws)
    gen = rng()
    seed = int(gen.integers(0, 1 << 32, dtype=np.uint64))
    await start(dut)
    await cycle(dut, model, seed_load=1, seed=seed)
    cycles = max(64, 3000 // draws)
    leaps = gen.random(cycles) < 0.7
    got = []
    dut.seed_load.value = 0
    dut.advance.value = 1
    for leap in leaps:
        dut.leap.value = int(leap)
        got += unpack_bytes(int(dut.rnd.value), draws)[: draws if leap else 1]
        await FallingEdge(dut.clk)
    dut.advance.value = 0
    stream = fxp.LfsrStream(seed)
    exp = stream.take(len(got)).tolist()
    bad = [i for i, (g, e) in enumerate(zip(got, exp)) if g != e]
    assert not bad, (
        f"seed {seed:#010x}: {len(bad)} draws differ, first at draw {bad[0]}: {got[bad[0]]} != {exp[bad[0]]}"
    )
    assert int(dut.state.value) == stream.state, "state after the run != LfsrStream state"
