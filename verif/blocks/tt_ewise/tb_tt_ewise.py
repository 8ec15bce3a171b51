"""cocotb tests of tt_ewise: the compiled element-wise ops of the tiny and digits models (rank adaptation on, so the
mask and penalty ops exist; train_sample, infer and update), lowered by golden/lowering.py with random legal fractions
and executed on synchronous-read memory models; every word of the destination bank, the saturation count, max |y|, the
LFSR state after the op (the draws), the reads of every port and the cycle count are checked against golden/isa/ewise.py
execute_ewise and the golden Machine (golden/tests/test_isa_ewise.py helpers). Random descriptors cover widths,
alignments, shifts and modes the programs do not use; illegal descriptors must raise the error without touching a memory
or the random stream; a start while the unit is busy must be ignored. numpy is seeded from cocotb.RANDOM_SEED so SEED=n
reproduces a run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import fxp
from golden.arch import (
    ADDR_W,
    EW_ADAM_OPS,
    EW_CORE_OPS,
    EW_ERR_ALIGN,
    EW_ERR_COUNT,
    EW_ERR_EPS,
    EW_ERR_OPCODE,
    EW_ERR_SHIFT,
    EW_ERR_WIDTH,
    EW_MASK_N,
    EwOpcode,
)
from golden.fxp import NEAREST, STOCHASTIC
from golden.ir import EWISE_KINDS, OpKind
from golden.isa.ewise import (
    EW_ADAM_X_W,
    EW_ADAM_Z_W,
    EW_ALIGN_MIN,
    EW_ALIGN_TOP,
    EW_EPS_MAX,
    EW_RSQRT_W,
    EwiseDesc,
    check_ewise,
    ewise_error,
    execute_ewise,
    pack_ewise_ports,
)
from golden.isa.timing import ewise_cycles
from golden.semantics import adam_h_range
from golden.tests.test_isa_ewise import desc_ewise, ewise_case, ewise_compiled, ewise_ops, machine_ewise
from verif.unit_stimulus import busy_restarts, start_and_wait

CHECK_CYCLES = 2  # an illegal op: start, the registered legality check, then done with the error (tt_op_ctrl)
PORTS = ("x", "z", "o")


# An op's x memory: None for an op that reads no x (which tables_on_x passes through).
_X = TypeVar("_X", np.ndarray, None)


def tables_on_x(desc: EwiseDesc, x: _X, mem_tab: np.ndarray | None) -> tuple[EwiseDesc, _X]:
    """A MASK or PENALTY descriptor and an x memory that holds its tables too (the unit reads them on its x port):
    the tables copied from `mem_tab` (None: no tables) after x's words, the descriptor pointing there. Other ops:
    unchanged."""
    if desc.opcode not in EW_CORE_OPS:
        return desc, x
    if x is None:
        raise ValueError(f"{desc}: a MASK or PENALTY op reads x")
    r0, _, r1 = desc.shape
    left: list[int] = []
    right: list[int] = []
    if desc.tab_on & 3:
        if mem_tab is None:
            raise ValueError(f"{desc}: tables on (tab_on {desc.tab_on}) but no table memory")
        left = [int(mem_tab[desc.tab_left + r]) for r in range(r0)] if desc.tab_on & 1 else []
        right = [int(mem_tab[desc.tab_right + r]) for r in range(r1)] if desc.tab_on & 2 else []
    out = np.concatenate([np.asarray(x, dtype=np.int64), np.array(left + right, dtype=np.int64)])
    return replace(desc, tab_left=len(x) if left else 0, tab_right=len(x) + len(left) if right else 0), out


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


class Memories:
    """The three read ports (x, z, old destination) with MEM_LAT cycles of latency and the destination write port.

    Driven and sampled at falling edges: a request seen in cycle c is answered in cycle c + MEM_LAT (the DUT
    takes it at the rising edge ending that cycle); between answers the data bus carries junk. A write seen in
    cycle c is committed after the reads of cycle c (read-first). Ports of one bank share one array. A read of
    a port without a memory (an operand the op does not have) fails the test. The strobes are ignored while rst
    is high: the registered enables are undefined until the first reset edge (Verilator randomises them at
    time 0).
    """

    def __init__(self, dut, lat: int):
        self.dut, self.lat = dut, lat
        self.widths = {"x": int(dut.X_W.value), "z": int(dut.Z_W.value), "o": int(dut.OUT_W.value)}
        self.mem = {p: None for p in PORTS}
        self.pipe = {p: [None] * lat for p in PORTS}
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED + 1)
        self.reads = {p: 0 for p in PORTS}
        self.writes = 0
        self.bad: list[str] = []

    def junk(self, w: int) -> int:
        return int(self.gen.integers(0, 1 << w))

    async def run(self):
        d = self.dut
        ports = {
            "x": (d.x_rd_en, d.x_rd_addr, d.x_rd_data),
            "z": (d.z_rd_en, d.z_rd_addr, d.z_rd_data),
            "o": (d.o_rd_en, d.o_rd_addr, d.o_rd_data),
        }
        while True:
            await FallingEdge(d.clk)
            in_reset = bool(int(d.rst.value))
            for p, (en, addr, data) in ports.items():
                w = self.widths[p]
                v = self.pipe[p].pop(0)
                data.value = (v & ((1 << w) - 1)) if v is not None else self.junk(w)
                if int(en.value) and not in_reset:
                    self.reads[p] += 1
                    if self.mem[p] is None:
                        self.bad.append(f"read of port {p}, which the op does not use")
                        self.pipe[p].append(None)
                    else:
                        self.pipe[p].append(int(self.mem[p][int(addr.value)]))
                else:
                    self.pipe[p].append(None)
            if int(d.o_wr_en.value) and not in_reset:
                self.writes += 1
                self.mem["o"][int(d.o_wr_addr.value)] = signed(int(d.o_wr_data.value), self.widths["o"])


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.lat = int(dut.MEM_LAT.value)
        assert int(dut.ADDR_W.value) == ADDR_W and int(dut.MASK_N.value) == EW_MASK_N
        self.ports = (int(dut.X_W.value), int(dut.Z_W.value), int(dut.OUT_W.value))
        self.adam = bool(int(dut.ADAM.value))
        self.rank = bool(int(dut.RANK.value))
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED)
        self.mems = Memories(dut, self.lat)
        self.seed = int(self.gen.integers(0, 1 << 32))
        self.stream = fxp.LfsrStream(self.seed)  # the DUT's stream, drawn alongside
        self.elements = 0

    async def setup(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.start.value = 0
        d.seed_load.value = 0
        d.seed.value = 0
        self.drive(pack_ewise_ports(self.desc_of_nothing()))
        cocotb.start_soon(self.mems.run())
        await RisingEdge(d.clk)
        await FallingEdge(d.clk)
        d.rst.value = 0
        d.seed.value = self.seed
        d.seed_load.value = 1
        await FallingEdge(d.clk)
        d.seed_load.value = 0
        assert int(d.lfsr_state.value) == self.stream.state, "seed"
        assert int(d.busy.value) == 0 and int(d.done.value) == 0 and int(d.error.value) == 0, "idle after reset"

    @staticmethod
    def desc_of_nothing():
        return EwiseDesc(EwOpcode.ZERO, 1, 0, 0, 0, 0, 0, 0, 0, 0, NEAREST, 0, 0, 16, (1, 1, 1))

    def drive(self, ports: dict[str, int]):
        for name, v in ports.items():
            getattr(self.dut, name).value = v

    async def execute(self, desc: EwiseDesc, mems: dict, limit: int, restarts: frozenset = frozenset()) -> int:
        """Start the op, wait for done (at most `limit` cycles) and one cycle more; returns the cycles from start to
        done.

        `restarts`: cycles after the start (1 = the next cycle) in which start is driven high again while the
        op runs (busy high), with the descriptor ports unchanged; the unit must ignore them."""
        self.mems.mem.update(mems)
        self.drive(pack_ewise_ports(desc))
        cycles = await start_and_wait(self.dut, limit, restarts)
        await FallingEdge(self.dut.clk)  # the statistics are complete in the cycle after done (tt_writeback)
        return cycles

    async def expect_refused(self, desc: EwiseDesc, mems: dict, code: int, what: str):
        """The op stops with `code` after the start-time check and stays stopped, without a memory access or a
        draw."""
        d = self.dut
        n_io = dict(self.mems.reads), self.mems.writes
        state = int(d.lfsr_state.value)
        assert await self.execute(desc, mems, 4) == CHECK_CYCLES, f"{what}: not stopped by the check"
        assert int(d.error.value) == 1 and int(d.error_code.value) == code, (
            f"{what}: error {int(d.error.value)} code {int(d.error_code.value)}, want {code}"
        )
        for _ in range(3):  # nothing moves afterwards
            await FallingEdge(d.clk)
            assert int(d.done.value) == 1 and int(d.busy.value) == 0 and int(d.error_code.value) == code, what
        assert (dict(self.mems.reads), self.mems.writes) == n_io, f"{what}: a refused op touched a memory"
        assert int(d.lfsr_state.value) == state, f"{what}: a refused op consumed draws"

    async def run_desc(
        self,
        desc: EwiseDesc,
        banks: tuple,
        want_bank,
        want_sat: int,
        want_max: int,
        what: str,
        restarts: frozenset = frozenset(),
    ):
        """Run one legal descriptor on the banks (x, z, y; None for an operand it does not have; x holds MASK's and
        PENALTY's tables) and compare everything the host can read with the expected values (`restarts`: see
        execute)."""
        reads = dict(self.mems.reads)
        writes = self.mems.writes
        cycles = await self.execute(
            desc, dict(zip(PORTS, banks)), desc.count + desc.table_words + 2 * self.lat + 50, restarts
        )
        d = self.dut
        assert not self.mems.bad, f"{what}: {self.mems.bad[0]}"
        got_bank = banks[2]
        bad = np.flatnonzero(got_bank != want_bank)
        assert bad.size == 0, (
            f"{what}: {bad.size} words differ, first at {bad[0]}: got {got_bank[bad[0]]}, want {want_bank[bad[0]]}"
        )
        assert int(d.error.value) == 0, what
        assert int(d.sat_count.value) == want_sat, f"{what}: sat {int(d.sat_count.value)} != {want_sat}"
        assert int(d.maxabs.value) == want_max, f"{what}: maxabs {int(d.maxabs.value)} != {want_max}"
        assert int(d.lfsr_state.value) == self.stream.state, f"{what}: LFSR state (draws)"
        n = desc.count
        want_reads = {"x": n * desc.reads_x + desc.table_words, "z": n * desc.reads_z, "o": n * desc.reads_old}
        assert {p: self.mems.reads[p] - reads[p] for p in PORTS} == want_reads, f"{what}: reads"
        assert self.mems.writes - writes == n, f"{what}: writes"
        assert cycles == ewise_cycles(desc, self.lat), f"{what}: {cycles} cycles for {n} elements"
        self.elements += n
        return cycles

    async def check_case(self, case, machine=True, restarts: frozenset = frozenset()):
        """Run one compiled op (its draws from the DUT's stream) and compare with execute_ewise and the Machine
        (`restarts`: see execute)."""
        desc = case.desc
        if desc.draws:
            case.rand = self.stream.take(desc.draws)
        want_out, want_sat, want_max, want_draws, want_bank = desc_ewise(case)
        if machine:  # the two references agree (golden/tests/test_isa_ewise.py checks it too)
            m_out, m_sat, m_max, m_draws = machine_ewise(case)
            assert np.array_equal(m_out, want_out) and (m_sat, m_draws) == (want_sat, want_draws)
            assert m_max is None or m_max == want_max
        banks = tuple(case.banks[b] if b else None for b in desc.banks)
        tab_bank = next((b for b in desc.tab_banks if b), "")
        desc, x = tables_on_x(desc, banks[0], case.banks[tab_bank] if tab_bank else None)
        what = (
            f"{case.op.kind} {case.op.out} (align {desc.align_x}/{desc.align_z}, shift {desc.shift}, mode {desc.mode})"
        )
        if restarts:
            what += f" restarted in cycles {sorted(restarts)}"
        cycles = await self.run_desc(desc, (x, *banks[1:]), want_bank, want_sat, want_max, what, restarts)
        self.dut._log.debug(
            "%s: %d elements, %d cycles, %d saturations, max|y| %d", what, desc.count, cycles, want_sat, want_max
        )
        return want_sat


ADAM_KINDS = {k for k in EWISE_KINDS if k.ewise_opcode in EW_ADAM_OPS}
RANK_KINDS = {k for k in EWISE_KINDS if k.ewise_opcode in EW_CORE_OPS}


async def compiled_ops(dut, model: str, trials: int):
    """The model's element-wise ops; on a unit built with Adam also those of the model with the Adam optimizer."""
    tb = Tb(dut)
    await tb.setup()
    kinds, sat = set(), 0
    for name in (model, f"{model}-adam") if tb.adam else (model,):
        comp = ewise_compiled(name)
        for trial in range(trials):
            for op in ewise_ops(comp):
                case = ewise_case(comp, op, tb.gen, extremes=trial == 1, fracs=trial != 2)
                if op.kind in RANK_KINDS and not tb.rank:  # a unit built without rank adaptation refuses them
                    banks = {p: case.banks[b] if b else None for p, b in zip(PORTS, case.desc.banks)}
                    await tb.expect_refused(case.desc, banks, EW_ERR_OPCODE, f"{op.kind} {op.out}")
                else:
                    sat += await tb.check_case(case)
                kinds.add(op.kind)
    assert kinds == set(EWISE_KINDS) - (set() if tb.adam else ADAM_KINDS) and sat > 0
    dut._log.info("%s: %d elements", model, tb.elements)


@cocotb.test()
async def test_tiny_ops(dut):
    """Every element-wise op of tiny (train_sample, infer, update), thrice: random operands and fractions,
    extreme operands, the configured fractions."""
    await compiled_ops(dut, "tiny", 3)


@cocotb.test()
async def test_digits_ops(dut):
    """Every element-wise op of digits twice (random operands and fractions, extreme operands: zeros for the
    gate of RELU_BWD); the 1024-element cores in steady state."""
    await compiled_ops(dut, "digits", 2)


def random_desc(gen: np.random.Generator, ports: tuple[int, int, int], adam: bool, rank: bool):
    """A random legal descriptor (with the Adam ops, MASK and PENALTY on a unit that has them) and its banks (x, z,
    y; in place half of the time); MASK and PENALTY with tables of random words (and a side absent at times) after
    x's words."""
    while True:
        drawn = _random_desc(gen, ports, adam)
        if ewise_error(drawn[0], *ports, adam=adam, rank=rank)[0] == 0:  # Adam's limits reject some draws
            return drawn


def _random_desc(gen: np.random.Generator, ports: tuple[int, int, int], adam: bool):
    opcode = int(gen.integers(0, len(EwOpcode) - (0 if adam else len(EW_ADAM_OPS))))
    count = int(gen.integers(1, 40))
    x_w, z_w, y_w = (int(gen.integers(2, p + 1)) for p in ports)
    if opcode == EwOpcode.ADAM_V:
        z_w = min(z_w, EW_ADAM_Z_W)
    if opcode == EwOpcode.ADAM_STEP:
        x_w = min(x_w, EW_ADAM_X_W)
    shape = (1, count, 1)
    if opcode in EW_CORE_OPS:
        r0 = int(gen.integers(1, 5))
        r1 = int(gen.integers(1, 5))
        shape = (r0, int(gen.integers(1, 4)), r1)
        count = shape[0] * shape[1] * shape[2]

    def align(w: int) -> int:
        top = EW_ALIGN_TOP - w  # both limits, or in between
        return int(gen.choice([EW_ALIGN_MIN, top, int(gen.integers(min(-20, top), top + 1))]))

    def const() -> int:
        return int(
            gen.choice([-(1 << 15), (1 << 15) - 1, int(gen.integers(-(1 << 15), 1 << 15)), int(gen.integers(-4, 5))])
        )

    in_place = opcode not in (EwOpcode.ZERO, EwOpcode.ADAM_STEP) and gen.integers(0, 2) == 1
    if in_place:
        x_w = y_w = min(x_w, y_w)
    size = count + 30
    bases = [int(b) for b in gen.integers(0, 30, size=3)]
    if in_place:
        bases[0] = bases[2]
    beta, align_x, align_z = const(), align(x_w), align(2 * z_w - 1 if opcode == EwOpcode.ADAM_V else z_w)
    if opcode == EwOpcode.ADAM_STEP:  # beta is eps_q >= 1, align_z is F_v; the x term is m * RSQRT
        beta = int(gen.choice([1, EW_EPS_MAX, int(gen.integers(1, 300))]))
        align_x, align_z = align(x_w + EW_RSQRT_W), int(gen.integers(-4, 2 * z_w))
    x_base, z_base, y_base = bases
    desc = EwiseDesc(
        opcode,
        count,
        x_base,
        z_base,
        y_base,
        const(),
        beta,
        align_x,
        align_z,
        int(gen.integers(fxp.SHIFT_MIN, fxp.SHIFT_MAX + 1)) if gen.integers(0, 2) else int(gen.integers(-2, 12)),
        int(gen.integers(0, 2)),
        x_w,
        z_w,
        y_w,
        shape,
    )
    check_ewise(desc)

    def bank(w: int) -> np.ndarray:
        lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
        if gen.integers(0, 3) == 0:
            return gen.choice(np.array([lo, hi, lo + 1, -1, 0, 1]), size=size)
        return gen.integers(lo, hi + 1, size=size)

    y = bank(y_w)
    x = y if in_place else bank(x_w)
    z = bank(z_w)
    if opcode in EW_CORE_OPS:  # masks: 0, 1 or other words (live); taus: 16-bit, at both ends at times
        r0, _, r1 = shape
        if opcode == EwOpcode.MASK:
            words = gen.choice(np.array([0, 0, 1, 1, -1, 2, -(1 << 15), 300]), size=r0 + r1)
        elif gen.integers(0, 3) == 0:
            words = gen.choice(np.array([-(1 << 15), (1 << 15) - 1, 0]), size=r0 + r1)
        else:
            words = gen.integers(-(1 << 15), 1 << 15, size=r0 + r1)
        desc = replace(desc, tab_left=0, tab_right=r0, tab_on=int(gen.choice([1, 2, 3, 3, 3, 0])))
        desc, x = tables_on_x(desc, x, words)
        if in_place:
            y = x
    return desc, (x if desc.reads_x else None, z if desc.reads_z else None, y)


@cocotb.test()
async def test_random_descriptors(dut):
    """Random legal descriptors of every opcode: any mode, widths below the ports, alignments at both limits,
    extreme constants, shifts over the whole range, in place or apart, random masks and tau tables (the tau
    entries at both ends of their 16 bits too)."""
    tb = Tb(dut)
    await tb.setup()
    sat = 0
    for trial in range(400):
        desc, banks = random_desc(tb.gen, tb.ports, tb.adam, tb.rank)
        rand = tb.stream.take(desc.draws) if desc.draws else None
        want_bank, want_sat, want_max, _ = execute_ewise(desc, *banks, rand)
        copies = tuple(None if b is None else b.copy() for b in banks)
        if banks[0] is banks[2]:
            copies = (copies[2], copies[1], copies[2])
        what = f"random {trial}: {desc}"
        await tb.run_desc(desc, copies, want_bank, want_sat, want_max, what)
        sat += want_sat
    assert sat > 0


@cocotb.test()
async def test_illegal_ops(dut):
    """Every error code (and several at once: the lowest): error and done two cycles after start (tt_op_ctrl), no memory
    access, no draw; the unit then runs a legal op normally."""
    tb = Tb(dut)
    await tb.setup()
    comp = ewise_compiled("tiny")
    bias = next(o for o in comp.train_sample if o.kind == OpKind.AXPBY and o.mode == STOCHASTIC)
    case = ewise_case(comp, bias, tb.gen, fracs=False)
    d0 = case.desc
    mask = next(o for o in comp.update if o.kind == OpKind.MASK)
    cm = ewise_case(comp, mask, tb.gen, fracs=False)
    dm = cm.desc
    penalty = next(o for o in comp.update if o.kind == OpKind.PENALTY)
    dp = ewise_case(comp, penalty, tb.gen, fracs=False).desc
    bad = [
        replace(d0, shift=48),
        replace(d0, shift=-17),
        replace(d0, shift=-64),
        replace(d0, y_w=1),
        replace(d0, y_w=tb.ports[2] + 1),
        replace(d0, x_w=tb.ports[0] + 1),
        replace(d0, z_w=1),
        replace(d0, count=0),
        replace(dm, shape=(0, dm.shape[1], dm.shape[2])),
        replace(dm, shape=(dm.shape[0], dm.shape[1], 17)),
        replace(dm, shape=(dm.shape[0], 0, dm.shape[2])),
        replace(dp, shape=(17, dp.shape[1], dp.shape[2])),
        replace(dp, align_z=EW_ALIGN_TOP - dp.z_w + 1),
        replace(d0, align_x=EW_ALIGN_TOP - d0.x_w + 1),
        replace(d0, align_z=-48),
        replace(d0, align_x=63),
        replace(d0, align_z=-64),
        replace(d0, opcode=10),
        replace(d0, shift=50, y_w=0, opcode=15),
    ]  # several errors: the lowest code
    if tb.adam:  # Adam's own limits
        step = ewise_case(
            ewise_compiled("tiny-adam"),
            next(o for o in ewise_compiled("tiny-adam").update if o.kind == OpKind.ADAM_STEP),
            tb.gen,
            fracs=False,
        ).desc
        h_hi = adam_h_range(step.z_w, step.align_z)[1]
        bad += [
            replace(step, beta=0),
            replace(step, beta=-1),
            replace(step, x_w=EW_ADAM_X_W + 1),
            replace(step, shift=fxp.SHIFT_MAX - h_hi + 1),
            replace(step, align_z=-64),
            replace(d0, opcode=EwOpcode.ADAM_V, z_w=EW_ADAM_Z_W + 1, align_z=-40),
        ]
    else:
        bad += [replace(d0, opcode=EwOpcode.ADAM_V), replace(d0, opcode=EwOpcode.ADAM_STEP)]
    # not errors: the widths and alignments of a term the op does not form
    fine = [(case, replace(d0, opcode=EwOpcode.ZERO, x_w=0, align_x=63))]
    if tb.rank:
        fine.append((cm, replace(dm, z_w=0, align_z=-64)))
    else:  # MASK and PENALTY do not exist
        bad += [dm, dp]
    codes = set()
    for desc in bad:
        code = ewise_error(desc, *tb.ports, adam=tb.adam, rank=tb.rank)[0]
        assert code, desc
        codes.add(code)
        before = {k: v.copy() for k, v in case.banks.items()}
        banks = {p: case.banks[b] if b else None for p, b in zip(PORTS, d0.banks)}
        await tb.expect_refused(desc, banks, code, str(desc))
        assert all(np.array_equal(before[k], case.banks[k]) for k in before)
    assert codes == {EW_ERR_SHIFT, EW_ERR_WIDTH, EW_ERR_COUNT, EW_ERR_ALIGN, EW_ERR_OPCODE} | (
        {EW_ERR_EPS} if tb.adam else set()
    )
    for c, desc in fine:
        assert ewise_error(desc, *tb.ports, adam=tb.adam, rank=tb.rank)[0] == 0
        tab_bank = next((b for b in desc.tab_banks if b), "")
        desc, x = tables_on_x(desc, c.banks[desc.banks[0]], c.banks[tab_bank] if tab_bank else None)
        banks = (x if desc.reads_x else None, None, c.banks[desc.banks[2]])
        rand = tb.stream.take(desc.draws) if desc.draws else None  # the ZERO variant keeps d0's STOCHASTIC
        want_bank, want_sat, want_max = execute_ewise(desc, *banks, rand)[:3]
        await tb.run_desc(desc, banks, want_bank, want_sat, want_max, f"fine {desc}")
    await tb.check_case(case)  # and a legal op clears the error


# Not tested: sat_count saturating at 2^32-1. The count is cleared at every start and grows by at most 2 per
# element (ACC: the RQ clamp and the clamp of the sum), so an op would need over 2^31 elements: unreachable with
# the default ADDR_W = 20 (at most 2^21 - 2 per op) and over 2^31 cycles with ADDR_W = 32; only a backdoor
# write of the internal counter could reach it, and that tests the RTL's internals, not its ports.
@cocotb.test()
async def test_start_while_busy(dut):
    """A start while the unit is busy is ignored (rtl/tt_ewise.v: "A start while busy is ignored").

    Intended behaviour: start is taken only when busy is low; a start pulse in any cycle from the one after
    the start to the last busy cycle (the last write on the port; done rises the next cycle), with the
    descriptor held stable as the interface requires, neither restarts nor disturbs the running op. The op
    finishes at the same cycle (count + MEM_LAT + 6) with the destination bit-exact against
    golden/isa/ewise.py execute_ewise (and the Machine, for the compiled ops), the same saturation count and max |y|
    (the statistics are not cleared), exactly count writes and the reads of one op (no element issued twice),
    and exactly one LFSR draw per element in STOCHASTIC mode (no extra draws). Every compiled op of tiny
    (AXPBY in both modes, ACC in place, AXPBY_RELU, RELU_BWD, DERIVE, ZERO, MASK) and random legal descriptors, each
    with start pulsed right after the start, in the last busy cycle, held high for a stretch or at random
    cycles; the ops without pulses in between run normally."""
    tb = Tb(dut)
    await tb.setup()
    comp = ewise_compiled("tiny")
    kinds = set()
    for op in ewise_ops(comp):
        if op.kind in RANK_KINDS and not tb.rank:  # refused (test_tiny_ops)
            continue
        case = ewise_case(comp, op, tb.gen, extremes=bool(tb.gen.integers(0, 2)))
        restarts = busy_restarts(tb.gen, ewise_cycles(case.desc, tb.lat))
        await tb.check_case(case, restarts=restarts)
        kinds.add(op.kind)
    assert kinds == set(EWISE_KINDS) - ADAM_KINDS - (set() if tb.rank else RANK_KINDS)  # tiny trains with SGD
    for trial in range(60):
        desc, banks = random_desc(tb.gen, tb.ports, tb.adam, tb.rank)
        rand = tb.stream.take(desc.draws) if desc.draws else None
        want_bank, want_sat, want_max, _ = execute_ewise(desc, *banks, rand)
        copies = tuple(None if b is None else b.copy() for b in banks)
        if banks[0] is banks[2]:
            copies = (copies[2], copies[1], copies[2])
        restarts = busy_restarts(tb.gen, ewise_cycles(desc, tb.lat)) if trial % 4 else frozenset()
        what = f"random {trial} restarted in cycles {sorted(restarts)}: {desc}"
        await tb.run_desc(desc, copies, want_bank, want_sat, want_max, what, restarts)


@cocotb.test()
async def test_adam_rsqrt_rom(dut):
    """ADAM_STEP over every RSQRT ROM entry: u = v + eps_q runs through 64..255, which F_v = 16 (even) normalises to
    itself (idx = u), so each of the 192 entries is read once; then u at the top of v's range. A unit built without
    Adam must refuse the same op (error 5) without touching a memory."""
    tb = Tb(dut)
    await tb.setup()
    # alpha 1 and |m| in 2^12..2^13 at shift 20 + h (h = -8 for these u): every delta m * RSQRT / 2^12 is below
    # 2^15 and w - delta below 2^31 (y_w 32), so no clamp hides an entry, and an entry one off moves every delta.
    eps = 3
    v = np.concatenate([np.arange(64, 256) - eps, [(1 << 31) - 1, (1 << 30) + 5, -5, 0]])
    n = len(v)
    m = tb.gen.integers(1 << 12, 1 << 13, size=n) * tb.gen.choice([-1, 1], size=n)
    w = tb.gen.integers(-(1 << 15), 1 << 15, size=n)
    desc = EwiseDesc(EwOpcode.ADAM_STEP, n, 0, 0, 0, 1, eps, 0, 16, 20, STOCHASTIC, 17, 32, 32)
    if not tb.adam:
        await tb.expect_refused(
            replace(desc, x_w=16, z_w=16, y_w=16), {"x": m, "z": v, "o": w}, EW_ERR_OPCODE, "ADAM_STEP without Adam"
        )
        return
    assert ewise_error(desc, *tb.ports, adam=True)[0] == 0, ewise_error(desc, *tb.ports, adam=True)
    rand = tb.stream.take(n)
    want_bank, want_sat, want_max, _ = execute_ewise(desc, m, v, w, rand)
    assert want_sat == 0
    await tb.run_desc(desc, (m, v, w.copy()), want_bank, want_sat, want_max, "rsqrt sweep")
