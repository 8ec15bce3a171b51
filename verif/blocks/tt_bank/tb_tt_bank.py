"""cocotb tests of tt_bank: every copy takes every write, each read port returns the word of its own copy
1 + OUT_REG cycles after rd_en, across the block RAMs a copy is split into (BLOCK_BITS), and with VEC > 1 the
aligned run of 2^rd_run_sh words the word sits in (in rd_vec's row), and a write of several words of a row at once
(wr_mask) writes exactly those; and the simulation check behind no_rw_check stops a run that reads a word in the
cycle it is written, and lets a run read go on while a word of its row outside the run is written.

The reference is a Python list of the words (parameters read from the HDL). Every word is written first (the
words are not reset), then random writes and reads on every port; a read never hits the word written in the
same cycle (the accelerator never does that: tt_bank.v). numpy is seeded from cocotb.RANDOM_SEED.
"""
import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge


class Bank:
    def __init__(self, dut):
        self.dut = dut
        self.width, self.depth, self.aw = (int(getattr(dut, p).value) for p in ("WIDTH", "DEPTH", "AW"))
        self.ports, self.out_reg, self.vec = (int(getattr(dut, p).value) for p in ("READ_PORTS", "OUT_REG", "VEC"))
        assert len(dut.rd_data) == self.width * self.ports and len(dut.rd_addr) == self.aw * self.ports
        assert len(dut.rd_vec) == self.width * self.vec * self.ports
        self.words = [0] * self.depth
        self.rng = np.random.default_rng(cocotb.RANDOM_SEED)
        self.pending = []  # (cycle the data is due, port, expected word, address, expected row or None)
        self.cycle = 0
        self.checked = 0
        self.runs_checked = 0

    def run(self, a: int, sh: int) -> dict:
        """The words of a's aligned run of 2^sh words, by column (past DEPTH: never written, not checked)."""
        first = a >> sh << sh
        return {i % self.vec: self.words[i] for i in range(first, min(first + (1 << sh), self.depth))}

    def drive(self, wr, reads, runs=None):
        """wr: (addr, data) or None, or a list of them in one row (a write of several columns); reads: per port an
        address or None; runs: per port log2 of the words its read takes (rd_run_sh; the run's columns of rd_vec are
        checked). Drives for the next rising edge."""
        d = self.dut
        words = ([wr] if isinstance(wr, tuple) else wr) or []
        assert len({a // self.vec for a, _ in words}) <= 1, "a write stays in one row"
        mask = data = 0
        for a, w in words:
            mask |= 1 << a % self.vec
            data |= w << (self.width * (a % self.vec))
        d.wr_en.value = int(bool(words))
        d.wr_addr.value = words[0][0] if words else 0
        d.wr_mask.value = mask
        d.wr_data.value = data
        en, run_sh, addr = 0, 0, 0
        for p, a in enumerate(reads):
            sh = runs[p] if runs else 0
            if a is not None:
                en |= 1 << p
                run_sh |= sh << (3 * p)
                addr |= a << (self.aw * p)
                self.pending.append((self.cycle + 1 + self.out_reg, p, self.words[a], a,
                                     self.run(a, sh) if sh else None))
        d.rd_en.value = en
        d.rd_run_sh.value = run_sh
        d.rd_addr.value = addr
        for a, w in words:
            self.words[a] = w  # after the reads: they see the word before this cycle's write

    async def step(self, wr=None, reads=(), runs=None):
        reads = list(reads) + [None] * (self.ports - len(reads))
        self.drive(wr, reads, runs)
        await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.cycle += 1
        due = [x for x in self.pending if x[0] == self.cycle]
        self.pending = [x for x in self.pending if x[0] != self.cycle]
        bits = str(self.dut.rd_data.value)[::-1]  # LSB first; a port with nothing due may still be X
        vbits = str(self.dut.rd_vec.value)[::-1]
        for _, p, want, a, run in due:
            assert self.field(bits, p, f"port {p} word {a}") == want, f"cycle {self.cycle}: port {p} word {a}"
            self.checked += 1
            for c, w in (run or {}).items():
                got = self.field(vbits, p * self.vec + c, f"port {p} run of word {a}, column {c}")
                assert got == w, f"cycle {self.cycle}: port {p} run of word {a}, column {c}: {got:#x} != {w:#x}"
            self.runs_checked += run is not None

    def field(self, bits: str, i: int, what: str) -> int:
        """Word i of an LSB-first bit string."""
        f = bits[self.width * i:self.width * (i + 1)][::-1]
        assert set(f) <= {"0", "1"}, f"cycle {self.cycle}: {what}: {f}"
        return int(f, 2)

    def word(self):
        return int(self.rng.integers(0, 1 << self.width))


async def start(dut) -> Bank:
    b = Bank(dut)
    Clock(dut.clk, 10, unit="ns").start()
    b.drive(None, [None] * b.ports)
    await FallingEdge(dut.clk)
    return b


@cocotb.test()
async def reads_return_the_words_written(dut):
    """Every word written once (all copies), then random writes and reads: back-to-back reads on every port, the
    same word on two ports, a word read in the cycle after its write, words at the block boundaries; with VEC > 1
    a third of the reads take a run of 2..VEC words (never one holding a word written that cycle, often beside one in
    the same row), and a third of the writes write several columns of a row at once (never a word read that
    cycle)."""
    b = await start(dut)
    for a in range(b.depth):
        await b.step((a, b.word()))
    bits = int(dut.BLOCK_BITS.value)
    blk = b.depth if bits == 0 else 1 << (max(bits // b.width, 1).bit_length() - 1)  # words per block RAM
    edges = sorted({0, b.depth - 1} | {a for a in range(b.depth) if a // b.vec % blk in (0, blk - 1)})
    runs = beside = 0
    max_sh = b.vec.bit_length() - 1
    for i in range(3000):
        wr = [(int(b.rng.integers(0, b.depth)), b.word())] if b.rng.random() < 0.5 else []
        if wr and b.vec > 1 and b.rng.random() < 0.33:  # more columns of the same row
            first = wr[0][0] - wr[0][0] % b.vec
            wr += [(a, b.word()) for a in range(first, min(first + b.vec, b.depth))
                   if a != wr[0][0] and b.rng.random() < 0.6]
            runs += len(wr) > 1
        written = {a for a, _ in wr}
        reads, sh = [], []
        for p in range(b.ports):
            sh.append(0)
            if b.rng.random() < 0.8:
                a = int(b.rng.choice(edges)) if b.rng.random() < 0.2 else int(b.rng.integers(0, b.depth))
                if p and b.rng.random() < 0.2:
                    a = reads[0] if reads[0] is not None else a  # both ports on one word
                top = max_sh  # the longest run to draw
                if wr and b.vec > 2 and b.rng.random() < 0.3:
                    top = int(b.rng.integers(1, max_sh))
                    a = wr[0][0] ^ (1 << top)  # a word of the row written, outside its runs of up to 2^top words
                if a in written or a >= b.depth:
                    reads.append(None)  # never a word written this cycle
                    continue
                if b.vec > 1 and b.rng.random() < 0.33:
                    sh[p] = int(b.rng.integers(1, top + 1))
                    first = a >> sh[p] << sh[p]
                    if written & set(range(first, first + (1 << sh[p]))):
                        sh[p] = 0  # never a run holding a word written this cycle
                    elif wr and a // b.vec == wr[0][0] // b.vec:
                        beside += 1  # a run read beside a write to its row
                reads.append(a)
            else:
                reads.append(None)
        await b.step(wr, reads, sh)
        if wr and b.rng.random() < 0.3:  # a word just written, read in the next cycle
            await b.step(None, [wr[-1][0]] * b.ports)
    for _ in range(2 + b.out_reg):
        await b.step()
    assert not b.pending and b.checked > 2000, f"{b.checked} reads checked, {len(b.pending)} pending"
    assert b.vec == 1 or (b.runs_checked > 500 and runs > 200 and beside > 50), \
        f"{b.runs_checked} run reads checked ({beside} beside a write to their row), {runs} runs written"


@cocotb.test(skip=True)  # run only by test_tt_bank.py's collision case (cocotb TESTCASE): it ends the simulation
async def read_during_write_stops_the_simulation(dut):
    """A read of the word written in the same cycle (with rows: a run of 2 words, word 2 read and word 3
    written): the simulation check of tt_bank.v must stop the run."""
    b = await start(dut)
    await b.step((3, 1))
    b.dut.wr_en.value = 1
    b.dut.wr_addr.value = 3
    b.dut.wr_mask.value = 1 << 3 % b.vec
    b.dut.rd_en.value = 1
    b.dut.rd_addr.value = 3 ^ (b.vec > 1)  # with rows: word 2, its run of 2 words holding word 3
    b.dut.rd_run_sh.value = int(b.vec > 1)
    await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    for _ in range(4):
        await RisingEdge(dut.clk)
    raise AssertionError("the simulation went on after a read of the word written in the same cycle")
