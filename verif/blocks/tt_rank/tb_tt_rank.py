"""cocotb tests of tt_rank: the rank update of one bond per op, every expected value from golden/isa/rank.py's
execute_rank (golden/semantics.py rank_bond): the whole memory after the op (only the bond's lambda, mask and tau words
may change, each written exactly once, in the order rank_writes gives), the reads (rank_reads: lambda, the mask
and the slice's words per slice, then lambda again) and the cycle count rank_cycles. Stimulus: random legal
descriptors (golden.tests.test_isa_rank.random_rank: core words up to 16 bits, lambdas from negative to
saturated, dead and junk-valued masks, any q_shift and inv_d, so Q runs past its clamp), the largest slice (M
at its 47-bit top), the compiled rank ops of tiny and digits over many rank updates in a row with the cores
scaled down until slices prune, every error code, a start while busy; every op starts the cycle its
predecessor's done is seen (back to back). numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from __future__ import annotations

from dataclasses import replace

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden.arch import RANK_ERR_COUNT, RANK_ERR_RANK, RANK_ERR_SHIFT
from golden.isa.rank import RankDesc, check_rank, execute_rank, pack_rank_ports, rank_error, rank_reads
from golden.isa.timing import rank_cycles
from golden.tests.test_isa_rank import bond_memory, random_rank, rank_compiled
from verif.unit_stimulus import busy_restarts, start_and_wait

CHECK_CYCLES = 2  # an illegal op: start, the registered legality check, then done with the error (tt_op_ctrl)
WORD = 16


def signed(v: int, w: int = WORD) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


def rank_writes(desc: RankDesc) -> list[int]:
    """The addresses the unit writes, in order: lambda (low, high) per slice, then tau and the mask per slice."""
    out = []
    for r in range(desc.rank):
        out += [desc.lam_base + 2 * r, desc.lam_base + 2 * r + 1]
    for r in range(desc.rank):
        out += [desc.tau_base + r, desc.mask_base + r]
    return out


class Memory:
    """One memory of signed 16-bit words behind the read port (MEM_LAT cycles of latency) and the write port.
    Driven and sampled at falling edges: a read seen in cycle c is answered in cycle c + MEM_LAT; between answers
    the data bus carries junk. A write seen in cycle c is committed after the read of cycle c. The strobes are
    ignored while rst is high (Verilator randomises registers at time 0)."""

    def __init__(self, dut, lat: int):
        self.dut, self.lat = dut, lat
        self.mem = None
        self.pipe = [None] * lat
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED + 1)
        self.read_addrs: list[int] = []
        self.write_addrs: list[int] = []

    async def run(self):
        d = self.dut
        while True:
            await FallingEdge(d.clk)
            in_reset = bool(int(d.rst.value))
            v = self.pipe.pop(0)
            d.rd_data.value = (v & 0xFFFF) if v is not None else int(self.gen.integers(0, 1 << WORD))
            if int(d.rd_en.value) and not in_reset:
                a = int(d.rd_addr.value)
                self.read_addrs.append(a)
                self.pipe.append(int(self.mem[a]) if self.mem is not None and a < len(self.mem) else None)
            else:
                self.pipe.append(None)
            if int(d.wr_en.value) and not in_reset:
                a = int(d.wr_addr.value)
                self.write_addrs.append(a)
                if self.mem is not None and a < len(self.mem):
                    self.mem[a] = signed(int(d.wr_data.value))


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.lat = int(dut.MEM_LAT.value)
        self.mask_n, self.addr_w = int(dut.MASK_N.value), int(dut.ADDR_W.value)
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED)
        self.memory = Memory(dut, self.lat)
        self.ops = 0

    async def setup(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.start.value = 0
        self.drive(RankDesc(0, 1, 2, 4, 5, 1, 1, 1, 0, 0, 0, 0))
        cocotb.start_soon(self.memory.run())
        await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst.value = 0
        for _ in range(100):  # longer than an op of one slice: idle, no memory access
            await FallingEdge(d.clk)
            assert int(d.busy.value) == 0 and int(d.done.value) == 0 and int(d.error.value) == 0, "idle after reset"
        assert not self.memory.read_addrs and not self.memory.write_addrs, "memory access after reset"

    def drive(self, desc: RankDesc):
        for name, v in pack_rank_ports(desc).items():
            getattr(self.dut, name).value = v

    def fits(self, desc: RankDesc) -> bool:
        """The descriptor's words are addressable with this build's ADDR_W."""
        return max(hi for _, hi in desc.regions().values()) <= 1 << self.addr_w

    async def execute(self, desc: RankDesc, mem, limit: int, restarts: frozenset = frozenset()) -> int:
        """Start the op (the ports held until done), wait for done (at most `limit` cycles); returns the cycles from
        start to done. `restarts`: cycles after the start in which start is pulsed again while busy."""
        self.memory.mem = mem
        self.drive(desc)
        return await start_and_wait(self.dut, limit, restarts)

    async def check(
        self, desc: RankDesc, mem: np.ndarray, what: str = "", restarts: frozenset = frozenset()
    ) -> np.ndarray:
        """Run one legal descriptor on `mem` (updated in place) and compare everything against execute_rank;
        returns the memory."""
        want = execute_rank(desc, mem, self.mask_n)
        reads, writes = len(self.memory.read_addrs), len(self.memory.write_addrs)
        what = f"{what} {desc}" + (f" restarted in {sorted(restarts)}" if restarts else "")
        want_cycles = rank_cycles(desc, self.lat)
        cycles = await self.execute(desc, mem, want_cycles + 20, restarts)
        d = self.dut
        assert int(d.error.value) == 0, f"{what}: error {int(d.error_code.value)}"
        bad = np.flatnonzero(mem != want)
        assert bad.size == 0, (
            f"{what}: {bad.size} words differ, first at {bad[0]}: got {mem[bad[0]]}, want {want[bad[0]]}"
        )
        assert self.memory.write_addrs[writes:] == rank_writes(desc), f"{what}: write addresses"
        assert self.memory.read_addrs[reads:] == rank_reads(desc), f"{what}: read addresses"
        assert cycles == want_cycles, f"{what}: {cycles} cycles, want {want_cycles}"
        self.ops += 1
        return mem


def _state(desc: RankDesc, mem: np.ndarray) -> tuple:
    """(lambdas, masks, taus) of the bond in `mem`."""
    lam = [
        (int(mem[desc.lam_base + 2 * r + 1]) << 16) | (int(mem[desc.lam_base + 2 * r]) & 0xFFFF)
        for r in range(desc.rank)
    ]
    return (
        lam,
        list(mem[desc.mask_base : desc.mask_base + desc.rank]),
        list(mem[desc.tau_base : desc.tau_base + desc.rank]),
    )


@cocotb.test()
async def test_random_descriptors(dut):
    """Random legal descriptors up to the build's largest rank: every rule of rank_bond fires somewhere (pruned
    by the threshold, kept by the keep-one rule among live slices or slice 0, tau clamped at 2^15 - 1, lambda
    saturated both ways, Q past its clamp)."""
    tb = Tb(dut)
    await tb.setup()
    kept_one = tau_max = sat = 0
    for trial in range(150):
        desc, mem = random_rank(tb.gen, tb.mask_n)
        before = _state(desc, mem)
        await tb.check(desc, mem, what=f"random {trial}")
        lam, masks, taus = _state(desc, mem)
        kept_one += int(sum(masks) == 1 and all(l < desc.threshold for l in lam))
        tau_max += int(max(taus) == (1 << 15) - 1)
        sat += int(max(lam) == (1 << 31) - 1 and max(before[0]) < (1 << 31) - 1)
    assert kept_one and tau_max and sat, (kept_one, tau_max, sat)


@cocotb.test()
async def test_largest_slice(dut):
    """One slice of 2 x 65,535 words of -2^15: M = 2^30 x 131,070, the top of the 47-bit sum, with the exact
    inv_d and the largest words' q_shift (skipped in a build whose addresses cannot hold it)."""
    tb = Tb(dut)
    await tb.setup()
    n = (1 << 16) - 1
    desc = RankDesc(
        0,
        n,
        2 * n,
        2 * n + 2,
        2 * n + 3,
        rank=1,
        left_rows=n,
        right_cols=n,
        inv_d=round(2**24 / (2 * n + 1)),
        q_shift=30,
        threshold=1 << 24,
        tau_num=(1 << 48) - 1,
    )
    if not tb.fits(desc):
        return
    mem = np.full(2 * n + 4, -(1 << 15), dtype=np.int64)
    mem[2 * n : 2 * n + 4] = [0, 0, 1, 0]
    await tb.check(check_rank(desc), mem, what="largest slice")
    assert _state(desc, mem)[0] == [(6554 * (((1 << 30) * 2 * n * desc.inv_d + (1 << 29)) >> 30) + (1 << 15)) >> 16]


