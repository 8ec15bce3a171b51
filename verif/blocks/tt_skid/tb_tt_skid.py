"""cocotb tests of tt_skid (the register slice): every cycle's out_valid, out_data and in_ready against a pure
prediction function of the slice, under random valid/ready streams whose producer holds a word until it is taken
(as tt_loop_addr does); the words out are the words in, in order, none lost or repeated; a word a cycle at full
flow; in_ready a register (it does not follow out_ready within a cycle); rst mid-stream.
numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from __future__ import annotations

from typing import NamedTuple

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer


class Slice(NamedTuple):
    """The slice's registers: the output word and the word waiting behind it (valid, data)."""

    out_valid: bool = False
    out_word: int = 0
    skid_valid: bool = False
    skid_word: int = 0


def in_ready(s: Slice) -> bool:
    return not s.skid_valid


def next_slice(s: Slice, in_valid: bool, in_word: int, out_ready: bool) -> Slice:
    """One clock edge: the output takes the waiting word, else the input's, when it is empty or taken; an input word
    that finds the output held waits, if the slice has room (in_ready)."""
    if not s.out_valid or out_ready:
        if s.skid_valid:
            return Slice(True, s.skid_word)
        return Slice(in_valid, in_word if in_valid else s.out_word)
    if in_valid and in_ready(s):
        return s._replace(skid_valid=True, skid_word=in_word)
    return s


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.width = int(dut.WIDTH.value)
        assert len(dut.in_data) == self.width and len(dut.out_data) == self.width
        self.rng = np.random.default_rng(cocotb.RANDOM_SEED)
        self.state = Slice()
        self.sent: list[int] = []
        self.received: list[int] = []
        self.next_word = None  # the producer's word on offer (held until taken)

    def word(self) -> int:
        return int.from_bytes(self.rng.bytes((self.width + 7) // 8), "little") & ((1 << self.width) - 1)

    async def reset(self):
        Clock(self.dut.clk, 10, unit="ns").start()
        self.dut.rst.value = 1
        self.dut.in_valid.value = 0
        self.dut.in_data.value = 0
        self.dut.out_ready.value = 0
        await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0
        self.state = Slice()

    def compare(self, when: str):
        dut, s = self.dut, self.state
        assert bool(dut.out_valid.value) == s.out_valid, f"{when}: out_valid {dut.out_valid.value}, model {s}"
        assert bool(dut.in_ready.value) == in_ready(s), f"{when}: in_ready {dut.in_ready.value}, model {s}"
        if s.out_valid:
            assert int(dut.out_data.value) == s.out_word, f"{when}: out_data {int(dut.out_data.value):#x}, model {s}"

    async def cycle(self, p_valid: float, p_ready: float) -> None:
        """One cycle at the falling edge: drive the inputs, check the outputs against the model, clock both."""
        dut = self.dut
        if self.next_word is None and self.rng.random() < p_valid:
            self.next_word = self.word()
        valid = self.next_word is not None
        ready = bool(self.rng.random() < p_ready)
        dut.in_valid.value = int(valid)
        dut.in_data.value = self.next_word if valid else self.word()  # junk while not valid
        dut.out_ready.value = int(ready)
        await Timer(1, unit="ns")
        self.compare(f"cycle {len(self.sent)} sent / {len(self.received)} received")
        # in_ready is a flip-flop: flipping out_ready within the cycle must not move it
        dut.out_ready.value = int(not ready)
        await Timer(1, unit="ns")
        assert bool(dut.in_ready.value) == in_ready(self.state), "in_ready follows out_ready combinationally"
        dut.out_ready.value = int(ready)
        await RisingEdge(dut.clk)
        if self.state.out_valid and ready:
            self.received.append(self.state.out_word)
        if valid and in_ready(self.state):
            self.sent.append(self.next_word)
            self.next_word = None
        self.state = next_slice(self.state, valid, int(dut.in_data.value), ready)
        await FallingEdge(dut.clk)


@cocotb.test()
async def random_streams(dut):
    """Random valid and ready rates, from starved to back-pressured: cycle-exact against the model, and the words
    out are the words in."""
    tb = Tb(dut)
    await tb.reset()
    for p_valid, p_ready in [(1.0, 1.0), (0.5, 1.0), (1.0, 0.5), (0.3, 0.7), (0.9, 0.2), (1.0, 0.0), (0.0, 1.0)]:
        for _ in range(200):
            await tb.cycle(p_valid, p_ready)
    assert len(tb.received) >= 300, f"only {len(tb.received)} words through"
    assert tb.received == tb.sent[: len(tb.received)], "words lost, repeated or reordered"
    assert len(tb.sent) - len(tb.received) <= 2, "more than two words inside the slice"


@cocotb.test()
async def full_flow(dut):
    """A word a cycle when both sides always handshake: the first word out one cycle after it went in, then one
    word every cycle, in_ready never falls."""
    tb = Tb(dut)
    await tb.reset()
    for i in range(50):
        await tb.cycle(1.0, 1.0)
        assert bool(dut.in_ready.value), f"cycle {i}: in_ready fell at full flow"
    assert len(tb.sent) == 50 and len(tb.received) == 49 and tb.received == tb.sent[:49]


@cocotb.test()
async def reset_mid_stream(dut):
    """rst with both words full drops them (out_valid low, in_ready high); words sent afterwards come out alone."""
    tb = Tb(dut)
    await tb.reset()
    for _ in range(6):
        await tb.cycle(1.0, 0.0)  # fill the output and the skid
    assert tb.state.out_valid and tb.state.skid_valid and not bool(dut.in_ready.value)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    tb.state = Slice()
    tb.compare("after rst")
    tb.sent, tb.received, tb.next_word = [], [], None
    for _ in range(40):
        await tb.cycle(0.7, 0.6)
    assert tb.received and tb.received == tb.sent[: len(tb.received)], "words after rst"
