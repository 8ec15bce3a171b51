"""cocotb tests of tt_contract: compiled CONTRACT ops of the tiny and digits models, lowered by golden/lowering.py (in
the lane form wherever golden/isa/lanes.py with_lanes chooses it for the DUT's LANES, BUF_DEPTH, VEC and DRAIN),
executed on synchronous-read memory models; every word of the output bank, the saturation count, max |y|, the LFSR state
after the op and the cycle count are checked against golden/isa/loop_nest.py execute_desc and the golden Machine
(golden/tests/test_isa.py helpers), and so are the reads and writes of each port. Illegal descriptors must raise the
error without touching a memory or the random stream; a start while the engine is busy must be ignored.
numpy is seeded from cocotb.RANDOM_SEED so SEED=n reproduces a run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge

from golden import fxp
from golden.arch import ADDR_W, CNT_W, MAX_OUT, MAX_RED
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.fxp import STOCHASTIC
from golden.isa.contract import LANE_LOOP, PAD, ContractDesc, Loop, check_desc, drain_beats, pack_ports, vec_ok
from golden.isa.lanes import row_forms, with_lanes
from golden.isa.loop_nest import live_lanes
from golden.isa.timing import contract_cycles, group_starts, load_beats, preload_start
from golden.tests.test_isa import contract_case, contract_ops, desc_contract, machine_contract, synthetic
from golden.tests.test_isa_lanes import matmul_case
from verif.unit_stimulus import busy_restarts, start_and_wait

ERR_SHIFT, ERR_OUT_W, ERR_COUNT, ERR_LANES = 1, 2, 3, 4
# execute returns in the cycle after done, where tt_writeback's statistics are complete (the sequencer reads them
# there too): the next op starts that many cycles after done at the earliest.
AFTER_DONE = 1
CHECK_CYCLES = 2  # an illegal op: start, the registered legality check, then done with the error (tt_op_ctrl)


def signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) & 1 else v


class Memories:
    """The three read ports (a, b, old output) with MEM_LAT cycles of latency and the output write port.

    Driven and sampled at falling edges: a request seen in cycle c is answered in cycle c + MEM_LAT (the DUT
    takes it at the rising edge ending that cycle); between answers the data bus carries junk. A write seen in
    cycle c is committed after the reads of cycle c (read-first). The strobes are ignored while rst is high:
    the registered enables are undefined until the first reset edge (Verilator randomises them at time 0).
    `walks`: for ops that preload, the b port's memories in walk order, each with its number of reads (a lane-form
    op reads b only in its load walks); while it is not empty, b reads are served from it. A read that takes a run
    (a_rd_n1, b_rd_n1, o_rd_n1: the words after its address's) also answers the n1 + 1 words from its address in
    their columns of the port's row bus (word i in column i % VEC, the run continuing into the next row; a one-word
    read too, as tt_bank), and junk in the other columns (as tt_bank, which reads only the run's columns) and past the
    memory; a write with o_wr_run
    writes DRAIN words from its address.
    """

    def __init__(self, dut, lat: int):
        self.dut, self.lat = dut, lat
        self.widths = {"a": int(dut.A_W.value), "b": int(dut.B_W.value), "o": int(dut.OUT_W.value)}
        self.vec, self.drain = int(dut.VEC.value), int(dut.DRAIN.value)
        self.mem = {"a": None, "b": None, "o": None}
        self.pipe = {p: [None] * lat for p in "abouvw"}  # u, v, w: the rows of a, b and the old words
        self.rows: Counter[tuple[str, int]] = Counter()  # run reads by (port, words)
        self.runs = 0  # run writes
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED + 1)
        self.accesses = 0
        self.reads = {p: 0 for p in "abo"}
        self.writes = 0
        self.walks: list[list] = []

    def junk(self, w: int) -> int:
        return int(self.gen.integers(0, 1 << w))

    def memory(self, port: str):
        if port != "b" or not self.walks:
            return self.mem[port]
        mem, left = self.walks[0]
        if left == 1:
            self.walks.pop(0)
        else:
            self.walks[0][1] -= 1
        return mem

    async def run(self):
        d = self.dut
        ports = {
            "a": (d.a_rd_en, d.a_rd_addr, d.a_rd_data),
            "b": (d.b_rd_en, d.b_rd_addr, d.b_rd_data),
            "o": (d.o_rd_en, d.o_rd_addr, d.o_rd_data),
        }
        rows = {
            "a": ("u", d.a_rd_n1, d.a_rd_vec_data),
            "b": ("v", d.b_rd_n1, d.b_rd_vec_data),
            "o": ("w", d.o_rd_n1, d.o_rd_vec_data),
        }
        while True:
            await FallingEdge(d.clk)
            in_reset = bool(int(d.rst.value))
            for p, (pipe, _, port) in rows.items():
                w = self.widths[p]
                row = self.pipe[pipe].pop(0)
                port.value = sum(
                    ((v if v is not None else self.junk(w)) & ((1 << w) - 1)) << (w * c)
                    for c, v in enumerate(row or [None] * self.vec)
                )
                self.pipe[pipe].append(None)
            for p, (en, addr, data) in ports.items():
                w = self.widths[p]
                v = self.pipe[p].pop(0)
                data.value = (v & ((1 << w) - 1)) if v is not None else self.junk(w)
                if int(en.value) and not in_reset:
                    self.accesses += 1
                    self.reads[p] += 1
                    mem, a = self.memory(p), int(addr.value)
                    self.pipe[p].append(int(mem[a]))
                    pipe, n1, _ = rows[p]
                    n = int(n1.value) + 1
                    if n > 1:
                        self.rows[p, n] += 1
                    assert n <= self.vec, f"port {p} reads a run of {n} words, rows of {self.vec}"
                    row = [None] * self.vec
                    for i in range(a, min(a + n, len(mem))):
                        row[i % self.vec] = int(mem[i])
                    self.pipe[pipe][-1] = row
                else:
                    self.pipe[p].append(None)
            if int(d.o_wr_en.value) and not in_reset:
                self.accesses += 1
                self.writes += 1
                w, a = self.widths["o"], int(d.o_wr_addr.value)
                run = self.drain if int(d.o_wr_run.value) else 1
                data = int(str(d.o_wr_data.value)[-w * run :], 2)  # a one-word write's other words may be X
                self.runs += run > 1
                for i in range(run):
                    self.mem["o"][a + i] = signed(data >> (w * i) & ((1 << w) - 1), w)


class Tb:
    def __init__(self, dut):
        self.dut = dut
        self.lat = int(dut.MEM_LAT.value)
        self.mac_reg = int(dut.MAC_REG.value)
        self.lanes, self.buf_depth, self.vec = int(dut.LANES.value), int(dut.BUF_DEPTH.value), int(dut.VEC.value)
        self.drain = int(dut.DRAIN.value)
        self.preload = bool(int(dut.PRELOAD.value))  # two buffer sets: ops may preload
        # the build takes lane sums of R = VEC beside output lanes (loaded along the sum loop)
        self.vec_sums = self.vec > 1 and self.lanes % self.vec == 0 and self.lanes >= 2 * self.vec
        self.out_w_max = int(dut.OUT_W.value)
        assert (int(dut.NOUT.value), int(dut.NRED.value)) == (MAX_OUT, MAX_RED)
        assert (int(dut.CNT_W.value), int(dut.ADDR_W.value)) == (CNT_W, ADDR_W)
        self.gen = np.random.default_rng(cocotb.RANDOM_SEED)
        self.mems = Memories(dut, self.lat)
        self.seed = int(self.gen.integers(0, 1 << 32))
        self.stream = fxp.LfsrStream(self.seed)  # the DUT's stream, drawn alongside

    async def setup(self):
        d = self.dut
        Clock(d.clk, 10, unit="ns").start()
        d.rst.value = 1
        d.start.value = 0
        d.seed_load.value = 0
        d.seed.value = 0
        self.drive(pack_ports(self.desc_of_nothing()))
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
        pad = (PAD,)
        return ContractDesc(0, 0, 0, 1, pad * MAX_OUT, pad * MAX_RED, 0, 0, False, 16)

    def drive(self, ports: dict[str, int]):
        for name, v in ports.items():
            getattr(self.dut, name).value = v

    async def execute(
        self, desc: ContractDesc, mem_a, mem_b, mem_o, limit: int, restarts: frozenset = frozenset(), gap: int = 0
    ) -> int:
        """Start the op `gap` cycles after the current one, wait for done (at most `limit` cycles) and AFTER_DONE
        cycles more; returns the cycles from start to done.

        `restarts`: cycles after the start (1 = the next cycle) in which start is driven high again while the
        op runs (busy high), with the descriptor ports unchanged; the engine must ignore them."""
        d = self.dut
        for _ in range(gap):
            await FallingEdge(d.clk)
        self.mems.mem.update(a=mem_a, b=mem_b, o=mem_o)
        self.drive(pack_ports(desc))
        cycles = await start_and_wait(d, limit, restarts)
        await FallingEdge(d.clk)  # AFTER_DONE: the statistics are complete in the cycle after done
        return cycles

    def cycles(self, desc: ContractDesc, head: int = 0) -> int:
        return contract_cycles(desc, self.lat, self.mac_reg, head)

    def chain_heads_run(self, descs) -> bool:
        """Whether, with no gaps, some op of a preload chain starts while its preload walk still runs."""
        head = 0
        for desc, nxt in zip(descs, descs[1:]):
            head = self.cycles(desc, head) + AFTER_DONE - preload_start(desc, head)
            if head < load_beats(nxt):
                return True
        return False

    def lane_case(self, case):
        """The case with its descriptor in the lane form where with_lanes chooses it for this DUT."""
        return replace(case, desc=with_lanes(case.desc, self.lanes, self.buf_depth, self.vec, drain=self.drain))

    async def check_case(self, case, machine=True, restarts: frozenset = frozenset(), gap: int = 0, head: int = 0):
        """Run one case (its draws from the DUT's stream) and compare with execute_desc and the Machine; the
        reads of each port and the writes are counted too (`restarts`, `gap`: see execute; `head`: a preloaded op's
        head start, group_starts). An op that preloads or is preloaded, or runs while the b walks are queued,
        does not count its b reads: its b port runs the walks of two ops (test_preload counts them)."""
        desc = case.desc
        if desc.mode == STOCHASTIC:
            case.rand = self.stream.take(desc.out_count)
        want_out, want_sat, want_max, want_bank = desc_contract(case)
        if machine:  # the two references agree (golden/tests/test_isa.py checks it too)
            m_out, m_sat, m_max = machine_contract(case)
            assert np.array_equal(m_out, want_out) and (m_sat, m_max) == (want_sat, want_max)
        banks = case.banks
        reads, writes, rows, runs = dict(self.mems.reads), self.mems.writes, Counter(self.mems.rows), self.mems.runs
        cycles = await self.execute(
            desc,
            banks[desc.banks[0]],
            banks[desc.banks[1]],
            banks[desc.banks[2]],
            self.cycles(desc) + 50,
            restarts,
            gap,
        )
        d = self.dut
        what = (
            f"{desc.names[2]} ({case.op.spec if case.op else 'hand-built'}, shift {desc.shift}, mode {desc.mode}, "
            f"acc {desc.accumulate}, lanes {desc.lanes}, vec {desc.vec}, drain {desc.drain}, "
            f"lane sum {desc.lane_sum}, rows {desc.rows})"
        )
        if restarts:
            what += f" restarted in cycles {sorted(restarts)}"
        if desc.preloaded:
            what += f" preloaded, head start {head}"
        got_bank = banks[desc.banks[2]]
        bad = np.flatnonzero(got_bank != want_bank)
        assert bad.size == 0, (
            f"{what}: {bad.size} words differ, first at {bad[0]}: got {got_bank[bad[0]]}, want {want_bank[bad[0]]}"
        )
        assert int(d.error.value) == 0, what
        assert int(d.sat_count.value) == want_sat, f"{what}: sat {int(d.sat_count.value)} != {want_sat}"
        assert int(d.maxabs.value) == want_max, f"{what}: maxabs {int(d.maxabs.value)} != {want_max}"
        assert int(d.lfsr_state.value) == self.stream.state, f"{what}: LFSR state"
        want_cycles = self.cycles(desc, head)
        assert cycles == want_cycles, f"{what}: {cycles} cycles for {desc.macs} MACs, want {want_cycles}"
        if desc.lanes == 1:
            want_reads = {"a": desc.macs, "b": desc.macs}
        else:  # b once into the buffers (vec words a read in a vector load), a once per compute beat (a row in a lane
            # sum)
            want_reads = {"a": desc.groups * desc.red_count, "b": load_beats(desc)}  # (rows: a run a beat)
        beats = desc.out_count // desc.drain  # drain beats: a write each, and an old-word read each when accumulating
        want_reads["o"] = beats if desc.accumulate else 0
        ports = "ao" if desc.preloaded or desc.preload or self.mems.walks else "abo"
        assert {p: self.mems.reads[p] - reads[p] for p in ports} == {p: want_reads[p] for p in ports}, f"{what}: reads"
        # the run reads by port and words: b's rows of a vector load, o's old runs of a wide drain, a's runs of R
        # (rows with idle rows: R - idle_rows in the groups of the chunk loop's last index)
        run_words = {"b": desc.vec, "o": desc.drain, "a": desc.sum_lanes if desc.lane_sum else desc.row_lanes}
        short = sum(live_lanes(desc, g) < desc.lanes for g in range(desc.groups)) * desc.red_count
        for p in ports:
            got = {n: k for (q, n), k in (self.mems.rows - rows).items() if q == p}
            want_runs = Counter({run_words[p]: want_reads[p]} if run_words[p] > 1 and want_reads[p] else {})
            if p == "a" and short:
                want_runs[run_words[p]] -= short
                want_runs[run_words[p] - desc.idle_rows] += short
            want = {n: k for n, k in want_runs.items() if n > 1 and k}
            assert got == want, f"{what}: run reads of {p} (words: reads) {got}, want {want}"
        assert self.mems.writes - writes == beats, f"{what}: writes"
        assert self.mems.runs - runs == (beats if desc.drain > 1 else 0), f"{what}: run writes"
        self.dut._log.info(
            "%s: %d MACs, %d outputs, %d cycles, %d saturations, max|y| %d",
            what,
            desc.macs,
            desc.out_count,
            cycles,
            want_sat,
            want_max,
        )
        return cycles

    async def expect_refused(self, case, desc: ContractDesc, code: int):
        """Run the illegal `desc` on the case's banks: error `code` and done two cycles after start (tt_op_ctrl), then
        nothing moves; no memory access, no draw, every bank unchanged."""
        d = self.dut
        before = {k: v.copy() for k, v in case.banks.items()}
        state = int(d.lfsr_state.value)
        n = self.mems.accesses
        banks = case.banks
        cycles = await self.execute(desc, banks[desc.banks[0]], banks[desc.banks[1]], banks[desc.banks[2]], 4)
        assert cycles == CHECK_CYCLES, f"error after {cycles} cycles"
        assert int(d.error.value) == 1 and int(d.error_code.value) == code, (
            f"shift {desc.shift} out_w {desc.out_w}: error {int(d.error.value)} code {int(d.error_code.value)}"
        )
        for _ in range(3):  # nothing moves afterwards
            await FallingEdge(d.clk)
            assert int(d.done.value) == 1 and int(d.busy.value) == 0 and int(d.error_code.value) == code
        assert self.mems.accesses == n, "an illegal op touched a memory"
        assert int(d.lfsr_state.value) == state, "an illegal op consumed draws"
        assert all(np.array_equal(before[k], case.banks[k]) for k in before)

    def broken_runs(self, kind: str, n: int, stride: str, base: str):
        """A lane-form case whose op loads vectors, drains wide or sums its lanes (`kind` "vec", "drain" or
        "lane_sum": runs of n words of the operand with the base field `base` and loop strides `stride`) keeping every
        rule, and descriptors of it that break one rule each: the base off a run, the lane loop's stride not 1,
        another stride off a run. With n = 1 (the build has none) an op that asks for it while keeping the rules of
        2 (a lane sum: any lane-form op marked one)."""

        def other_loop(d):  # a loop besides the lane loop that steps the operand, or None
            return next((i for i, lp in enumerate(d.loops) if i != LANE_LOOP and getattr(lp, stride)), None)

        def asks(d):  # (a lane sum's vector loads and drains may run along another loop: not these cases)
            return d.lane_sum if kind == "lane_sum" else getattr(d, kind) > 1 and not d.lane_sum

        while True:
            picked = self.random_lane_case(1)  # odd trials: operands at multiples of VEC and DRAIN
            if picked and (n == 1 or (asks(picked[2].desc) and other_loop(picked[2].desc) is not None)):
                case = picked[2]
                break
        lane = case.desc
        if n == 1:
            ask = {kind: True} if kind == "lane_sum" else {kind: 2, base: getattr(lane, base) & -2}
            return case, [replace(lane, **ask)]
        loops = list(lane.loops)
        k = other_loop(lane)
        loops[k] = replace(loops[k], **{stride: getattr(loops[k], stride) + 1})
        lane_loop = replace(lane.out_loops[-1], **{stride: n})
        return case, [
            replace(lane, **{base: getattr(lane, base) + 1}),
            replace(lane, out_loops=lane.out_loops[:-1] + (lane_loop,)),
            replace(lane, out_loops=tuple(loops[:MAX_OUT]), red_loops=tuple(loops[MAX_OUT:])),
        ]

    def vec_sum_out(self, desc: ContractDesc) -> bool:
        """A lane sum beside output lanes whose vector load runs along its sum loop (R = VEC)."""
        return desc.lane_sum and desc.vec > 1 and desc.sum_lanes == self.vec and desc.out_lanes > 1

    def random_form_case(self, keep):
        """A random lane-form case for whose descriptor keep(desc) holds."""
        for trial in range(20000):
            picked = self.random_lane_case(trial)
            if picked and keep(picked[2].desc):
                return picked[2]
        raise AssertionError("no such lane form among 20000 random contractions")

    def random_lane_case(self, trial: int, max_macs: int = 4000):
        """A synthetic contraction in the lane form for this DUT (None where with_lanes keeps the direct form)."""
        n_out, n_red = int(self.gen.integers(1, 4)), int(self.gen.integers(0, 3))
        widths = (
            int(self.gen.integers(2, 17)),
            int(self.gen.integers(2, 17)),
            int(self.gen.integers(2, self.out_w_max + 1)),
        )
        # half of the trials with operands at multiples of VEC (and sizes of multiples of it): vector loads and wide
        # drains
        align = max(self.vec, self.drain) if trial % 2 else 1
        sizes = (2, 9) if align == 1 else (align, 2 * align)
        comp, op = synthetic(
            self.gen,
            n_out,
            n_red,
            sizes=sizes,
            widths=widths,
            accumulate=trial % 2 == 1,
            mode=int(self.gen.integers(0, 2)),
            base=tuple(align * int(x) for x in self.gen.integers(0, 40, 3)),
        )
        case = self.lane_case(
            contract_case(comp, op, self.gen, shift=int(self.gen.integers(-4, 12)), extremes=trial % 3 == 0)
        )
        return (comp, op, case) if case.desc.lanes > 1 and case.desc.macs <= max_macs else None


@cocotb.test()
async def test_tiny_ops(dut):
    """Every contract op of tiny (train STOCHASTIC and infer NEAREST), twice: random and extreme operands."""
    tb = Tb(dut)
    await tb.setup()
    comp = compile_network(load_config("tiny"))
    for extremes in (False, True):
        for op in contract_ops(comp):
            await tb.check_case(tb.lane_case(contract_case(comp, op, tb.gen, extremes=extremes)))


@cocotb.test()
async def test_digits_ops(dut):
    """A few digits ops: the 16384-MAC core gradient (accumulate), the outer-product gradient (no reduction),
    the dense layer in both modes, and a 2048-MAC forward step. Only the first with MEM_LAT > 1 (short runs)."""
    tb = Tb(dut)
    await tb.setup()
    comp = compile_network(load_config("digits"))
    ops = contract_ops(comp)
    forward = next(o for o in ops if o.spec.startswith("dag,") and o.spec.endswith("->def"))  # 2048 MACs
    pick = [next(o for o in ops if o.spec == "j,i->ji"), forward]
    pick += [o for o in ops if o.spec == "ji,i->j"]  # STOCHASTIC (train) and NEAREST (infer)
    if tb.lat == 1:
        pick.append(next(o for o in ops if o.out == "dG0.1"))  # eagf,fabh->gebh, 16384 MACs, accumulate
    for op in pick:  # shifts that keep most results in range: the values, not only the clamps, are checked
        await tb.check_case(tb.lane_case(contract_case(comp, op, tb.gen, shift=int(tb.gen.choice([12, 16, 20])))))


@cocotb.test()
async def test_random_contractions(dut):
    """Synthetic contractions: every loop slot, diagonals, output widths below OUT_W, accumulate, both modes."""
    tb = Tb(dut)
    await tb.setup()
    for trial in range(24):
        n_out = int(tb.gen.integers(1, MAX_OUT + 1))
        n_red = int(tb.gen.integers(0, MAX_RED + 1))
        widths = (int(tb.gen.integers(2, 9)), int(tb.gen.integers(2, 17)), int(tb.gen.integers(2, tb.out_w_max + 1)))
        comp, op = synthetic(
            tb.gen,
            n_out,
            n_red,
            sizes=(1, 3),
            widths=widths,
            accumulate=trial % 2 == 1,
            mode=int(tb.gen.integers(0, 2)),
            base=tuple(int(x) for x in tb.gen.integers(0, 40, 3)),
        )
        case = contract_case(comp, op, tb.gen, shift=int(tb.gen.integers(-4, 12)), extremes=trial % 3 == 0)
        await tb.check_case(tb.lane_case(case), machine=trial % 4 == 0)


@cocotb.test()
async def test_lane_contractions(dut):
    """Synthetic contractions that with_lanes puts in the lane form (with LANES > 1; else they must stay direct):
    split lane loops, swapped operands, groups shorter than the lanes (K < lanes), groups after the first that wait
    for their slice of the load, vector loads (VEC > 1), wide drains with and without accumulate (DRAIN > 1), lane
    sums with and without accumulate (VEC > 1), lane sums with output lanes beside their sum lanes (VEC > 1 and at
    least 4 lanes, R = 2 dividing them), among them vector loads along the sum loop (R = VEC; at least 2 VEC lanes,
    a multiple of VEC), both modes (rows: test_rows)."""
    tb = Tb(dut)
    await tb.setup()
    lane_forms, split, short, waits, vec_loads, wide, wide_acc, sums, sums_acc, sums_out, vec_sums = (0,) * 11
    want_short = 3 if tb.lanes >= 4 else 0  # with 2 lanes a shorter group has K = 1: never worth the lane form
    want_vec = 4 if tb.vec > 1 else 0
    want_wide = 4 if tb.drain > 1 else 0
    want_sums = 4 if tb.vec > 1 else 0
    want_sums_out = 2 if tb.vec > 1 and tb.lanes >= 4 and tb.lanes % 2 == 0 else 0
    want_vec_sums = 2 if tb.vec_sums else 0
    enough = False
    for trial in range(3000):
        picked = tb.random_lane_case(trial)
        if picked is None:
            continue
        comp, op, case = picked
        lane_forms += 1
        split += case.desc.lanes < comp.letter_sizes[op.spec.split("->")[1][-1]]
        short += case.desc.red_count < case.desc.lanes
        starts = group_starts(case.desc, tb.lat)
        waits += bool((np.diff(starts) > max(case.desc.red_count, drain_beats(case.desc))).any())
        vec_loads += case.desc.vec > 1
        wide += case.desc.drain > 1
        wide_acc += case.desc.drain > 1 and case.desc.accumulate
        sums += case.desc.lane_sum
        sums_acc += case.desc.lane_sum and case.desc.accumulate
        sums_out += case.desc.out_lanes > 1 and case.desc.lane_sum
        vec_sums += tb.vec_sum_out(case.desc)
        await tb.check_case(case, machine=lane_forms % 4 == 0)
        enough = (
            lane_forms >= 16
            and split
            and short >= want_short
            and waits >= 3
            and vec_loads >= want_vec
            and wide >= want_wide
            and wide_acc >= want_wide // 2
            and sums >= want_sums
            and sums_acc >= want_sums // 2
            and sums_out >= want_sums_out
        )
        if enough:
            break
    while enough and vec_sums < want_vec_sums:  # the rarest form: random draws seldom give one, so drawn on purpose
        await tb.check_case(tb.random_form_case(tb.vec_sum_out))
        vec_sums += 1
    if tb.lanes == 1:
        assert lane_forms == 0, "with_lanes chose the lane form for a one-lane engine"
    else:
        assert enough and vec_sums >= want_vec_sums, (
            f"lane forms {lane_forms}, split lane loops {split}, groups shorter than the lanes {short}, "
            f"ops with a group waiting for its slice {waits}, vector loads {vec_loads}, wide drains {wide} "
            f"({wide_acc} accumulating), lane sums {sums} ({sums_acc} accumulating, {sums_out} with output lanes, "
            f"{vec_sums} of them loading along the sum loop)"
        )


@cocotb.test()
async def test_preload(dut):
    """Chains of two or three lane-form ops, each preloading the next (isa preload): the first walks its own b,
    then the next op's b into the other buffer set, on past its done; the next op starts 0 (half of them) to 60
    cycles after that done and computes from that set, its groups waiting only for what is not loaded yet (the
    cycles of contract_cycles with the head start of preload_start), and preloads the third. Every op's outputs,
    statistics, draws and cycles are checked as in check_case, and the b port reads each op's b once, in walk
    order. Chains where the next op starts while the walk still runs and where it has ended both occur."""
    tb = Tb(dut)
    await tb.setup()
    if tb.lanes == 1:
        return  # no buffers: the preload fields are ignored (tt_contract's g_one_lane)
    if not tb.preload:  # one buffer set: an op that preloads and one that is preloaded are refused, nothing runs
        first, second = tb.random_form_case(lambda d: True), tb.random_form_case(lambda d: True)
        await tb.expect_refused(first, replace(first.desc, preload=second.desc), ERR_LANES)
        await tb.expect_refused(second, replace(second.desc, preloaded=True), ERR_LANES)
        await tb.check_case(first)
        return
    chains, running, ended, trial = 0, 0, 0, 0
    while chains < 12 or not running or not ended:
        assert trial < 20000, f"chains {chains}, preloads still running {running}, ended {ended}"
        cases = []
        while len(cases) < 2 + chains % 2:
            trial += 1
            picked = tb.random_lane_case(trial, max_macs=1500)
            if picked is not None:
                cases.append(picked[2])
        cases.sort(key=lambda c: load_beats(c.desc))  # a longer walk next: more often still running
        descs = [c.desc for c in cases]
        for i in range(len(descs) - 1):  # link the chain as golden/program.py link_preloads does
            descs[i] = replace(descs[i], preload=replace(descs[i + 1], preload=None, preloaded=False))
            descs[i + 1] = replace(descs[i + 1], preloaded=True)
        # A next op that starts while the walk still runs needs a short op before it (its compute ends soon after
        # its own walk): rare among random ops at short latencies. Once a few chains have not shown it, a chain
        # runs only if the cycle model says it will (at gap 0).
        seek_running = not running and chains >= 4
        if seek_running and not tb.chain_heads_run(descs):
            continue
        tb.mems.walks = [[c.banks[d.banks[1]], load_beats(d)] for c, d in zip(cases, descs)]
        reads_b = tb.mems.reads["b"]
        head, prev = 0, None
        for case, desc in zip(cases, descs):
            gap = int(tb.gen.integers(0, 61)) if prev and not seek_running and tb.gen.integers(0, 2) else 0
            if prev:
                head = prev[1] + AFTER_DONE + gap - preload_start(prev[0], prev[2])
                running += head < load_beats(desc)
                ended += head >= load_beats(desc) + tb.lat
            cycles = await tb.check_case(replace(case, desc=desc), machine=False, gap=gap, head=head)
            prev = (desc, cycles, head)
        assert not tb.mems.walks, f"b walks not read: {tb.mems.walks}"
        assert tb.mems.reads["b"] - reads_b == sum(load_beats(d) for d in descs), "b reads"
        chains += 1


@cocotb.test()
async def test_preload_abandoned(dut):
    """An op that preloads the next op's b, followed by that op not marked preloaded (which the compiler never
    emits): the second op walks its b itself from its start and waits only for that walk (its cycles are those of
    no preload), although the abandoned preload's last words are still in the load's delay line when the new walk
    clears their set. Cases where the preload still runs at the second op's start must occur."""
    tb = Tb(dut)
    await tb.setup()
    if tb.lanes == 1 or not tb.preload:  # test_preload: a build without preloads refuses them
        return
    runs, in_flight, trial = 0, 0, 0
    while runs < 8 or in_flight < 3:
        assert trial < 20000, f"runs {runs}, preloads in flight at the next start {in_flight}"
        cases = []
        while len(cases) < 2:
            trial += 1
            picked = tb.random_lane_case(trial, max_macs=1500)
            if picked is not None:
                cases.append(picked[2])
        first, second = sorted(cases, key=lambda c: load_beats(c.desc))
        d1 = replace(first.desc, preload=second.desc)
        # b reads: the first op's walk, then the preload and the second op's own walk, both of the second's b
        tb.mems.walks = [
            [first.banks[d1.banks[1]], load_beats(d1)],
            [second.banks[second.desc.banks[1]], float("inf")],
        ]
        cycles = await tb.check_case(replace(first, desc=d1), machine=False)
        in_flight += cycles + AFTER_DONE - preload_start(d1) < load_beats(second.desc) + tb.lat
        await tb.check_case(second, machine=False)
        tb.mems.walks = []
        runs += 1


@cocotb.test()
async def test_illegal_ops(dut):
    """Illegal shift, output width, count and lanes (also a preload's), vector loads that break vec_ok's rules or that
    the build cannot do (VEC = 1; also a preload's), wide drains that break drain_ok's or that the build cannot do
    (DRAIN = 1), lane sums that break lane_sum_ok's rules or that the build cannot do (VEC = 1): error and done two
    cycles after start (tt_op_ctrl), no memory access (a preload the op carries does
    not start), no draw; the engine then runs a legal op normally."""
    tb = Tb(dut)
    await tb.setup()
    comp = compile_network(load_config("tiny"))
    op = next(o for o in contract_ops(comp) if o.mode == STOCHASTIC)
    case = contract_case(comp, op, tb.gen, shift=9)
    d0 = case.desc
    zero = replace(d0.out_loops[-1], count=0)
    bad = [
        (replace(d0, shift=48), ERR_SHIFT),
        (replace(d0, shift=-17), ERR_SHIFT),
        (replace(d0, shift=63), ERR_SHIFT),
        (replace(d0, shift=-64), ERR_SHIFT),
        (replace(d0, out_w=1), ERR_OUT_W),
        (replace(d0, out_w=tb.out_w_max + 1), ERR_OUT_W),
        (replace(d0, out_loops=d0.out_loops[:-1] + (zero,)), ERR_COUNT),
        (replace(d0, shift=50, out_w=0), ERR_SHIFT),  # several errors: the lowest code
        (replace(d0, lanes=0), ERR_LANES),
        (replace(d0, lanes=min(tb.lanes + 1, 255)), ERR_LANES),
        (replace(d0, out_w=1, lanes=0), ERR_OUT_W),
    ]
    # lanes that do not match the lane loop's count, and a lane loop that a walks (with LANES 1: lanes > LANES)
    inner = d0.out_loops[-1]
    bad.append((replace(d0, lanes=2 if inner.count != 2 else 3), ERR_LANES))
    bad.append((replace(d0, lanes=2, out_loops=d0.out_loops[:-1] + (replace(inner, count=2, sa=1, sb=1),)), ERR_LANES))
    # lane-form ops that carry a preload: an illegal op must not start it (no b read after its done either), and
    # a preload wider than the engine is illegal itself
    lane = tb.lane_case(case).desc
    if lane.lanes > 1:
        pre = replace(lane, preload=None, preloaded=False)
        lane_zero = replace(lane.out_loops[0], count=0)
        bad += [
            (replace(lane, shift=48, preload=pre), ERR_SHIFT),
            (replace(lane, out_loops=(lane_zero,) + lane.out_loops[1:], preload=pre), ERR_COUNT),
            (replace(lane, preload=replace(pre, lanes=min(tb.lanes + 1, 255))), ERR_LANES),
        ]
        await tb.check_case(tb.lane_case(case))  # a walk has ended: the load nest is idle with done high
    for desc, code in bad:
        await tb.expect_refused(case, desc, code)
    await tb.check_case(case)  # and a legal op clears the error
    if tb.lanes == 1:
        return
    # Vector loads and wide drains: none at all with VEC = 1 (DRAIN = 1); else each rule broken alone; for vector
    # loads also a preload's base off a row.
    vcase, bad = tb.broken_runs("vec", tb.vec, "sb", "b_base")
    if tb.vec > 1:
        lane = vcase.desc
        bad.append(replace(lane, preload=replace(lane, b_base=lane.b_base + 1, preloaded=False)))
    for desc in bad:
        await tb.expect_refused(vcase, desc, ERR_LANES)
    await tb.check_case(vcase)
    wcase, bad = tb.broken_runs("drain", tb.drain, "so", "o_base")
    for desc in bad:
        await tb.expect_refused(wcase, desc, ERR_LANES)
    await tb.check_case(wcase)
    # Lane sums: a's runs (none at all with VEC = 1); also an element address that moves with the lane, the direct
    # form marked a lane sum, a preload marked a lane sum whose sum loop the trees cannot take (R = 3), and a wide
    # drain of one output lane.
    scase, bad = tb.broken_runs("lane_sum", tb.vec, "sa", "a_base")
    if tb.vec > 1:
        lane = scase.desc
        r3 = replace(lane, out_loops=lane.out_loops[:-1] + (replace(lane.out_loops[-1], count=3),), preload=None)
        bad += [
            replace(lane, out_loops=lane.out_loops[:-1] + (replace(lane.out_loops[-1], so=1),)),
            replace(lane, lanes=1),
            replace(lane, preload=r3),
        ]
        one = tb.random_form_case(lambda d: d.lane_sum and d.out_lanes == 1)
        bad.append(replace(one.desc, drain=2))
    for desc in bad:
        await tb.expect_refused(scase, desc, ERR_LANES)
    await tb.check_case(scase)
    # Lane sums with output lanes (none with fewer than 4 lanes): the output lane loop stepping a, or not b, or lanes
    # not its count times R; a vector load along the output lanes where LANES / R is not a multiple of VEC.
    if tb.vec > 1 and tb.lanes >= 4:
        # a build with R for which LANES / R >= VEC but not a multiple of it (12 lanes, VEC 4, R 2): such an op
        misaligned = [
            r
            for r in (2, 4, 8, 16)
            if r <= tb.vec and tb.lanes % r == 0 and tb.lanes // r >= tb.vec and tb.lanes // r % tb.vec
        ]
        ocase = tb.random_form_case(
            lambda d: (
                d.lane_sum
                and d.out_lanes > 1
                and (not misaligned or (vec_ok(d, tb.vec) and not vec_ok(d, tb.vec, tb.lanes)))
            )
        )
        lane = ocase.desc
        out = lane.out_loops[-2]

        def with_out(**f):
            return replace(lane, out_loops=lane.out_loops[:-2] + (replace(out, **f), lane.out_loops[-1]))

        # (a stride of R: a's runs stay aligned, so only the rule that the output lanes do not step a refuses it)
        bad = [with_out(sa=lane.sum_lanes), with_out(sb=0), replace(lane, lanes=lane.lanes - 1)]
        if misaligned:
            bad.append(replace(lane, vec=tb.vec))
        for desc in bad:
            await tb.expect_refused(ocase, desc, ERR_LANES)
        await tb.check_case(ocase)
    # A vector load along the sum loop beside output lanes: b's base off a row, the sum loop's b stride not 1.
    if tb.vec_sums:
        vcase = tb.random_form_case(tb.vec_sum_out)
        lane = vcase.desc
        sum_loop = replace(lane.out_loops[-1], sb=tb.vec)
        for desc in (replace(lane, b_base=lane.b_base + 1), replace(lane, out_loops=lane.out_loops[:-1] + (sum_loop,))):
            await tb.expect_refused(vcase, desc, ERR_LANES)
        await tb.check_case(vcase)
    # Rows: the rows loop stepping b, or a at a stride other than 1; rows on half the lanes (the lane loop halved too:
    # the rule that rows take all the lanes), also as a preload's walk; as many idle rows as rows, idle rows in an op
    # that has no rows.
    if tb.vec > 1 and tb.lanes % 2 == 0:
        rcase = tb.random_form_case(lambda d: d.rows and d.load_lanes % 2 == 0)
        lane = rcase.desc
        row, col = lane.out_loops[-2], lane.out_loops[-1]

        def with_rows(**f):
            return replace(lane, out_loops=lane.out_loops[:-2] + (replace(row, **f), col))

        half = replace(
            lane, lanes=lane.lanes // 2, out_loops=lane.out_loops[:-1] + (replace(col, count=col.count // 2),)
        )
        bad = [
            with_rows(sb=1),
            with_rows(sa=2),
            half,
            replace(lane, preload=replace(half, preload=None, preloaded=False)),
            replace(lane, idle_rows=row.count),
            replace(lane, rows=False, idle_rows=1),
        ]
        for desc in bad:
            await tb.expect_refused(rcase, desc, ERR_LANES)
        await tb.check_case(rcase)


@cocotb.test()
async def test_rows(dut):
    """Rows (VEC > 1; rows_ok): out[i, j] (+)= sum_k a[k, i] b[k, j] for every R the build takes (2..VEC, dividing
    LANES): j of LANES / R columns, i of 1 to 3 R (every other trial 1 to 3 R - 1: idle rows, fewer than R at first),
    K of 1 to 4, both modes, with and without accumulate, a wide drain where the build has one, b and the output at
    multiples of VEC, a anywhere (its runs cross rows); each computes what the direct form computes (execute_desc), in
    contract_cycles."""
    tb = Tb(dut)
    await tb.setup()
    rs = [r for r in (2, 4, 8, 16) if r <= tb.vec and tb.lanes % r == 0] if tb.vec > 1 else []
    done = 0
    for trial in range(4 * len(rs)):
        r = rs[trial % len(rs)]
        n, m, k = tb.lanes // r, r * int(tb.gen.integers(1, 4)), int(tb.gen.integers(1, 5))
        if trial // len(rs) % 2:
            m = int(tb.gen.integers(1, 3 * r))
        acc = trial % 2 == 1
        desc = check_desc(
            ContractDesc(
                a_base=int(tb.gen.integers(0, 2 * tb.vec)),
                b_base=16 * tb.vec,
                o_base=32 * tb.vec,
                out_count=m * n,
                out_loops=(PAD,) * (MAX_OUT - 2) + (Loop(m, sa=1, so=n, index="i"), Loop(n, sb=1, so=1, index="j")),
                red_loops=(PAD,) * (MAX_RED - 1) + (Loop(k, sa=m, sb=n, index="k"),),
                shift=int(tb.gen.integers(0, 6)),
                mode=int(tb.gen.integers(0, 2)),
                accumulate=acc,
                out_w=int(tb.gen.integers(8, tb.out_w_max + 1)),
                banks=("A", "B", "O"),
                names=("a", "b", "out"),
            )
        )
        forms = row_forms(desc, tb.lanes, tb.buf_depth, tb.vec, None, tb.drain)
        assert forms and forms[0].row_lanes == r, f"no rows form of R {r}"
        case = matmul_case(forms[0], tb.gen)
        await tb.check_case(case, machine=False)
        done += 1
    assert done == 4 * len(rs)


# Not tested: sat_count saturating at 2^32-1. The count is cleared at every start and grows by at most 2 per
# output element (the RQ clamp and, accumulating, the clamp of the sum), so one op would need over 2^31 output
# elements -- over 2^31 cycles -- to reach it; only a backdoor write of the internal counter could, and that
# tests the RTL's internals, not its behaviour at the ports.
@cocotb.test()
async def test_start_while_busy(dut):
    """A start while the engine is busy is ignored (rtl/tt_contract.v: "A start while busy is ignored").

    Intended behaviour: start is taken only when busy is low; a start pulse in any cycle from the one after the start to
    the last busy cycle (the last write on the port; done rises the next cycle), with the descriptor held stable as the
    interface requires, neither restarts nor disturbs the running op. The op finishes at the same cycle (MACs + MEM_LAT
    + 5) with the output bank bit-exact against golden/isa/loop_nest.py execute_desc (and the Machine for the compiled
    ops), the same saturation count and max |y| (the statistics are not cleared), the reads of one op (MACs of a and b;
    one old word per output element when accumulating), exactly one write per output element and one LFSR draw per
    output element in STOCHASTIC mode (no extra draws). Every contract op of tiny and synthetic contractions
    (accumulate, both modes), each with start pulsed right after the start and in the last busy cycle, held high for a
    stretch or at random
    cycles; the ops without pulses in between run normally."""
    tb = Tb(dut)
    await tb.setup()
    comp = compile_network(load_config("tiny"))
    for op in contract_ops(comp):
        case = tb.lane_case(contract_case(comp, op, tb.gen, extremes=bool(tb.gen.integers(0, 2))))
        await tb.check_case(case, restarts=busy_restarts(tb.gen, tb.cycles(case.desc)))
    for trial in range(16):
        n_out = int(tb.gen.integers(1, MAX_OUT + 1))
        n_red = int(tb.gen.integers(0, MAX_RED + 1))
        widths = (int(tb.gen.integers(2, 9)), int(tb.gen.integers(2, 17)), int(tb.gen.integers(2, tb.out_w_max + 1)))
        comp_s, op = synthetic(
            tb.gen,
            n_out,
            n_red,
            sizes=(1, 3),
            widths=widths,
            accumulate=trial % 2 == 1,
            mode=int(tb.gen.integers(0, 2)),
            base=tuple(int(x) for x in tb.gen.integers(0, 40, 3)),
        )
        case = tb.lane_case(
            contract_case(comp_s, op, tb.gen, shift=int(tb.gen.integers(-4, 12)), extremes=trial % 3 == 0)
        )
        restarts = busy_restarts(tb.gen, tb.cycles(case.desc)) if trial % 4 else frozenset()
        await tb.check_case(case, machine=trial % 4 == 0, restarts=restarts)