@cocotb.test()
async def test_compiled_bonds(dut):
    """Every bond of rank-adaptive tiny and digits (rank_fields, packed by bond_memory), rank update after rank
    update as the cores shrink to zero: lambda decays by 0.9 a round and slices prune down to the keep-one slice.
    Bonds of a rank above MASK_N raise error 1 instead."""
    tb = Tb(dut)
    await tb.setup()
    pruned = 0
    for model in ("tiny", "digits"):
        m = rank_compiled(model, seed=int(tb.gen.integers(0, 1 << 16)))
        for op in m.comp.rank_update:
            desc, mem = bond_memory(m, op)
            if desc.rank > tb.mask_n:
                cycles = await tb.execute(desc, mem, 4)
                assert cycles == CHECK_CYCLES and int(dut.error_code.value) == RANK_ERR_RANK
                continue
            for rnd in range(60):  # from round 4 on the cores are 0 and lambda decays by 0.9 a round
                scale = (1, 1, 0.5, 0.5, 0)[min(rnd, 4)]
                for _w, base, n in (
                    (op.ins[0], desc.left_base, desc.left_rows),
                    (op.ins[1], desc.right_base, desc.right_cols),
                ):
                    mem[base : base + n * desc.rank] = np.round(mem[base : base + n * desc.rank] * scale)
                await tb.check(desc, mem, what=f"{model} {op.note} round {rnd}")
            pruned += desc.rank - int(sum(_state(desc, mem)[1]))
    assert pruned > 0


