"""cocotb tests of tt_bank: every copy takes every write, each read port returns the word of its own copy
1 + OUT_REG cycles after rd_en, across the block RAMs a copy is split into (BLOCK_BITS), and with VEC > 1 the run of
the rd_run_n1 + 1 consecutive words from its address (in rd_vec, by column: aligned runs, runs that start anywhere
in a row and go on into the next, also into the next block RAM, runs that end at the last word), the columns outside
the run keeping their last read, and a write of several words of a row at once (wr_mask) writes exactly those; and
the simulation check behind no_rw_check stops a run that reads a word in the cycle it is written (also a word of
the next row that the run goes on into), and lets a run read go on while a word of its rows outside the run is
written.

The reference is a Python list of the words (parameters read from the HDL). Every word is written first (the
words are not reset), then random writes and reads on every port; a read never hits the word written in the
same cycle (the accelerator never does that: tt_bank.v). numpy is seeded from cocotb.RANDOM_SEED.
"""

from collections import Counter

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
        assert len(dut.rd_vec) == self.width * self.vec * self.ports and len(dut.rd_run_n1) == 4 * self.ports
        self.words = [0] * self.depth
        self.rng = np.random.default_rng(cocotb.RANDOM_SEED)
        self.pending = []  # (cycle the data is due, port, expected word, address, expected run by column)
        self.cycle = 0
        self.checked = 0
        self.runs_checked = 0
        self.last = [{} for _ in range(self.ports)]  # per port: each column's last read word (rd_vec)

    def run(self, a: int, n1: int) -> dict:
        """The words a .. a + n1 by column: n1 + 1 consecutive words, on into the next row past the end of a's."""
        assert 0 <= n1 < self.vec and 0 <= a and a + n1 < self.depth, (a, n1)
        return {i % self.vec: self.words[i] for i in range(a, a + n1 + 1)}

    def drive(self, wr, reads, runs=None):
        """wr: (addr, data) or None, or a list of them in one row (a write of several columns); reads: per port an
        address or None; runs: per port the words its read takes after its address's (rd_run_n1; rd_vec is checked:
        the run's columns, and the others' last reads). Drives for the next rising edge."""
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
        en, run_n1, addr = 0, 0, 0
        for p, a in enumerate(reads):
            n1 = runs[p] if runs else 0
            if a is not None:
                en |= 1 << p
                run_n1 |= n1 << (4 * p)
                addr |= a << (self.aw * p)
                self.pending.append((self.cycle + 1 + self.out_reg, p, self.words[a], a, self.run(a, n1)))
        d.rd_en.value = en
        d.rd_run_n1.value = run_n1
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
            self.last[p].update(run)  # the run's columns read; the others keep their last read
            for c, w in self.last[p].items():
                what = f"port {p} run of {len(run)} words from {a}, column {c}{'' if c in run else ' (not read)'}"
                got = self.field(vbits, p * self.vec + c, what)
                assert got == w, f"cycle {self.cycle}: {what}: {got:#x} != {w:#x}"
            self.runs_checked += len(run) > 1

    def field(self, bits: str, i: int, what: str) -> int:
        """Word i of an LSB-first bit string."""
        f = bits[self.width * i : self.width * (i + 1)][::-1]
        assert set(f) <= {"0", "1"}, f"cycle {self.cycle}: {what}: {f}"
        return int(f, 2)

    def word(self):
        return int(self.rng.integers(0, 1 << self.width))

    def block_rows(self) -> int:
        """The rows of a column's block RAM (tt_bank BLK; the whole column without BLOCK_BITS)."""
        bits = int(self.dut.BLOCK_BITS.value)
        return self.depth if bits == 0 else 1 << (max(bits // self.width, 1).bit_length() - 1)


async def start(dut) -> Bank:
    b = Bank(dut)
    Clock(dut.clk, 10, unit="ns").start()
    b.drive(None, [None] * b.ports)
    dut.rst.value = 1  # arms the read-during-write check
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    return b


def draw_read(b: Bank, first, written: set, wr_row, edges: list):
    """One port's read: (address, n1), its run never holding a word written this cycle, or None (no read).
    first: port 0's address (port 1 sometimes reads the same word); wr_row: the row written this cycle, or None.
    With VEC > 1 half the reads take a run: aligned (a vector load's, a wide drain's), anywhere, from late in a row
    on into the next, from a block RAM's last row on into the next block RAM's, ending at the last word, or beside
    this cycle's write (from its row or the one before)."""
    rng = b.rng
    a = int(rng.choice(edges)) if rng.random() < 0.2 else int(rng.integers(0, b.depth))
    if first is not None and rng.random() < 0.2:
        a = first  # both ports on one word
    n1 = 0
    if b.vec > 1 and rng.random() < 0.5:
        n1 = int(rng.integers(1, b.vec))
        rows, blk = -(-b.depth // b.vec), b.block_rows()
        kind = (
            "beside"
            if wr_row is not None and rng.random() < 0.3
            else rng.choice(["aligned", "any", "wrap", "block", "end"])
        )
        if kind == "aligned":
            n1 = (1 << int(rng.integers(1, b.vec.bit_length()))) - 1
            a -= a % (n1 + 1)
        elif kind in ("wrap", "block"):
            ends = list(range(blk - 1, rows - 1, blk)) if kind == "block" else []  # a block RAM's last row
            row = int(rng.choice(ends)) if ends else int(rng.integers(0, rows - 1))
            a = row * b.vec + int(rng.integers(b.vec - n1, b.vec))  # a column from which the run crosses the row
        elif kind == "end":
            a = b.depth - 1 - n1
        elif kind == "beside":
            a = max(wr_row - int(rng.integers(0, 2)), 0) * b.vec + int(rng.integers(0, b.vec))
        a = min(a, b.depth - 1)
    if a in written:
        return None  # never a word written this cycle
    return a, min([n1, b.depth - 1 - a] + [w - a - 1 for w in written if w > a])  # nor a run holding one


@cocotb.test()
async def reads_return_the_words_written(dut):
    """Every word written once (all copies), then random writes and reads: back-to-back reads on every port, the
    same word on two ports, a word read in the cycle after its write, words at the block boundaries; with VEC > 1
    half the reads take a run of 2..VEC words (draw_read: also unaligned, on into the next row and block RAM,
    ending at the last word; never holding a word written that cycle, often beside one in the same rows), and a
    third of the writes write several columns of a row at once (never a word read that cycle)."""
    b = await start(dut)
    for a in range(b.depth):
        await b.step((a, b.word()))
    blk = b.block_rows()
    edges = sorted({0, b.depth - 1} | {a for a in range(b.depth) if a // b.vec % blk in (0, blk - 1)})
    n = Counter()
    for _i in range(3000):
        wr = [(int(b.rng.integers(0, b.depth)), b.word())] if b.rng.random() < 0.5 else []
        if wr and b.vec > 1 and b.rng.random() < 0.33:  # more columns of the same row
            first = wr[0][0] - wr[0][0] % b.vec
            wr += [
                (a, b.word())
                for a in range(first, min(first + b.vec, b.depth))
                if a != wr[0][0] and b.rng.random() < 0.6
            ]
            n["runs written"] += len(wr) > 1
        written = {a for a, _ in wr}
        wr_row = wr[0][0] // b.vec if wr else None
        reads, n1s = [], []
        for _p in range(b.ports):
            read = draw_read(b, reads[0] if reads else None, written, wr_row, edges) if b.rng.random() < 0.8 else None
            reads.append(read[0] if read else None)
            n1s.append(read[1] if read else 0)
            if read and read[1]:
                a, n1 = read
                row, last_row = a // b.vec, (a + n1) // b.vec
                n["crossing a row"] += last_row > row
                n["crossing a block"] += last_row > row and last_row % blk == 0
                n["ending at the last word"] += a + n1 == b.depth - 1
                n["beside a write to their rows"] += wr_row in (row, last_row)
                n["crossing into the row written"] += wr_row == last_row > row
        await b.step(wr, reads, n1s)
        if wr and b.rng.random() < 0.3:  # a word just written, read in the next cycle
            await b.step(None, [wr[-1][0]] * b.ports)
    for _ in range(2 + b.out_reg):
        await b.step()
    dut._log.info(f"{b.checked} reads checked, {b.runs_checked} of them runs: {dict(n)}")
    assert not b.pending and b.checked > 2000, f"{b.checked} reads checked, {len(b.pending)} pending"
    if b.vec > 1:
        want = {
            "runs written": 200,
            "crossing a row": 200,
            "ending at the last word": 50,
            "beside a write to their rows": 50,
            "crossing into the row written": 20,
            "crossing a block": 50 if -(-b.depth // b.vec) > blk else 0,
        }
        assert b.runs_checked > 800 and all(n[k] >= v for k, v in want.items()), (
            f"{b.runs_checked} run reads checked, {dict(n)}: want {want}"
        )


async def collide_once(b: Bank, w: int, a: int, n1: int = 0):
    """Write word w and read the run of n1 + 1 words from a in the same cycle."""
    b.dut.wr_en.value = 1
    b.dut.wr_addr.value = w
    b.dut.wr_mask.value = 1 << w % b.vec
    b.dut.rd_en.value = 1
    b.dut.rd_addr.value = a
    b.dut.rd_run_n1.value = n1
    await RisingEdge(b.dut.clk)
    await FallingEdge(b.dut.clk)


async def collide(b: Bank, w: int, a: int, n1: int):
    """Write word w, then write it again and read the run of n1 + 1 words from a in the same cycle; the simulation
    must stop there."""
    await b.step((w, 1))
    await collide_once(b, w, a, n1)
    for _ in range(4):
        await RisingEdge(b.dut.clk)
    raise AssertionError("the simulation went on after a read of the word written in the same cycle")


@cocotb.test(skip=True)  # run only by test_tt_bank.py's reset case (cocotb TESTCASE)
async def read_during_write_before_reset_ends_goes_on(dut):
    """Before the first reset and during it, the ports carry whatever the simulator's random initial values make
    (a top's units are not reset yet): a read of the word written in the same cycle (word 5) then goes on. Once the
    reset has ended, a collision on word 3 stops the simulation (test_tt_bank.py checks the message names word 3)."""
    b = Bank(dut)
    Clock(dut.clk, 10, unit="ns").start()
    for rst in (0, 1, 1):  # before any reset, then in one
        dut.rst.value = rst
        await collide_once(b, 5, 5)
    dut.rst.value = 0
    await collide_once(b, 3, 3)
    raise AssertionError("the simulation went on after a read of the word written in the same cycle")


@cocotb.test(skip=True)  # run only by test_tt_bank.py's collision case (cocotb TESTCASE): it ends the simulation
async def read_during_write_stops_the_simulation(dut):
    """A read of the word written in the same cycle (with rows: a run of 2 words, word 2 read and word 3
    written): the simulation check of tt_bank.v must stop the run."""
    b = await start(dut)
    await collide(b, 3, 3 ^ (b.vec > 1), int(b.vec > 1))


@cocotb.test(skip=True)  # run only by test_tt_bank.py's collision case (cocotb TESTCASE): it ends the simulation
async def wrapped_read_during_write_stops_the_simulation(dut):
    """A run of 2 words from the last word of a block RAM's last row: its column 0 reads the next row, the first
    row of the next block RAM, whose word in column 0 is written in that cycle (the address's row is not): the
    simulation check of tt_bank.v must stop the run."""
    b = await start(dut)
    w = b.block_rows() * b.vec  # the first word of the second block RAM of every column
    assert b.vec > 1 and w < b.depth, "needs rows and a second block RAM"
    await collide(b, w, w - 1, 1)
