"""cocotb tests of tt_sce: one softmax cross-entropy gradient per op, every expected value from golden/isa/sce.py's
execute_sce (golden/semantics.py sce_gradient): the written words (the whole error bank: nothing outside e_base ..
e_base + n_out - 1 may change, each of those words written exactly once), pred, p_label, sat_count, the reads (the
z words of the used classes only, three times) and the cycle count 2 classes + n_out + 2 MEM_LAT + 35. Stimulus:
random legal descriptors (frac_z over its whole range, error formats that saturate, classes < n_out), extreme
logits (all equal, only the extremes, one huge, ties), every label, the compiled sce ops of tiny and digits with
their fractions and moved ones, in place, every error code, a start while busy; every op starts the cycle its
predecessor's done is seen (back to back). numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from __future__ import annotations

from dataclasses import replace

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden.arch import ADDR_W, SCE_ERR_COUNT, SCE_ERR_FRAC, SCE_ERR_LABEL, SCE_ERR_WIDTH
from golden.isa.sce import SCE_FRAC_Z_MAX, SCE_FRAC_Z_MIN, SceDesc, execute_sce, pack_sce_ports, sce_error
from golden.isa.timing import sce_cycles
from golden.lowering import lower_sce
from golden.tests.test_isa_sce import random_logits, random_sce, sce_compiled
from verif.unit_stimulus import busy_restarts, start_and_wait

CHECK_CYCLES = 2  # an illegal op: start, the registered legality check, then done with the error (tt_op_ctrl)


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


class Memories:
    """The z read port with MEM_LAT cycles of latency and the error write port, on numpy banks (z and e may be
    one array). Driven and sampled at falling edges: a read seen in cycle c is answered in cycle c + MEM_LAT;
    between answers the data bus carries junk. A write seen in cycle c is committed after the read of cycle c.
    The strobes are ignored while rst is high (Verilator randomises registers at time 0)."""

    def __init__(self, dut, lat: int):
        self.dut, self.lat = dut, lat
        self.z_w, self.out_w = int(dut.Z_W.value), int(dut.OUT_W.value)
        self.z = self.e = None
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
            d.z_rd_data.value = (
                (v & ((1 << self.z_w) - 1)) if v is not None else int(self.gen.integers(0, 1 << self.z_w))
            )
            if int(d.z_rd_en.value) and not in_reset:
                a = int(d.z_rd_addr.value)
                self.read_addrs.append(a)
                self.pipe.append(int(self.z[a]) if self.z is not None and a < len(self.z) else None)
            else:
                self.pipe.append(None)
            if int(d.o_wr_en.value) and not in_reset:
                a = int(d.o_wr_addr.value)
                self.write_addrs.append(a)
                if self.e is not None and a < len(self.e):
                    self.e[a] = signed(int(d.o_wr_data.value), self.out_w)


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.lat = int(dut.MEM_LAT.value)
        self.z_w, self.out_w, self.n_w = int(dut.Z_W.value), int(dut.OUT_W.value), int(dut.N_W.value)
        assert int(dut.ADDR_W.value) == ADDR_W
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED)
        self.mems = Memories(dut, self.lat)
        self.ops = 0

    async def setup(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.start.value = 0
        self.drive(SceDesc(0, 0, 1, 1, 0, 0, 16, 14))
        cocotb.start_soon(self.mems.run())
        await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst.value = 0
        for _ in range(40):  # longer than an op of one output: idle, no memory access
            await FallingEdge(d.clk)
            assert int(d.busy.value) == 0 and int(d.done.value) == 0 and int(d.error.value) == 0, "idle after reset"
        assert not self.mems.read_addrs and not self.mems.write_addrs, "memory access after reset"

    def drive(self, desc: SceDesc):
        for name, v in pack_sce_ports(desc).items():
            getattr(self.dut, name).value = v

    def cycles_of(self, desc: SceDesc) -> int:
        return sce_cycles(desc, self.lat)

    async def execute(self, desc: SceDesc, z, e, limit: int, restarts: frozenset = frozenset()) -> int:
        """Start the op (the ports held until done), wait for done (at most `limit` cycles); returns the cycles from
        start to done. `restarts`: cycles after the start in which start is pulsed again while busy."""
        self.mems.z, self.mems.e = z, e
        self.drive(desc)
        return await start_and_wait(self.dut, limit, restarts)

    async def check(self, desc: SceDesc, z, e=None, what: str = "", restarts: frozenset = frozenset()):
        """Run one legal descriptor (e: the error bank, None for a fresh junk one; it may be z) and compare
        everything against execute_sce."""
        if e is None:
            e = self.gen.integers(-(1 << (self.out_w - 1)), 1 << (self.out_w - 1), size=desc.e_base + desc.n_out + 8)
        want_e, want_sat, want_p, want_pred = execute_sce(desc, z, e, self.out_w)
        reads, writes = len(self.mems.read_addrs), len(self.mems.write_addrs)
        what = f"{what} {desc}" + (f" restarted in {sorted(restarts)}" if restarts else "")
        cycles = await self.execute(desc, z, e, self.cycles_of(desc) + 20, restarts)
        d = self.dut
        assert int(d.error.value) == 0, f"{what}: error {int(d.error_code.value)}"
        bad = np.flatnonzero(e != want_e)
        assert bad.size == 0, (
            f"{what}: {bad.size} words differ, first at {bad[0]}: got {e[bad[0]]}, want {want_e[bad[0]]}"
        )
        got_w = self.mems.write_addrs[writes:]
        assert got_w == [desc.e_base + j for j in range(desc.n_out)], f"{what}: write addresses {got_w}"
        got_r = self.mems.read_addrs[reads:]
        used = [desc.z_base + j for j in range(desc.classes)]
        assert got_r == used * 3, f"{what}: read addresses {got_r}"
        assert int(d.pred.value) == want_pred, f"{what}: pred {int(d.pred.value)} != {want_pred}"
        assert int(d.p_label.value) == want_p, f"{what}: p_label {int(d.p_label.value)} != {want_p}"
        assert int(d.sat_count.value) == want_sat, f"{what}: sat {int(d.sat_count.value)} != {want_sat}"
        assert cycles == self.cycles_of(desc), f"{what}: {cycles} cycles, want {self.cycles_of(desc)}"
        self.ops += 1
        return want_sat


@cocotb.test()
async def test_random_descriptors(dut):
    """Random legal descriptors: any frac_z of the legal range (both ends, around the -16 / -17 change of the
    shift direction), error formats up to OUT_W that saturate, classes < n_out, every logit pattern; then ops
    with the most outputs the N_W-bit fields allow."""
    tb = Tb(dut)
    await tb.setup()
    sat = 0
    for trial in range(300):
        desc, z = random_sce(tb.gen, tb.out_w, w=tb.z_w)
        sat += await tb.check(desc, z, what=f"random {trial}")
    n_max = (1 << tb.n_w) - 1
    for trial in range(3):
        desc, _ = random_sce(tb.gen, tb.out_w, w=tb.z_w)  # its formats; the N_W-bit fields may exceed SCE_N_W
        desc = replace(desc, n_out=n_max, classes=n_max - trial, label=int(tb.gen.integers(0, n_max - trial)))
        z = tb.gen.integers(-(1 << (tb.z_w - 1)), 1 << (tb.z_w - 1), size=desc.z_base + n_max + 4)
        z[desc.z_base : desc.z_base + n_max] = random_logits(tb.gen, n_max, desc.classes, tb.z_w)
        sat += await tb.check(desc, z, what=f"largest {trial}")
    assert sat > 0


@cocotb.test()
async def test_every_label(dut):
    """Every label of 12 outputs with 10 classes for each logit pattern and a range of frac_z."""
    tb = Tb(dut)
    await tb.setup()
    for kind in range(6):
        z = np.zeros(40, dtype=np.int64)
        z[7:19] = random_logits(tb.gen, 12, 10, tb.z_w, kind=kind)
        for label in range(10):
            frac_z = int(tb.gen.choice([SCE_FRAC_Z_MIN, -17, -16, -4, 0, 8, 20, SCE_FRAC_Z_MAX]))
            err_w = int(tb.gen.integers(2, tb.out_w + 1))
            desc = SceDesc(7, int(tb.gen.integers(0, 20)), 12, 10, label, frac_z, err_w, int(tb.gen.integers(0, 32)))
            await tb.check(desc, z, what=f"pattern {kind} label {label}")


@cocotb.test()
async def test_compiled_ops(dut):
    """The sce ops of tiny and digits (lower_sce): the configured fractions and moved ones over frac_min..frac_max,
    logits and errors in the one activation bank as the compiler lays them out, random labels."""
    tb = Tb(dut)
    await tb.setup()
    for model in ("tiny", "digits"):
        comp, op = sce_compiled(model)
        (zn,) = op.ins
        frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
        fm = comp.cfg.formats
        fracs = [frac[zn], fm.frac_min, fm.frac_max] + [
            int(f) for f in tb.gen.integers(fm.frac_min, fm.frac_max + 1, size=12)
        ]
        for frac_z in fracs:
            desc = lower_sce(comp, op, dict(frac, **{zn: frac_z}), int(tb.gen.integers(0, comp.cfg.classes)))
            assert desc.banks[0] == desc.banks[1]
            bank = tb.gen.integers(-50, 50, size=max(desc.z_base, desc.e_base) + desc.n_out + 8)
            bank[desc.z_base : desc.z_base + desc.n_out] = random_logits(tb.gen, desc.n_out, desc.classes, tb.z_w)
            await tb.check(desc, bank, bank, what=f"{model} frac_z {frac_z}")


@cocotb.test()
async def test_in_place(dut):
    """e = z and e below an overlapping z: each error word is written after its logit's last read."""
    tb = Tb(dut)
    await tb.setup()
    for trial in range(20):
        desc, z = random_sce(tb.gen, tb.out_w, w=tb.z_w)
        e_base = desc.z_base if trial % 2 else int(tb.gen.integers(max(0, desc.z_base - desc.n_out), desc.z_base + 1))
        desc = replace(desc, e_base=e_base)
        await tb.check(desc, z, z, what=f"in place {trial}")


