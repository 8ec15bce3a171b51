"""Top-level cocotb tests of rtl/tt_accel.v: error paths and corner cases, on the tiny model.

Every expected value comes from the golden model (golden/isa/'s descriptor references, golden/machine.py's
Machine in lock-step through verif/rtl_device.py) or from the documented behaviour (the headers of
rtl/tt_accel.v, rtl/tt_seq.v and rtl/tt_banks.v). Hand-built programs are assembled from golden/program.py's
header / pack_fields and golden/isa/'s descriptors and pack_*ports; they sit in the program memory above the
compiled image and use statistics slots the image does not use.

Memories are compared whole: every copy of every bank (as integers: all bank words are defined, the
persistent ones by the upload, the per-sample act bank by random fill), the program memory and the
statistics slots (as logic strings: unwritten program words are X on Icarus).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, FallingEdge, First, RisingEdge, with_timeout
from cocotb_coverage.coverage import CoverPoint, coverage_db

from golden import fxp, program as P
from golden.arch import (
    BANKS,
    CONTRACT_FIELDS,
    EW_ERR_ALIGN,
    EW_ERR_COUNT,
    EW_ERR_OPCODE,
    EW_ERR_SHIFT,
    EW_ERR_WIDTH,
    EWISE_FIELDS,
    EWISE_SHORT_FIELDS,
    KIND_CONTRACT,
    KIND_END,
    KIND_EWISE,
    KIND_RANK,
    KIND_SCE,
    KIND_W,
    N_SLOTS,
    RANK_FIELDS,
    SCE_ERR_COUNT,
    SCE_ERR_FRAC,
    SCE_ERR_LABEL,
    SCE_ERR_WIDTH,
    SCE_FIELDS,
    UNIT_OF_KIND,
    WIN_LSB,
    Ctrl,
    EwOpcode,
    Reg,
    SeqError,
    Status,
    payload_words,
)
from golden.compiler import compile_network
from golden.datasets import Dataset, load_dataset
from golden.device import train_batch
from golden.fxp import NEAREST, STOCHASTIC
from golden.isa.contract import PAD, ContractDesc, Loop, check_desc, pack_ports
from golden.isa.ewise import EW_ALIGN_MIN, EwiseDesc, ewise_error, execute_ewise, pack_ewise_ports
from golden.isa.lanes import row_forms, with_lanes
from golden.isa.loop_nest import execute_desc
from golden.isa.sce import SCE_ERR_FRAC_MAX, SCE_FRAC_Z_MAX, SceDesc, pack_sce_ports, sce_error
from golden.isa.timing import SEQ_OP_CYCLES, record_wait
from golden.machine import Machine
from golden.semantics import SAT_COUNTER_MAX
from golden.train import init_float_params
from verif.axil import OKAY, SLVERR
from verif.host import (
    BANK_WORDS,
    PROG_WORDS,
    STAT_WORDS,
    BankCopy,
    SampleStream,
    SeqFault,
    to_signed,
)
from verif.top.accel_env import model_config, open_accel, seed

PROG_DEPTH = 1000  # not a power of two: START_PC and the program window can point past the program memory
HAND_BASE = 600  # hand-built programs sit above the compiled image (531 words)
FREE_SLOT = 40  # statistics slots from here on are not the image's


# ---- hand-built descriptors and records --------------------------------------------------------------------
def mv_desc(
    a: int, b: int, o: int, m: int, k: int, shift: int, mode: int = NEAREST, acc: bool = False, out_w: int = 16
) -> ContractDesc:
    """out[i] = sum_j a[a + i k + j] b[b + j], i < m, j < k (a matrix-vector product)."""
    return ContractDesc(
        a_base=a,
        b_base=b,
        o_base=o,
        out_count=m,
        out_loops=(PAD,) * 5 + (Loop(m, sa=k, so=1),),
        red_loops=(PAD,) * 3 + (Loop(k, sa=1, sb=1),),
        shift=shift,
        mode=mode,
        accumulate=acc,
        out_w=out_w,
    )


def ew_desc(
    opcode: int,
    count: int,
    x: int = 0,
    z: int = 0,
    y: int = 0,
    alpha: int = 1,
    beta: int = 0,
    align_x: int = 0,
    align_z: int = 0,
    shift: int = 0,
    mode: int = NEAREST,
    x_w: int = 16,
    z_w: int = 0,
    y_w: int = 16,
) -> EwiseDesc:
    return EwiseDesc(
        opcode=opcode,
        count=count,
        x_base=x,
        z_base=z,
        y_base=y,
        alpha=alpha,
        beta=beta,
        align_x=align_x,
        align_z=align_z,
        shift=shift,
        mode=mode,
        x_w=x_w,
        z_w=z_w,
        y_w=y_w,
        shape=(1, count, 1),
    )


def ct_record(desc: ContractDesc, slot: int = FREE_SLOT, observe: bool = False, nwords: int | None = None) -> list:
    payload = P.pack_fields(CONTRACT_FIELDS, pack_ports(desc))
    return [P.header(KIND_CONTRACT, slot, observe, len(payload) if nwords is None else nwords)] + payload


def ew_record(
    desc: EwiseDesc,
    slot: int = FREE_SLOT,
    observe: bool = False,
    nwords: int | None = None,
    kind: int = KIND_EWISE,
    short: bool = False,
) -> list:
    """An element-wise record: the full payload, or with `short` the payload that stops before the tables'
    addresses (program.EWISE_SHORT_FIELDS)."""
    ports = pack_ewise_ports(desc)
    payload = P.pack_fields(EWISE_SHORT_FIELDS if short else EWISE_FIELDS, ports)
    return [P.header(kind, slot, observe, len(payload) if nwords is None else nwords)] + payload


def sce_record(desc: SceDesc, slot: int = FREE_SLOT) -> list:
    payload = P.pack_fields(SCE_FIELDS, pack_sce_ports(desc))
    return [P.header(KIND_SCE, slot, False, len(payload))] + payload


END = [P.header(KIND_END)]


# ---- error-state coverage ----------------------------------------------------------------------------------
# Every stop the accelerator can report, as (who, code): the sequencer's own codes (rtl/tt_seq.v: 1 illegal op,
# 2 program overrun, 3 bank address, 4 bank port conflict, 6 start while busy) and, for code 5 (unit refusal),
# the refusing unit and its code (rtl/tt_contract.v, tt_ewise.v, tt_sce.v; golden/arch.py's *_ERR_*). Each test's
# expected stops are sampled when they are checked; the last test fails on any bin no test reached. The sample
# stream's frame errors (rtl/tt_accel.v: STATUS b3) are bins too: 1 tlast before the label, 2 a label without
# tlast, 3 a word outside every bank.
ERROR_BINS = (
    [("seq", c) for c in (1, 2, 3, 4, 6)]
    + [("contract", c) for c in (1, 2, 3)]
    + [("ewise", c) for c in (EW_ERR_SHIFT, EW_ERR_WIDTH, EW_ERR_COUNT, EW_ERR_ALIGN, EW_ERR_OPCODE)]
    + [("sce", c) for c in (SCE_ERR_COUNT, SCE_ERR_LABEL, SCE_ERR_WIDTH, SCE_ERR_FRAC)]
    + [("stream", c) for c in (1, 2, 3)]
)
ERROR_POINT = "tt_accel.errors.stop"


@CoverPoint(ERROR_POINT, xf=lambda who, code: (who, code), bins=ERROR_BINS)
def sample_stop(who: str, code: int) -> None:
    """One checked error stop (cocotb-coverage samples the arguments)."""


class Env:
    """A started accelerator for the tiny model: host, lock-step device, golden machine, helpers."""

    # set by create(), which awaits the device; the simulator's objects are typed Any
    dut: Any
    seed: int
    rng: np.random.Generator
    dev: Any
    host: Any
    params: Any
    ports: Any
    data: Dataset
    xq: np.ndarray
    n_sample: int

    @classmethod
    async def create(cls, dut, salt: int = 0) -> Env:
        self = cls()
        self.dut = dut
        self.seed = seed()
        self.rng = np.random.default_rng([self.seed, salt])
        make_device = await open_accel(dut, fast_bus=True)
        cfg = model_config("tiny")
        golden = Machine(compile_network(cfg), self.seed)
        cores, biases = init_float_params(cfg, np.random.default_rng(self.seed))
        golden.load_float_params(cores, biases)
        self.dev = make_device(golden)
        self.host, self.params = self.dev.host, self.dev.params
        self.ports = await self.host.bank_ports()
        assert self.params.prog_depth == PROG_DEPTH
        # every act word defined (per-sample tensors: any value), then the golden state
        await self.host.write_bank("act", 0, self.rng.integers(-1 << 15, 1 << 15, self.params.bank_depth[0]))
        await self.dev.upload()
        self.data = load_dataset("tiny")
        self.xq = self.dev.golden.quantize_input(self.data.train_x)
        self.n_sample = 0
        return self

    # --- addresses ---
    def g(self, bank: str, i: int) -> int:
        return (BANKS.index(bank) << self.params.bank_shift) + i

    # --- bus ---
    async def raw_wr(self, word: int, value: int, strb: int = 0xF) -> int:
        return await self.host.axil.write32(4 * word, value & 0xFFFFFFFF, strb)

    async def raw_rd(self, word: int) -> tuple[int, int]:
        return await self.host.axil.read32(4 * word)

    async def slverr_wr(self, word: int, value: int, strb: int = 0xF, what: str = "") -> None:
        resp = await self.raw_wr(word, value, strb)
        assert resp == SLVERR, f"write {what} word {word:#x} strb {strb:#x}: response {resp}, expected SLVERR"

    async def slverr_rd(self, word: int, what: str = "") -> None:
        value, resp = await self.raw_rd(word)
        assert resp == SLVERR and value == 0, f"read {what} word {word:#x}: {value:#x} resp {resp}, expected 0 SLVERR"

    async def status(self) -> int:
        return await self.host.rd(Reg.STATUS)

    # --- memories through the simulator ---
    def bank_ints(self) -> list[np.ndarray]:
        """Every copy of every bank as signed integers (copy 1 of a 2-port bank must equal copy 0)."""
        out = []
        for k in range(len(self.params.banks)):
            bank = self.dut.u_banks.g_bank[k].u_bank
            w, d = self.params.bank_width[k], self.params.bank_depth[k]
            for c in range(self.ports[k]):
                words = BankCopy(bank, c)
                out.append(np.array([to_signed(words[i], w) for i in range(d)], dtype=np.int64))
        return out

    def flat(self) -> np.ndarray:
        """Copy 0 of every bank at its global addresses (the gaps read 0, as tt_banks reads them)."""
        sh = self.params.bank_shift
        m = np.zeros(len(self.params.banks) << sh, dtype=np.int64)
        banks = self.bank_ints()
        i = 0
        for k in range(len(self.params.banks)):
            m[k << sh : (k << sh) + self.params.bank_depth[k]] = banks[i]
            i += self.ports[k]
        return m

    def check_banks(self, want_flat: np.ndarray, where: str) -> None:
        """Every copy of every bank equals `want_flat` (global addresses)."""
        sh = self.params.bank_shift
        banks = self.bank_ints()
        i = 0
        for k, name in enumerate(self.params.banks):
            want = want_flat[k << sh : (k << sh) + self.params.bank_depth[k]]
            for c in range(self.ports[k]):
                bad = np.flatnonzero(banks[i] != want)
                assert not bad.size, (
                    f"{where}: bank {name} copy {c} differs at {bad.size} words, first word "
                    f"{bad[0]}: RTL {banks[i][bad[0]]}, expected {want[bad[0]]}"
                )
                i += 1

    def prog_and_stats(self) -> tuple[list, list, list]:
        seq = self.dut.u_seq
        prog = self.dut.u_prog.g_generic.u_ram.mem  # as bit strings: the words past the program are X
        return (
            [str(prog[i].value) for i in range(PROG_DEPTH)],
            [str(seq.sat_mem[i].value) for i in range(N_SLOTS)],
            [str(seq.max_mem[i].value) for i in range(N_SLOTS)],
        )

    def check_prog_and_stats(self, before, where: str) -> None:
        after = self.prog_and_stats()
        for name, b, a in zip(("program memory", "saturation counts", "max registers"), before, after):
            bad = [i for i in range(len(b)) if a[i] != b[i]]
            assert not bad, f"{where}: {name} changed at {len(bad)} words, first {bad[0]}: {b[bad[0]]} -> {a[bad[0]]}"

    # --- programs ---
    async def wait_end(self, timeout_cycles: int = 50_000) -> None:
        dut = self.dut
        if not (int(dut.done.value) or int(dut.error.value)):
            await with_timeout(First(RisingEdge(dut.done), RisingEdge(dut.error)), timeout_cycles * 10, "ns")

    async def run_hand(self, words: list, base: int = HAND_BASE) -> None:
        await self.host.write_program(words, base=base)
        await self.host.start(base)
        await self.wait_end()

    async def error_fields(self) -> tuple[int, int, int]:
        fault = SeqFault.decode(await self.host.rd(Reg.ERROR))
        return fault.code, fault.unit_code, fault.pc

    async def expect_stopped(self, code: int, unit_code: int, pc: int, where: str) -> None:
        st = await self.status()
        assert st == Status.ERROR, f"{where}: STATUS {st:#x}, expected error only (busy and done low)"
        assert int(self.dut.error.value) == 1 and int(self.dut.done.value) == 0, f"{where}: error / done pins"
        got = await self.error_fields()
        want = (code, unit_code, pc)
        assert got == want, f"{where}: ERROR (code, unit code, pc) {got}, expected {want}"
        if code == SeqError.UNIT:  # a unit refused: the record at pc names it
            kind = (await self.host.read_program(1, pc))[0] & ((1 << KIND_W) - 1)
            sample_stop(UNIT_OF_KIND[kind], unit_code)
        else:
            sample_stop("seq", code)

    async def clear_error(self, where: str) -> None:
        await self.host.wr(Reg.CTRL, Ctrl.CLEAR_ERROR)
        st = await self.status()
        assert st == 0, f"{where}: STATUS {st:#x} after clear error"
        code, unit_code, _ = await self.error_fields()
        assert (code, unit_code) == (0, 0), f"{where}: ERROR code {code} unit {unit_code} after clear error"

    def sample(self) -> tuple[np.ndarray, int]:
        i = int(self.rng.integers(len(self.data.train_y)))
        return self.xq[i], int(self.data.train_y[i])

    async def good_sample(self) -> None:
        """One training sample on the RTL, bit-exact with the golden machine (RtlDevice checks)."""
        x, y = self.sample()
        await self.dev.train_sample(x, y)

    async def resync_stream(self) -> None:
        """Hand-built stochastic ops advanced the RTL's stream: give it the golden machine's state back."""
        await self.host.set_lfsr_state(self.dev.golden.stream.state)

    async def counters(self) -> dict:
        return await self.host.counters()


def golden_ct(flat: np.ndarray, desc: ContractDesc, state: int) -> tuple[np.ndarray, int, int, int]:
    """(flat memory after the op, saturations, max |x|, stream state after) by golden/isa/loop_nest.py execute_desc."""
    stream = fxp.LfsrStream(state=state)
    rand = stream.take(desc.out_count) if desc.mode == STOCHASTIC else None
    out, n_sat, mx = execute_desc(desc, flat, flat, flat, rand)
    return out, n_sat, mx, stream.state


def golden_ew(flat: np.ndarray, desc: EwiseDesc, state: int, mem_z=None) -> tuple[np.ndarray, int, int, int]:
    stream = fxp.LfsrStream(state=state)
    rand = stream.take(desc.count) if desc.mode == STOCHASTIC else None
    out, n_sat, mx, _ = execute_ewise(desc, flat, flat if mem_z is None else mem_z, flat, rand)
    return out, n_sat, mx, stream.state


# ---- illegal programs ----------------------------------------------------------------------------------------
@cocotb.test()
async def illegal_programs(dut):
    """Each illegal program stops with its documented code at the bad record's pc, busy low and error high, every
    memory as the golden model says (unchanged, or the good ops before the bad record); then, after clear
    error, a training sample runs bit-exactly."""
    env = await Env.create(dut, 1)
    g = env.g
    await env.good_sample()
    zero_f = ew_desc(EwOpcode.ZERO, 8, y=g("act", 16), x_w=0)  # a good op before the bad record (act scratch)
    mv = mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, shift=3)
    ct_words, ew_words = payload_words(CONTRACT_FIELDS), payload_words(EWISE_FIELDS)
    ew_short = payload_words(EWISE_SHORT_FIELDS)
    rk_words = payload_words(RANK_FIELDS)
    assert not env.params.rank, "the error tests' build has no rank unit"
    B = HAND_BASE
    zero_rec = ew_record(zero_f)
    n0 = len(zero_rec)
    last_ew = ew_desc(EwOpcode.DERIVE, 8, x=g("act", 0), y=g("act", 24))
    last_rec = ew_record(last_ew)
    # refusals whose codes golden/isa/'s start-time checks give (the SCE unit takes the label from LABEL)
    label = await env.host.rd(Reg.LABEL)
    ew_refused = [
        ew_desc(EwOpcode.DERIVE, 8, x=g("act", 0), y=g("act", 16), shift=48),
        ew_desc(EwOpcode.DERIVE, 8, x=g("act", 0), y=g("act", 16), y_w=17),
        ew_desc(
            EwOpcode.AXPBY,
            8,
            x=g("act", 0),
            z=g("act", 8),
            y=g("act", 16),
            alpha=3,
            beta=5,
            align_x=EW_ALIGN_MIN - 1,
            z_w=16,
        ),
    ]
    sce_refused = [
        SceDesc(g("act", 36), g("act", 16), 4, 4, label, 8, 17, 14),
        SceDesc(g("act", 36), g("act", 16), 4, 4, label, SCE_FRAC_Z_MAX + 1, 16, 14),
        SceDesc(g("act", 36), g("act", 16), 4, 4, label, 8, 16, SCE_ERR_FRAC_MAX + 1),
    ]

    # (name, base, words, code, unit code, pc, good ops run before the bad record)
    cases = (
        [
            (
                "unknown kind 5",
                B,
                zero_rec + [P.header(5, 0, False, ew_words)] + [0] * ew_words + END,
                1,
                0,
                B + n0,
                [zero_f],
            ),
            ("unknown kind 15", B, [P.header(15, 3, True, 0)] + END, 1, 0, B, []),
            (
                "contract header with the element-wise length",
                B,
                [P.header(KIND_CONTRACT, 0, False, ew_words)] + [0] * ew_words + END,
                1,
                0,
                B,
                [],
            ),
            (
                "element-wise header, payload one word short",
                B,
                zero_rec + ew_record(zero_f, nwords=ew_words - 1) + END,
                1,
                0,
                B + n0,
                [zero_f],
            ),
            (
                "element-wise header, one word past the short payload",
                B,
                ew_record(zero_f, nwords=ew_short + 1) + END,
                1,
                0,
                B,
                [],
            ),
            (
                "element-wise header, one word short of the short payload",
                B,
                ew_record(zero_f, nwords=ew_short - 1, short=True) + END,
                1,
                0,
                B,
                [],
            ),
            # Runs off the program memory (code 2). The front end keeps a bad record's code until the next bad
            # record, so each of these follows an illegal record (code 1): a path that left the code unset would
            # report that 1.
            (
                "no END: a record longer than the words left",
                PROG_DEPTH - n0 - ct_words,
                zero_rec + ct_record(mv),
                2,
                0,
                PROG_DEPTH - ct_words,
                [zero_f],
            ),
            ("contract header, payload one word long", B, ct_record(mv, nwords=ct_words + 1) + END, 1, 0, B, []),
            ("no END: a header in the last word", PROG_DEPTH - 1, ct_record(mv)[:1], 2, 0, PROG_DEPTH - 1, []),
            (
                "sce header with the contract length",
                B,
                [P.header(KIND_SCE, 0, False, ct_words)] + [0] * ct_words + END,
                1,
                0,
                B,
                [],
            ),
            # the last record ends at the last word, no END after it
            (
                "no END: the last record ends at the last word",
                PROG_DEPTH - n0 - len(last_rec),
                zero_rec + last_rec,
                2,
                0,
                PROG_DEPTH,
                [zero_f, last_ew],
            ),
            (
                "a RANK record of the right length, the rank unit not built (RANK = 0)",
                B,
                zero_rec + [P.header(KIND_RANK, 0, False, rk_words)] + [0] * rk_words + END,
                1,
                0,
                B + n0,
                [zero_f],
            ),
            # addresses outside every bank (the writes are dropped: nothing changes)
            (
                "contract output above the bank field (high address bits)",
                B,
                zero_rec
                + ct_record(mv_desc(g("core", 0), g("act", 0), (4 << env.params.bank_shift) + 16, 4, 8, 3))
                + END,
                3,
                0,
                B + n0,
                [zero_f],
            ),
            (
                "contract output past the act bank's depth",
                B,
                ct_record(mv_desc(g("core", 0), g("act", 0), g("act", env.params.bank_depth[0]), 4, 8, 3)) + END,
                3,
                0,
                B,
                [],
            ),
            (
                "element-wise read past the master bank's depth, write past the state bank's",
                B,
                ew_record(
                    ew_desc(
                        EwOpcode.DERIVE,
                        8,
                        x=g("master", env.params.bank_depth[2] - 4),
                        y=g("state", env.params.bank_depth[3]),
                        x_w=8,
                    )
                )
                + END,
                3,
                0,
                B,
                [],
            ),
            # units refusing their descriptors
            (
                "contract shift 60",
                B,
                zero_rec + ct_record(mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, 60)) + END,
                5,
                1,
                B + n0,
                [zero_f],
            ),
            (
                "contract shift 48",
                B,
                ct_record(mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, 48)) + END,
                5,
                1,
                B,
                [],
            ),
            (
                "contract shift -17",
                B,
                ct_record(mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, -17)) + END,
                5,
                1,
                B,
                [],
            ),
            (
                "contract out_w 17",
                B,
                ct_record(mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, 3, out_w=17)) + END,
                5,
                2,
                B,
                [],
            ),
            (
                "element-wise count 0",
                B,
                zero_rec + ew_record(ew_desc(EwOpcode.DERIVE, 0, x=g("act", 0), y=g("act", 16))) + END,
                5,
                EW_ERR_COUNT,
                B + n0,
                [zero_f],
            ),
            (
                "element-wise unknown opcode 9",
                B,
                ew_record(ew_desc(9, 4, x=g("act", 0), y=g("act", 16))) + END,
                5,
                EW_ERR_OPCODE,
                B,
                [],
            ),
            (
                "a MASK op, the unit built without MASK and PENALTY (RANK = 0)",
                B,
                ew_record(
                    replace(
                        ew_desc(EwOpcode.MASK, 4, x=g("act", 0), y=g("act", 16)),
                        shape=(2, 1, 2),
                        tab_left=g("act", 20),
                        tab_on=1,
                    )
                )
                + END,
                5,
                EW_ERR_OPCODE,
                B,
                [],
            ),
            (
                "sce classes above n_out",
                B,
                sce_record(SceDesc(g("act", 36), g("act", 16), 4, 5, 0, 8, 16, 14)) + END,
                5,
                SCE_ERR_COUNT,
                B,
                [],
            ),
            # a loop count of 0: the contraction unit's code 3 (rtl/tt_contract.v)
            (
                "contract count 0",
                B,
                zero_rec + ct_record(mv_desc(g("core", 0), g("act", 0), g("act", 16), 0, 8, 3)) + END,
                5,
                3,
                B + n0,
                [zero_f],
            ),
        ]
        + [
            (f"element-wise refused: {ewise_error(d)[1]}", B, ew_record(d) + END, 5, ewise_error(d)[0], B, [])
            for d in ew_refused
        ]
        + [(f"sce refused: {sce_error(d)[1]}", B, sce_record(d) + END, 5, sce_error(d)[0], B, []) for d in sce_refused]
    )
    for name, base, words, code, unit_code, pc, good in cases:
        await check_illegal(env, name, base, words, code, unit_code, pc, good)

    # a read-port conflict: AXPBY with x and z both in the one-port core bank. The op runs to its end (the
    # sequencer checks at done) with the extra read (z, logical port 1) returning 0 (rtl/tt_banks.v).
    axpby = ew_desc(EwOpcode.AXPBY, 8, x=g("core", 0), z=g("core", 8), y=g("act", 16), alpha=3, beta=5, x_w=4, z_w=4)
    await check_illegal(
        env,
        "AXPBY with x and z in the core bank",
        B,
        zero_rec + ew_record(axpby) + END,
        4,
        0,
        B + n0,
        [zero_f],
        runs=axpby,
        zero_read="b",
    )
    # a contraction with a and b in the core bank
    ct_conf = mv_desc(g("core", 0), g("core", 32), g("act", 16), 4, 8, 0)
    await check_illegal(
        env,
        "contraction with a and b in the core bank",
        B,
        ct_record(ct_conf) + END,
        4,
        0,
        B,
        [],
        runs=ct_conf,
        zero_read="b",
    )
    # reads outside every bank early in the op, the writes legal: the op writes what it read as 0, then error 3
    derive = ew_desc(EwOpcode.DERIVE, 8, x=g("master", env.params.bank_depth[2] - 4), y=g("act", 16), x_w=8)
    await check_illegal(
        env,
        "element-wise read past the master bank's depth, legal writes",
        B,
        ew_record(derive) + END,
        3,
        0,
        B,
        [],
        runs=derive,
    )

    # START_PC beyond the program memory: code 2 at that pc, nothing fetched
    for pc in (PROG_DEPTH, (1 << (PROG_DEPTH - 1).bit_length()) - 1):
        await check_illegal(env, f"START_PC {pc}", pc, [], 2, 0, pc, [])
    # the LABEL register at or above classes: the SCE op of train_sample refuses (unit code 2)
    await check_sce_label(env)


async def check_illegal(
    env: Env,
    name: str,
    base: int,
    words: list,
    code: int,
    unit_code: int,
    pc: int,
    good: list,
    runs=None,
    zero_read: str = "",
    writes: bool = True,
) -> None:
    """Run the program `words` at `base`: it must stop with (code, unit_code) at pc after the `good` ops, the banks as
    the golden references say, the program memory, statistics and random stream untouched. `runs`: the bad op when it
    runs to its end (errors 3 and 4 are found at done), with its operand `zero_read` ("a" or "b") read as 0 and,
    without `writes`, its writes dropped."""
    host = env.host
    await host.write_program(words[: max(0, PROG_DEPTH - base)], base=base)  # a record may run past the end
    flat = env.flat()
    lfsr = await host.rd(Reg.LFSR)
    ops0 = (await env.counters())["ops"]
    want = flat
    for d in good:  # the good ops before the bad record, by the golden references (NEAREST: no draws)
        want = golden_ew(want, d, lfsr)[0] if isinstance(d, EwiseDesc) else golden_ct(want, d, lfsr)[0]
    # the bad op itself when it runs to its end: reads outside every bank, the extra read of a port conflict (logical
    # port 1: z, b) and a row read of a bank without rows return 0 (rtl/tt_banks.v)
    reads = {"a": want, "b": want} | ({zero_read: np.zeros_like(want)} if zero_read else {})
    if isinstance(runs, EwiseDesc):
        want = golden_ew(want, runs, lfsr, mem_z=reads["b"])[0]
    elif isinstance(runs, ContractDesc) and writes:
        want = execute_desc(runs, reads["a"], reads["b"], want)[0]
    before = env.prog_and_stats()
    await host.start(base)
    await env.wait_end(20_000)
    await env.expect_stopped(code, unit_code, pc, name)
    env.check_banks(want, name)
    env.check_prog_and_stats(before, name)
    assert await host.rd(Reg.LFSR) == lfsr, f"{name}: the random stream moved"
    ops = (await env.counters())["ops"]
    assert ops - ops0 == len(good), f"{name}: {ops - ops0} ops completed, expected {len(good)}"
    await env.clear_error(name)
    await env.good_sample()


@cocotb.test()
async def rows_missing(dut):
    """Contractions that need rows of a bank built without them (the master bank, which no compiled op reads or
    writes by rows), as a build of 4 lanes with rows of 4 and a drain of 2 runs them: a lane sum reading a from it, a
    vector load of b from it, a wide drain into it. On such a build (verif/top/test_accel_errors.py) each runs to its
    end, its row reads returning 0 and its run writes dropped, and stops with the bank port error (code 4) at its pc.
    Then rows whose every run of a (2 words from the act bank's last word) passes the bank's depth: the runs read 0,
    the writes land, and the op stops with the address error (code 3). A build without rows (VEC = 1, one lane)
    refuses all of them first (the contraction unit's code 4: lanes above LANES), touching nothing. A training sample
    then runs bit-exactly."""
    env = await Env.create(dut, 2)
    g, p = env.g, env.params
    rows = p.vec > 1
    if rows:
        assert "master" not in p.vec_banks and (p.lanes, p.vec, p.drain) == (4, 4, 2), (p.vec_banks, p.lanes)
    await env.good_sample()
    lane_sum = with_lanes(mv_desc(g("master", 0), g("act", 0), g("act", 16), 4, 8, shift=3), 4, 64, vec=4)
    # out[i, j] = sum_k a[i, k] b[k, j]: the lanes over j, b's row of 4 a beat
    mm = ContractDesc(
        a_base=g("act", 0),
        b_base=g("master", 0),
        o_base=g("act", 16),
        out_count=8,
        out_loops=(PAD,) * 4 + (Loop(2, sa=4, so=4), Loop(4, sb=1, so=1)),
        red_loops=(PAD,) * 3 + (Loop(4, sa=1, sb=4),),
        shift=3,
        mode=NEAREST,
        accumulate=False,
        out_w=16,
    )
    vec_load = with_lanes(mm, 4, 64, vec=4)
    wide = with_lanes(replace(mm, b_base=g("act", 32), o_base=g("master", 0), out_w=8), 4, 64, vec=4, drain=2)
    assert lane_sum.lane_sum and vec_load.vec == 4 and not vec_load.lane_sum and wide.drain == 2
    # out[i, j] = a[0, i] b[0, j], i and j 2: rows of R = 2 over i beside 2 columns, one run of a from the last word
    outer = ContractDesc(
        a_base=g("act", p.bank_depth[0] - 1),
        b_base=g("act", 0),
        o_base=g("act", 16),
        out_count=4,
        out_loops=(PAD,) * 4 + (Loop(2, sa=1, so=2), Loop(2, sb=1, so=1)),
        red_loops=(PAD,) * 4,
        shift=0,
        mode=NEAREST,
        accumulate=False,
        out_w=16,
    )
    past_end = check_desc(row_forms(outer, 4, 64, 4, None, 1)[0])
    assert past_end.rows and past_end.row_lanes == 2
    B = HAND_BASE
    for name, desc, code, zero_read in (
        ("a lane sum reading the master bank's rows", lane_sum, 4, "a"),
        ("a vector load from the master bank", vec_load, 4, "b"),
        ("a wide drain into the master bank", wide, 4, ""),
        ("rows whose runs of a pass the act bank's depth", past_end, 3, "a"),
    ):
        if rows:
            await check_illegal(
                env,
                name,
                B,
                ct_record(desc) + END,
                code,
                0,
                B,
                [],
                runs=desc,
                zero_read=zero_read,
                writes=desc is not wide,
            )
        else:
            await check_illegal(env, name, B, ct_record(desc) + END, 5, 4, B, [])


async def check_sce_label(env: Env) -> None:
    """train_sample with LABEL = classes: the SCE unit refuses (its code 2, label >= classes) at the SCE record; the
    ops before it ran exactly as the golden machine runs them."""
    dev = env.dev
    x, _ = env.sample()
    classes = dev.golden.cfg.classes
    sce_pc = next(r.pc for r in dev.image.records if r.program == "train_sample" and r.kind == KIND_SCE)
    k = next(r.index for r in dev.image.records if r.program == "train_sample" and r.kind == KIND_SCE)
    bank, base = dev.comp.layout["X0"]
    await env.host.write_bank(bank, base, x)
    gold = prefix_golden(dev, x, classes - 1, k)
    await env.host.start(dev.image.entry["train_sample"], classes)
    await env.wait_end(50_000)
    await env.expect_stopped(5, SCE_ERR_LABEL, sce_pc, "LABEL = classes")
    await compare_golden(env, gold, "LABEL = classes")
    await env.clear_error("LABEL = classes")
    dev.golden = gold
    await env.good_sample()


def prefix_golden(dev, x: np.ndarray, label: int, k: int) -> Machine:
    """A copy of the golden machine after the first k ops of train_sample on (x, label)."""
    gold = copy.deepcopy(dev.golden)
    prog = dev.comp.train_sample[:k]
    offs = gold._plan_draws(prog)
    rand = gold.stream.take(offs[-1]).reshape(1, -1)
    env = {"X0": np.asarray(x, dtype=np.int64)[None, :], "labels": np.array([label])}
    gold.run(prog, env, rand, observe=True)
    return gold


async def compare_golden(env: Env, gold: Machine, where: str) -> None:
    """Persistent tensors, stream and the image's statistics slots equal `gold`'s."""
    saved = env.dev.golden
    env.dev.golden = gold
    try:
        await env.dev.compare(env.dev.persistent, where)
        await env.dev.compare_stats(where)
    finally:
        env.dev.golden = saved


# ---- start while busy ----------------------------------------------------------------------------------------
@cocotb.test()
async def start_while_busy(dut):
    """A CTRL start while train_sample runs stops it after the running op with code 6, at the next record's pc
    (before the first op, at its pc, when it arrives while the first record loads); the ops before ran exactly as
    the golden machine's first ops; then training goes on bit-exactly."""
    env = await Env.create(dut, 2)
    dev = env.dev
    await env.good_sample()
    cycles = dev.cycles["train_sample"]
    recs = [r for r in dev.image.records if r.program == "train_sample"]
    end_pc = recs[-1].pc + 1 + P.header_nwords(dev.image.words[recs[-1].pc])
    pcs = [r.pc for r in recs] + [end_pc]
    for delay in (1, int(env.rng.integers(cycles // 4, cycles // 2)), int(env.rng.integers(cycles // 2, cycles - 40))):
        x, y = env.sample()
        bank, base = dev.comp.layout["X0"]
        await env.host.write_bank(bank, base, x)
        await env.host.clear_counters()
        await env.host.start(dev.image.entry["train_sample"], y)
        await ClockCycles(dut.clk, delay)
        assert await env.status() & Status.BUSY, "the sample ended before the second start"
        await env.host.wr(Reg.CTRL, Ctrl.START)
        await env.wait_end(50_000)
        code, unit_code, pc = await env.error_fields()
        assert pc in pcs, f"start while busy (delay {delay}): ERROR pc {pc} is not a record boundary"
        k = pcs.index(pc)
        await env.expect_stopped(6, 0, pc, f"start while busy (delay {delay})")
        assert (await env.counters())["ops"] == k, "ops completed before the stop"
        gold = prefix_golden(dev, x, y, k)
        await compare_golden(env, gold, f"start while busy after {k} ops")
        await env.clear_error("start while busy")
        dev.golden = gold  # the RTL's state is the golden's after those k ops: train on from there
        await env.good_sample()
    await env.good_sample()


# ---- host access while busy ------------------------------------------------------------------------------------
@cocotb.test()
async def host_access_while_busy(dut):
    """Memory, program and statistics windows answer SLVERR (read data 0) while a program runs and change nothing:
    the sample stays bit-exact; registers stay readable."""
    env = await Env.create(dut, 3)
    dev = env.dev
    x, y = env.sample()
    bank, base = dev.comp.layout["X0"]
    await env.host.write_bank(bank, base, x)
    before = env.prog_and_stats()
    # a slot no op of the sample writes: a write that landed would stay (the slot of the running op would be
    # overwritten by its own statistics update, hiding the write)
    written = {op.out for op in dev.comp.train_sample}
    idle = next(slot for name, slot in dev.image.slots.items() if name not in written)
    await env.host.start(dev.image.entry["train_sample"], y)
    assert await env.status() == Status.BUSY
    accesses = [
        ("read", PROG_WORDS + 0, None),
        ("write", PROG_WORDS + 0, 0x12345),
        ("write", PROG_WORDS + 700, 7),
        ("read", BANK_WORDS + 0, None),
        ("write", BANK_WORDS + 3, 1234),  # act: X0 (read by the running sample)
        ("write", BANK_WORDS + (1 << WIN_LSB) + 5, 3),
        ("write", BANK_WORDS + (2 << WIN_LSB) + 5, 3),
        ("write", BANK_WORDS + (3 << WIN_LSB) + 96, 999),
        ("read", BANK_WORDS + (3 << WIN_LSB) + 96, None),  # state: B0
        ("read", STAT_WORDS + 0, None),
        ("read", STAT_WORDS + 1, None),
        ("write", STAT_WORDS + 2 * idle, 77),
        ("write", STAT_WORDS + 2 * idle + 1, 77),
    ]
    for op, word, value in accesses:
        if op == "read":
            await env.slverr_rd(word, "while busy")
        else:
            await env.slverr_wr(word, value, what="while busy")
    assert await env.status() == Status.BUSY, "the sample ended before the accesses were done (make it longer)"
    assert (await env.host.rd(Reg.ID)) == 0x54544131  # registers stay readable
    await env.wait_end(50_000)
    assert await env.status() == Status.DONE
    prog_after = env.prog_and_stats()[0]
    assert prog_after == before[0], "program memory changed by writes while busy"
    assert (np.array(dev.backdoor.read(bank, base, len(x))) == x).all(), "X0 changed by a write while busy"
    # finish the sample's checks as RtlDevice.train_sample does
    pred, p_label = await env.host.rd(Reg.PRED), await env.host.rd(Reg.P_LABEL)
    ref = dev.golden.accumulate_batch(x[None, :], np.array([y]))
    assert (pred, p_label) == (int(ref["pred"][0]), int(ref["p_label"][0]))
    await dev.compare(dev.persistent, "after accesses while busy")
    await dev.compare_stats("after accesses while busy")
    await env.good_sample()


# ---- bad register accesses -------------------------------------------------------------------------------------
@cocotb.test()
async def bad_register_accesses(dut):
    """Writes to read-only or unmapped registers, partial-strobe writes anywhere, reads of unmapped registers and
    accesses outside the windows answer SLVERR and change nothing; a partial-strobe CTRL start starts nothing. Then
    the SEED register's mapping to the random stream's state (SPEC 3), with the seed that maps to zero (state 1)."""
    env = await Env.create(dut, 4)
    host = env.host
    await env.good_sample()
    await host.wr(Reg.START_PC, 17)
    await host.wr(Reg.LABEL, 2)
    await host.wr(Reg.SEED, 0x1234567)
    stream_regs = [Reg.STREAM_BASE, Reg.STREAM_WORDS, Reg.STREAM_FRAMES]
    for r in stream_regs:
        await host.wr(r, 0x1234 + r)
    ro = (
        [Reg.ID, Reg.STATUS, Reg.ERROR, Reg.LFSR, Reg.PRED, Reg.P_LABEL, Reg.PC, Reg.OPS, Reg.SAT_TOTAL]
        + list(range(Reg.CYCLES, Reg.CYCLES + 8))
        + [Reg.RANK_CYCLES, Reg.RANK_CYCLES + 1]
        + list(range(Reg.P_BANK_SHIFT, Reg.P_PRELOAD + 1))  # the build's parameters
    )
    regs = ro + [Reg.START_PC, Reg.LABEL, Reg.SEED] + stream_regs
    vals = {r: await host.rd(r) for r in regs}
    for r in ro:
        await env.slverr_wr(r, ~vals[r], what="read-only register")
    for r in (0x1A, 0x1F, Reg.P_PRELOAD + 1, 0xFF):
        await env.slverr_wr(r, 0xFFFFFFFF, what="unmapped register")
        await env.slverr_rd(r, "unmapped register")
    for strb in (0x0, 0x1, 0x7, 0xE, 0x8):
        for r in [Reg.START_PC, Reg.LABEL, Reg.SEED] + stream_regs:
            await env.slverr_wr(r, ~vals[r], strb, "partial strobe")
        await env.slverr_wr(Reg.CTRL, Ctrl.START | Ctrl.CLEAR_COUNTERS | Ctrl.SEED, strb, "partial strobe CTRL")
    assert await env.status() == Status.DONE, "a partial-strobe CTRL write started a program or cleared done"
    for r in regs:
        assert await host.rd(r) == vals[r], f"register {r:#x} changed by rejected writes"
    flat = env.flat()
    before = env.prog_and_stats()
    for strb in (0x0, 0x3, 0x7, 0xB):
        await env.slverr_wr(PROG_WORDS + 3, 0xDEADBEEF, strb, "partial program word")
        await env.slverr_wr(BANK_WORDS + 5, 0x7FFF, strb, "partial act word")
        await env.slverr_wr(BANK_WORDS + (3 << WIN_LSB) + 7, 0x7FFF, strb, "partial state word")
        await env.slverr_wr(STAT_WORDS + 2 * 5, 0x55, strb, "partial saturation count")
        await env.slverr_wr(STAT_WORDS + 2 * 5 + 1, 0x55, strb, "partial max register")
    outside = [
        PROG_WORDS + PROG_DEPTH,
        PROG_WORDS + (1 << (PROG_DEPTH - 1).bit_length()),
        PROG_WORDS + (1 << WIN_LSB) - 1,
        STAT_WORDS + 128,
        STAT_WORDS + (1 << 17),
        BANK_WORDS + env.params.bank_depth[0],
        BANK_WORDS + (1 << WIN_LSB) - 1,
        BANK_WORDS + (1 << WIN_LSB) + env.params.bank_depth[1],
        BANK_WORDS + (2 << WIN_LSB) + env.params.bank_depth[2],
        BANK_WORDS + (3 << WIN_LSB) + env.params.bank_depth[3],
        3 << 18,
        (3 << WIN_LSB) + 5,
        8 << 18,
        15 << 18,
    ]
    for word in outside:
        await env.slverr_wr(word, 0x1, what="outside")
        await env.slverr_rd(word, "outside")
    env.check_banks(flat, "rejected writes")
    env.check_prog_and_stats(before, "rejected writes")
    # the same words written whole are fine (the rejections were the strobes, not the addresses)
    await host.wr(STAT_WORDS + 2 * 50, 0x55)
    assert await host.rd(STAT_WORDS + 2 * 50) == 0x55
    assert (await env.raw_rd(BANK_WORDS + env.params.bank_depth[0] - 1))[1] == OKAY
    assert (await env.raw_rd(PROG_WORDS + PROG_DEPTH - 1))[1] == OKAY
    for s in (0x1234567, fxp.LFSR_SEED_XOR, 0xFFFFFFFF):
        await host.seed(s)
        assert await host.rd(Reg.LFSR) == fxp.lfsr_seed_state(s), f"seed {s:#x}: stream state"
    await host.wr(Reg.SEED, 0)
    await env.resync_stream()
    await env.good_sample()


# ---- reset in the middle of a training step -------------------------------------------------------------------
@cocotb.test()
async def reset_mid_sample(dut):
    """rst while train_sample runs: registers and counters take their reset values, the memories (banks, program,
    statistics) keep theirs; after RtlDevice.upload a mini-batch trains bit-exactly."""
    env = await Env.create(dut, 5)
    dev = env.dev
    await env.good_sample()
    cycles = dev.cycles["train_sample"]
    persistent_before = {n: dev.golden.mem[n].copy() for n in dev.persistent}
    x, y = env.sample()
    bank, base = dev.comp.layout["X0"]
    await env.host.write_bank(bank, base, x)
    await env.host.start(dev.image.entry["train_sample"], y)
    await ClockCycles(dut.clk, int(env.rng.integers(cycles // 4, 3 * cycles // 4)))
    await FallingEdge(dut.clk)
    dut.rst.value = 1
    await FallingEdge(dut.clk)  # one reset edge: nothing moves from here on
    flat = env.flat()
    mems = env.prog_and_stats()
    await ClockCycles(dut.clk, 5)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 3)
    env.check_banks(flat, "after reset")
    env.check_prog_and_stats(mems, "after reset")
    assert mems[0][: len(dev.image.words)] == [format(w, "032b") for w in dev.image.words], "program image lost"
    untouched = [n for n in dev.persistent if n not in dev.sample_writes]
    for n in untouched:
        b, o = dev.comp.layout[n]
        got = np.array(dev.backdoor.read(b, o, len(persistent_before[n])))
        assert (got == persistent_before[n]).all(), f"tensor {n} changed by a reset mid-sample"
    resets = {
        Reg.STATUS: 0,
        Reg.ERROR: 0,
        Reg.START_PC: 0,
        Reg.LABEL: 0,
        Reg.SEED: 0,
        Reg.LFSR: fxp.lfsr_seed_state(0),
        Reg.PC: 0,
        Reg.OPS: 0,
        Reg.SAT_TOTAL: 0,
        **{r: 0 for r in range(Reg.CYCLES, Reg.CYCLES + 8)},
    }
    for r, v in resets.items():
        assert await env.host.rd(r) == v, f"register {r:#x} after reset: {await env.host.rd(r):#x}, expected {v:#x}"
    await dev.upload()
    idx = env.rng.permutation(len(env.data.train_y))[:4]
    await train_batch(dev, dev.golden, env.xq[idx], env.data.train_y[idx])
    await env.good_sample()


# ---- back-to-back programs, extreme inputs ----------------------------------------------------------------------
@cocotb.test()
async def back_to_back_extremes(dut):
    """train_sample and infer started back to back (no bus access between) on all-zero and max-magnitude inputs;
    pred, p[label], gradients, logits and the following update bit-exact."""
    env = await Env.create(dut, 6)
    dev = env.dev
    n = dev.comp.tensors["X0"].size
    xs = [
        np.zeros(n, np.int64),
        np.full(n, 32767),
        np.full(n, -32768),
        np.where(np.arange(n) % 2, 32767, -32768),
        np.where(np.arange(n) % 3, -32768, 32767),
    ]
    bank, base = dev.comp.layout["X0"]
    last = dev.comp.infer[-1].out
    lbank, lbase = dev.comp.layout[last]
    for i, x in enumerate(xs):
        y = i % dev.golden.cfg.classes
        await env.host.write_bank(bank, base, x)
        await env.host.start(dev.image.entry["train_sample"], y)
        await env.host.wr(Reg.START_PC, dev.image.entry["infer"])  # registers are writable while busy
        await env.wait_end()
        await env.host.wr(Reg.CTRL, Ctrl.START)  # immediately after done
        assert int(dut.done.value) == 0, "done still high after the next start"
        await env.wait_end()
        assert await env.status() == Status.DONE
        pred, p_label = await env.host.rd(Reg.PRED), await env.host.rd(Reg.P_LABEL)
        ref = dev.golden.accumulate_batch(x[None, :], np.array([y]))
        assert (pred, p_label) == (int(ref["pred"][0]), int(ref["p_label"][0])), f"input {i}: pred, p[label]"
        await dev.compare(dev.sample_writes, f"extreme input {i}")
        genv = {"X0": x[None, :].astype(np.int64)}
        dev.golden.run(dev.comp.infer, genv, None, observe=False)  # Machine.infer: counts saturations too
        got = np.array(dev.backdoor.read(lbank, lbase, dev.comp.tensors[last].size))
        assert (got == genv[last][0]).all(), f"input {i}: logits {got}, golden {genv[last][0]}"
    await dev.update()
    await dev.adapt()
    await env.good_sample()


# ---- contraction shift at both ends of its range, statistics and counters --------------------------------------
@cocotb.test()
async def shift_ends_and_statistics(dut):
    """Hand-built contractions with shift -16 and 47 (nearest, stochastic, accumulate) and element-wise ops, each a
    program of its own run back to back: memories, stream, saturation counts (the slot's counter saturating), max
    registers (observe or not) and SAT_TOTAL as golden/isa/ computes them; OPS, and busy cycles = unit cycles +
    (fetch + header + payload + seed + statistics cycles) per op + the END record's fetch and header
    (rtl/tt_seq.v)."""
    env = await Env.create(dut, 7)
    host, g = env.host, env.g
    # operands: act X0 (0..15) random 16-bit, act 40..47 random, state 0..7 random (restored after the hand ops:
    # training goes on from the golden state); core as uploaded
    await host.write_bank("act", 0, env.rng.integers(-1 << 15, 1 << 15, 16))
    await host.write_bank("act", 40, env.rng.integers(-1 << 15, 1 << 15, 8))
    s = FREE_SLOT
    state0 = await host.read_bank("state", 0, 8)
    await host.write_bank("state", 0, env.rng.integers(-1 << 15, 1 << 15, 8))
    ops = [  # (desc, slot, observe, preset saturation count, preset max)
        (mv_desc(g("core", 0), g("act", 0), g("act", 16), 4, 8, -16), s, True, SAT_COUNTER_MAX - 2, 5),
        (mv_desc(g("core", 8), g("act", 4), g("act", 20), 4, 4, -16, STOCHASTIC, acc=True), s + 1, True, 3, 20000),
        (mv_desc(g("core", 0), g("act", 0), g("act", 24), 4, 8, 47, STOCHASTIC, out_w=4), s + 2, False, 7, 1234),
        (mv_desc(g("core", 16), g("act", 8), g("act", 28), 4, 8, 47, NEAREST, out_w=8), s + 3, True, 0, 0),
        (mv_desc(g("core", 32), g("act", 0), g("act", 32), 2, 16, -16, NEAREST, acc=True, out_w=12), s + 4, True, 9, 3),
        (mv_desc(g("core", 0), g("act", 40), g("act", 36), 4, 8, 5, STOCHASTIC, out_w=6), s + 5, True, 0, 0),
        (
            ew_desc(
                EwOpcode.AXPBY,
                8,
                x=g("act", 40),
                z=g("state", 0),
                y=g("act", 48),
                alpha=30000,
                beta=-7,
                align_x=2,
                align_z=-3,
                shift=4,
                mode=STOCHASTIC,
                x_w=16,
                z_w=16,
                y_w=10,
            ),
            s + 6,
            True,
            11,
            2,
        ),
        (ew_desc(EwOpcode.ACC, 8, x=g("act", 40), y=g("act", 48), shift=-2, y_w=16), s + 6, True, 0, 0),
        (ew_desc(EwOpcode.DERIVE, 8, x=g("act", 40), y=g("act", 8)), s + 7, False, 0, 0),
    ]
    await host.clear_counters()
    c = await env.counters()
    assert all(v == 0 for v in c.values()), f"counters after clear: {c}"
    presets = {}
    for _, slot, _, sat, mx, *_ in ops:
        presets.setdefault(slot, (sat, mx))
    for slot, (sat, mx) in presets.items():
        await host.write_stat(slot, sat, mx)
    stats = dict(presets)
    flat = env.flat()
    state = await host.rd(Reg.LFSR)
    overhead = 0
    sat_total = 0
    unit_sum = {"contract_cycles": 0, "ewise_cycles": 0, "sce_cycles": 0}
    for i, (d, slot, observe, _, _) in enumerate(ops):
        c0 = await env.counters()
        if isinstance(d, ContractDesc):
            words, unit = ct_record(d, slot, observe), "contract_cycles"
            flat, n_sat, mx, state = golden_ct(flat, d, state)
        else:
            words, unit = ew_record(d, slot, observe), "ewise_cycles"
            flat, n_sat, mx, state = golden_ew(flat, d, state)
        await env.run_hand(words + END)
        where = f"hand op {i} ({'shift ' + str(d.shift) if isinstance(d, ContractDesc) else 'ewise'})"
        st = await env.status()
        assert st == Status.DONE, f"{where}: STATUS {st:#x}, ERROR {await env.error_fields()}"
        env.check_banks(flat, where)
        assert await host.rd(Reg.LFSR) == state, f"{where}: stream state"
        sat0, mx0 = stats[slot]
        stats[slot] = (min(sat0 + n_sat, SAT_COUNTER_MAX), max(mx0, mx) if observe else mx0)
        assert await host.read_stat(slot) == stats[slot], (
            f"{where}: slot {slot} (saturations, max) {await host.read_stat(slot)}, golden {stats[slot]}"
        )
        sat_total = min(sat_total + n_sat, SAT_COUNTER_MAX)
        c1 = await env.counters()
        assert c1["ops"] - c0["ops"] == 1 and c1["sat_total"] == sat_total, f"{where}: OPS / SAT_TOTAL {c1}"
        moved = {u for u in unit_sum if c1[u] != c0[u]}
        assert moved == {unit}, f"{where}: unit counters that moved {moved}, expected {unit}"
        for u in unit_sum:
            unit_sum[u] += c1[u] - c0[u]
        held = c1[unit] - c0[unit]
        seq = SEQ_OP_CYCLES + record_wait(None, len(words) - 1) + record_wait(held, 0)  # the op, then END
        overhead += seq
        busy = c1["cycles"] - c0["cycles"]
        assert busy == held + seq, f"{where}: busy {busy}, unit {c1[unit] - c0[unit]}, payload {len(words) - 1}"
    c = await env.counters()
    assert c["cycles"] == sum(unit_sum.values()) + overhead and c["ops"] == len(ops) and c["sce_cycles"] == 0
    # the words a short record leaves out read as 0 (rtl/tt_seq.v): the same op in a full record whose table words
    # are not 0, then in a short one; the descriptor the unit held for the second is the short payload alone
    d = ew_desc(EwOpcode.DERIVE, 8, x=g("act", 40), y=g("act", 8))
    full, short = ew_record(d, s + 8), ew_record(d, s + 8, short=True)  # a slot no check above reads
    full[len(short) :] = [0xA5A5A5A5] * (len(full) - len(short))
    await env.run_hand(full + short + END)
    st = await env.status()
    assert st == Status.DONE, f"full then short record: STATUS {st:#x}, ERROR {await env.error_fields()}"
    flat = golden_ew(golden_ew(flat, d, state)[0], d, state)[0]
    env.check_banks(flat, "full then short record")
    held = int(env.dut.u_seq.desc_q.value)
    want = sum(w << (32 * i) for i, w in enumerate(short[1:]))
    assert held == want, f"short record's descriptor {held:#x}, expected its payload and zeros {want:#x}"
    await host.write_bank("state", 0, state0)
    # a whole train_sample: busy and unit counters by the cycle model (`python -m golden cost`); saturations and
    # max registers by the golden
    await env.resync_stream()
    await host.clear_counters()
    gsat0 = env.dev.golden.sat_total
    await env.good_sample()
    c = await env.counters()
    recs = [r for r in env.dev.image.records if r.program == "train_sample"]
    model = P.program_cycles(env.dev.image, "train_sample", env.dev.mem_lat)
    got = {u: c[f"{u}_cycles"] for u in model["units"]}
    assert (c["cycles"], got) == (model["cycles"], model["units"]), (
        f"train_sample: counters {c['cycles']} {got}, modelled {model['cycles']} {model['units']}"
    )
    assert c["ops"] == len(recs)
    assert all(c[u] > 0 for u in unit_sum), f"every unit ran: {c}"
    assert c["sat_total"] == env.dev.golden.sat_total - gsat0, f"SAT_TOTAL {c['sat_total']}"
    await env.dev.compare_stats("train_sample statistics")
    # the slots of the hand ops are still theirs (train_sample uses the image's)
    for slot, want in stats.items():
        assert await host.read_stat(slot) == want, f"slot {slot} changed by train_sample"
    # host writes of the slots while idle are read back; a saturation count clamps when the ops go on
    await host.write_stat(FREE_SLOT, 0xFFFFFFFF, 0xFFFF)
    assert await host.read_stat(FREE_SLOT) == (0xFFFFFFFF, 0xFFFF)


# ---- host windows decode every address bit ---------------------------------------------------------------------
@cocotb.test()
async def host_window_decode(dut):
    """rtl/tt_accel.v: "an address outside a bank or a window ... ends with SLVERR and changes nothing". A bank
    window's word address at or above 2^BANK_SHIFT must not reach the next bank (word 2^BANK_SHIFT of the act
    window is not core word 0), and the register window holds 256 words (word 0x104 is not START_PC). Each access
    below must answer SLVERR and change nothing. (Found by this test: the decode first OR-ed the window address into
    the bank field and decoded only 8 register-address bits.)"""
    env = await Env.create(dut, 8)
    sh = env.params.bank_shift
    flat = env.flat()
    start_pc = await env.host.rd(Reg.START_PC)
    problems = []
    for word, what in (
        (BANK_WORDS + (1 << sh), "act window word 2^BANK_SHIFT (core word 0)"),
        (BANK_WORDS + (3 << sh) + 5, "act window word 3 x 2^BANK_SHIFT + 5 (state word 5)"),
        (BANK_WORDS + (2 << WIN_LSB) + (1 << sh) + 1, "master window word 2^BANK_SHIFT + 1 (state word 1)"),
    ):
        value, rresp = await env.raw_rd(word)
        wresp = await env.raw_wr(word, 0x5)
        if (rresp, wresp) != (SLVERR, SLVERR):
            problems.append(f"{what}: read {rresp} (data {to_signed(value)}), write {wresp}")
    value, rresp = await env.raw_rd(0x100)
    if rresp != SLVERR:
        problems.append(f"register word 0x100: read answered {rresp} with {value:#x} (ID is word 0)")
    wresp = await env.raw_wr(0x100 + Reg.START_PC, start_pc + 3)
    if wresp != SLVERR or await env.host.rd(Reg.START_PC) != start_pc:
        problems.append(
            f"register word {0x100 + Reg.START_PC:#x}: write answered {wresp}, "
            f"START_PC now {await env.host.rd(Reg.START_PC)}"
        )
    try:
        env.check_banks(flat, "aliased bank window writes")
    except AssertionError as exc:
        problems.append(str(exc))
    assert not problems, "incomplete host address decode: " + "; ".join(problems)


# ---- the sample stream ---------------------------------------------------------------------------------------------
class StreamWatch:
    """Counts the cycles in which the stream offers a beat (tvalid) that the accelerator holds back (tready low),
    while a run is busy and while it is not."""

    def __init__(self, dut):
        self.dut, self.held = dut, {"busy": 0, "idle": 0}
        cocotb.start_soon(self._run())

    async def _run(self):
        d = self.dut
        while True:
            await RisingEdge(d.clk)
            if int(d.s_axis_tvalid.value) and not int(d.s_axis_tready.value):
                self.held["busy" if int(d.u_seq.busy.value) else "idle"] += 1


def x0_global(env: Env) -> tuple[int, int]:
    bank, base = env.dev.comp.layout["X0"]
    return env.g(bank, base), env.dev.comp.tensors["X0"].size


@cocotb.test()
async def stream_samples(dut):
    """Samples through the AXI4-Stream input with random pauses on tvalid, bit-exact with the golden machine (verif/
    rtl_device.py stream_samples): each frame starts train_sample, and the frames queued behind a busy run are held
    (tready low) and taken after it. A frame offered while no frame is allowed is held too: it writes nothing and
    starts nothing until the host allows it; then training goes on over AXI4-Lite."""
    env = await Env.create(dut, 7)
    dev = env.dev
    stream = SampleStream(dut, dut.clk, env.host.period_ns, pause=0.2, rng=env.rng)
    watch = StreamWatch(dut)
    idx = env.rng.integers(len(env.data.train_y), size=3)
    await dev.stream_samples(stream, env.xq[idx], env.data.train_y[idx])
    assert watch.held["busy"] > 0, "no frame was held back while a run was busy"

    flat = env.flat()
    ops = (await env.counters())["ops"]

    async def held_without_frames():
        held = watch.held["idle"]
        await ClockCycles(dut.clk, 200)
        assert watch.held["idle"] > held and int(dut.s_axis_tready.value) == 0, (
            "the frame was not offered, or taken while none was allowed"
        )
        assert await env.status() == Status.DONE and (await env.counters())["ops"] == ops, "a held frame started a run"
        env.check_banks(flat, "a frame held while no frame is allowed")
        await env.host.allow_frames(1)

    x, y = env.sample()
    await dev.stream_samples(stream, x[None, :], np.array([y]), release=held_without_frames)
    await env.good_sample()


@cocotb.test()
async def stream_bad_frames(dut):
    """Malformed frames (tlast before the label, a label without tlast, words outside every bank) set STATUS b3 and
    start nothing: the frames allowed stay, and the banks change only where the frame's words went (the sample's
    own region, or the bank's last words for a frame that runs past it, restored after). The rest of a bad frame is
    dropped up to its tlast, so the next frame is whole. A frame while the sequencer is stopped on an error is held
    until the error is cleared, then trains bit-exactly."""
    env = await Env.create(dut, 8)
    dev, host = env.dev, env.host
    stream = SampleStream(dut, dut.clk, env.host.period_ns, pause=0.2, rng=env.rng)
    gbase, n = x0_global(env)
    entry = dev.image.entry["train_sample"]
    await env.good_sample()
    x, y = env.sample()
    good = SampleStream.frame(x, y)
    act_depth = env.params.bank_depth[0]
    cases = [
        (1, "tlast on the last sample word", gbase, good[:-1]),
        (1, "tlast on the first word", gbase, good[:1]),
        (2, "a label without tlast, and more words", gbase, good + [0x7FFF, 3, 0x8000]),
        (3, "a frame past the act bank's end", env.g("act", act_depth - 2), good),
        (3, "a frame in the gap after the act bank", env.g("act", act_depth), good),
    ]
    for code, what, base, words in cases:
        await host.stream_setup(base, n, entry)
        await host.allow_frames(2)
        flat = env.flat()
        ops = (await env.counters())["ops"]
        stream.send(words)
        await stream.wait(100 * len(words))  # nothing runs: a beat a cycle, with pauses
        await ClockCycles(dut.clk, 10)
        st = await env.status()
        assert st == Status.DONE | Status.STREAM_ERROR, f"{what}: STATUS {st:#x}, expected done and the stream error"
        assert (await env.counters())["ops"] == ops and await host.rd(Reg.STREAM_FRAMES) == 2, f"{what}: a run started"
        # the words that were written: the frame's sample words up to the error, below the bank's end
        want = flat.copy()
        k = min(
            n,
            len(words) - (code == SeqError.OVERRUN),
            act_depth - (base - env.g("act", 0)) if code == SeqError.ADDR else n,
        )
        want[base : base + max(k, 0)] = [to_signed(w, 16) for w in words[: max(k, 0)]]
        env.check_banks(want, what)
        sample_stop("stream", code)
        await host.wr(Reg.CTRL, Ctrl.CLEAR_ERROR)
        assert await env.status() == Status.DONE, f"{what}: STATUS after clear error"
        if code == SeqError.ADDR and k > 0:
            await host.write_bank("act", act_depth - k, flat[env.g("act", act_depth - k) : env.g("act", act_depth)])
    await host.allow_frames(0)

    # a frame while the sequencer is stopped on an error: held until the error is cleared
    await host.start(PROG_DEPTH + 5)  # START_PC past the program memory: error 2 at once
    await env.wait_end()
    await env.expect_stopped(2, 0, PROG_DEPTH + 5, "start past the program memory")
    flat = env.flat()

    async def held_while_stopped():
        await host.allow_frames(1)
        await ClockCycles(dut.clk, 150)
        assert int(dut.s_axis_tready.value) == 0, "a frame was taken while the sequencer is stopped on an error"
        env.check_banks(flat, "a frame held while the sequencer is stopped")
        await host.wr(Reg.CTRL, Ctrl.CLEAR_ERROR)

    await dev.stream_samples(stream, x[None, :], np.array([y]), release=held_while_stopped)
    await env.good_sample()


# ---- coverage of the error states: runs last ----------------------------------------------------------------------
@cocotb.test()
async def error_stops_covered(dut):
    """Every error bin was reached by one of the tests above (with the stop checked), or the run fails naming the
    holes. Run alone (a TESTCASE filter), nothing was sampled and it fails as it should."""
    point = coverage_db[ERROR_POINT]
    hits = point.detailed_coverage
    holes = [b for b in ERROR_BINS if hits.get(b, 0) == 0]
    dut._log.info(
        "error stops covered: %d of %d bins: %s",
        point.coverage,
        point.size,
        {f"{w}:{c}": hits.get((w, c), 0) for w, c in ERROR_BINS},
    )
    assert not holes, f"error coverage not closed: no test reached {holes}"