@cocotb.test()
async def test_illegal_ops(dut):
    """Every error code (and several at once: the lowest): error and done two cycles after start (tt_op_ctrl), no
    memory access; the unit then runs a legal op normally."""
    tb = Tb(dut)
    await tb.setup()
    ok, mem = random_rank(tb.gen, tb.mask_n)
    await tb.check(ok, mem)
    bad = [
        replace(ok, rank=0),
        replace(ok, rank=tb.mask_n + 1),
        replace(ok, rank=31),
        replace(ok, left_rows=0),
        replace(ok, right_cols=0),
        replace(ok, left_rows=0, right_cols=0),
        replace(ok, q_shift=48),
        replace(ok, q_shift=63),
        replace(ok, rank=0, left_rows=0, q_shift=63),
        replace(ok, right_cols=0, q_shift=50),
    ]
    d = dut
    codes = set()
    for desc in bad:
        code = rank_error(desc, tb.mask_n)[0]
        assert code, desc
        codes.add(code)
        before = mem.copy()
        n = len(tb.memory.read_addrs), len(tb.memory.write_addrs)
        cycles = await tb.execute(desc, mem, 4)
        assert cycles == CHECK_CYCLES, f"error after {cycles} cycles"
        assert int(d.error.value) == 1 and int(d.error_code.value) == code, (
            f"{desc}: error {int(d.error.value)} code {int(d.error_code.value)}, want {code}"
        )
        for _ in range(3 + 2 * tb.lat):  # nothing moves afterwards
            await FallingEdge(d.clk)
            assert int(d.done.value) == 1 and int(d.busy.value) == 0 and int(d.error_code.value) == code
        assert (len(tb.memory.read_addrs), len(tb.memory.write_addrs)) == n, "an illegal op touched the memory"
        assert np.array_equal(mem, before)
    assert codes == {RANK_ERR_RANK, RANK_ERR_COUNT, RANK_ERR_SHIFT}
    await tb.check(ok, mem, what="after the errors")  # a legal op clears the error
    assert int(d.error_code.value) == 0


@cocotb.test()
async def test_start_while_busy(dut):
    """A start while the unit is busy is ignored: pulses right after the start, in the last busy cycle, held high
    for a stretch or at random cycles (the descriptor held stable) neither restart nor disturb the op."""
    tb = Tb(dut)
    await tb.setup()
    for trial in range(30):
        desc, mem = random_rank(tb.gen, tb.mask_n, rows_max=4)
        restarts = busy_restarts(tb.gen, rank_cycles(desc, tb.lat)) if trial % 4 else frozenset()
        await tb.check(desc, mem, what=f"busy {trial}", restarts=restarts)