@cocotb.test()
async def test_illegal_ops(dut):
    """Every error code (and several at once: the lowest): error and done two cycles after start (tt_op_ctrl), no memory
    access; the outputs of the last legal op stay; the unit then runs a legal op normally."""
    tb = Tb(dut)
    await tb.setup()
    ok, z = random_sce(tb.gen, tb.out_w, w=tb.z_w)
    ok = replace(ok, n_out=10, classes=8, label=7)
    z = np.concatenate([z, np.zeros(20, dtype=np.int64)])
    await tb.check(ok, z)
    bad = [
        replace(ok, n_out=0, classes=0, label=0),
        replace(ok, classes=0, label=0),
        replace(ok, classes=11),
        replace(ok, label=8),
        replace(ok, label=(1 << tb.n_w) - 1),
        replace(ok, err_w=0),
        replace(ok, err_w=1),
        replace(ok, err_w=tb.out_w + 1),
        replace(ok, err_w=63),
        replace(ok, frac_z=-33),
        replace(ok, frac_z=-64),
        replace(ok, frac_z=48),
        replace(ok, frac_z=63),
        replace(ok, err_frac=32),
        replace(ok, err_frac=63),
        replace(ok, classes=11, label=20, err_w=0, frac_z=63),  # several errors: the lowest code
        replace(ok, label=9, err_w=0, err_frac=40),
        replace(ok, err_w=1, frac_z=-40),
    ]
    d = dut
    outs = (int(d.pred.value), int(d.p_label.value), int(d.sat_count.value))
    codes = set()
    for desc in bad:
        code = sce_error(desc, tb.out_w)[0]
        assert code, desc
        codes.add(code)
        e = tb.gen.integers(-100, 100, size=40)
        before = e.copy()
        n = len(tb.mems.read_addrs), len(tb.mems.write_addrs)
        cycles = await tb.execute(desc, z, e, 4)
        assert cycles == CHECK_CYCLES, f"error after {cycles} cycles"
        assert int(d.error.value) == 1 and int(d.error_code.value) == code, (
            f"{desc}: error {int(d.error.value)} code {int(d.error_code.value)}, want {code}"
        )
        for _ in range(3 + 2 * tb.lat):  # nothing moves afterwards
            await FallingEdge(d.clk)
            assert int(d.done.value) == 1 and int(d.busy.value) == 0 and int(d.error_code.value) == code
        assert (len(tb.mems.read_addrs), len(tb.mems.write_addrs)) == n, "an illegal op touched a memory"
        assert np.array_equal(e, before)
        assert (int(d.pred.value), int(d.p_label.value), int(d.sat_count.value)) == outs, "outputs changed"
    assert codes == {SCE_ERR_COUNT, SCE_ERR_LABEL, SCE_ERR_WIDTH, SCE_ERR_FRAC}
    await tb.check(ok, z, what="after the errors")  # a legal op clears the error
    assert int(d.error_code.value) == 0


@cocotb.test()
async def test_start_while_busy(dut):
    """A start while the unit is busy is ignored: pulses right after the start, in the last busy cycle, held high
    for a stretch or at random cycles (the descriptor held stable) neither restart nor disturb the op: same
    words, addresses, reads, outputs and cycle count."""
    tb = Tb(dut)
    await tb.setup()
    for trial in range(60):
        desc, z = random_sce(tb.gen, tb.out_w, w=tb.z_w)
        restarts = busy_restarts(tb.gen, tb.cycles_of(desc)) if trial % 4 else frozenset()
        await tb.check(desc, z, what=f"busy {trial}", restarts=restarts)
