"""The host driver of the accelerator (rtl/tt_accel.v): everything a host does, over AXI4-Lite, and the
AXI4-Stream sample input (`SampleStream`).

`AccelHost` wraps an `verif.axil.AxilHost` (any object with async write32(byte_addr, value) -> resp and
read32(byte_addr) -> (value, resp)) and speaks the register map of rtl/tt_accel.v: parameters read from the
HDL, program and memory windows, start / wait / error decoding, statistics slots and counters.
`Backdoor` reads the data banks through the simulator (for the lock-step checker, which compares whole
memories after every sample: over AXI that would cost more cycles than the sample).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from cocotb.triggers import First, ReadOnly, RisingEdge, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource

from golden.arch import (
    ACCEL_ID,
    BANKS,
    ERR_W,
    ERROR_CODE_LSB,
    ERROR_PC_LSB,
    ERROR_UNIT_CODE_LSB,
    LFSR_SEED_XOR,
    STAT_WORDS_PER_SLOT,
    UNIT_OF_KIND,
    WIN_BANK0,
    WIN_LSB,
    WIN_PROG,
    WIN_STAT,
    Ctrl,
    Reg,
    SeqError,
    Status,
    banks_built,
)
from golden.program import AccelParams
from verif.axil import OKAY

# the first word addresses of the windows (golden/arch.py)
PROG_WORDS, STAT_WORDS, BANK_WORDS = WIN_PROG << WIN_LSB, WIN_STAT << WIN_LSB, WIN_BANK0 << WIN_LSB
SEQ_ERRORS: dict[int, str] = {
    SeqError.ILLEGAL: "illegal op",
    SeqError.OVERRUN: "program runs off the program memory",
    SeqError.ADDR: "address outside every bank",
    SeqError.PORT: "bank read-port conflict",
    SeqError.UNIT: "unit refused the descriptor",
    SeqError.BUSY: "start while busy",
}
UNITS = tuple(UNIT_OF_KIND.values())  # the per-unit cycle counters, in record-kind order


class HostError(RuntimeError):
    """The accelerator answered SLVERR, or stopped with an error."""


@dataclass(frozen=True)
class SeqFault:
    """The ERROR register's fields: the sequencer's code, the unit's (code UNIT) and the op's pc."""

    code: int
    unit_code: int
    pc: int

    @classmethod
    def decode(cls, word: int) -> SeqFault:
        mask = (1 << ERR_W) - 1
        return cls(word >> ERROR_CODE_LSB & mask, word >> ERROR_UNIT_CODE_LSB & mask, word >> ERROR_PC_LSB)

    def __str__(self) -> str:
        why = SEQ_ERRORS.get(self.code, f"code {self.code}")
        unit = f" (unit error code {self.unit_code})" if self.code == SeqError.UNIT else ""
        return f"sequencer error {self.code}: {why}{unit} at pc {self.pc}"


def to_signed(v: int, bits: int = 32) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


class DirectAxil:
    """An AXI4-Lite master with the AxilHost interface (write32, read32) and no background coroutines: it
    touches the channels only inside a transaction, so the simulator runs free between transactions.
    cocotbext-axi's AxiLiteMaster (verif/axil.py) watches its response channels on every clock edge, which
    slows a long co-simulation down to the speed of those coroutines; the protocol tests keep using it (with
    stalls)."""

    def __init__(self, dut, clk, prefix: str = "s_axil"):
        self.clk = clk
        self.sig = {
            n: getattr(dut, f"{prefix}_{n}")
            for n in (
                "awaddr",
                "awprot",
                "awvalid",
                "awready",
                "wdata",
                "wstrb",
                "wvalid",
                "wready",
                "bresp",
                "bvalid",
                "bready",
                "araddr",
                "arprot",
                "arvalid",
                "arready",
                "rdata",
                "rresp",
                "rvalid",
                "rready",
            )
        }
        for n in (
            "awvalid",
            "wvalid",
            "bready",
            "arvalid",
            "rready",
            "awprot",
            "arprot",
            "awaddr",
            "araddr",
            "wdata",
            "wstrb",
        ):
            self.sig[n].value = 0

    async def write32(self, addr: int, value: int, strb: int = 0xF) -> int:
        s = self.sig
        s["awaddr"].value, s["wdata"].value, s["wstrb"].value = addr, value, strb
        s["awvalid"].value = s["wvalid"].value = s["bready"].value = 1
        aw = w = True
        while True:
            await ReadOnly()
            aw_fire = aw and int(s["awready"].value)
            w_fire = w and int(s["wready"].value)
            b_fire = int(s["bvalid"].value)
            resp = int(s["bresp"].value) if b_fire else 0
            await RisingEdge(self.clk)
            if aw_fire:
                aw = False
                s["awvalid"].value = 0
            if w_fire:
                w = False
                s["wvalid"].value = 0
            if b_fire:
                s["bready"].value = 0
                return resp

    async def read32(self, addr: int) -> tuple[int, int]:
        s = self.sig
        s["araddr"].value = addr
        s["arvalid"].value = s["rready"].value = 1
        ar = True
        while True:
            await ReadOnly()
            ar_fire = ar and int(s["arready"].value)
            r_fire = int(s["rvalid"].value)
            data = (int(s["rdata"].value), int(s["rresp"].value)) if r_fire else None
            await RisingEdge(self.clk)
            if ar_fire:
                ar = False
                s["arvalid"].value = 0
            if data is not None:
                s["rready"].value = 0
                return data


class SampleStream:
    """The sample input (s_axis_*, rtl/tt_accel.v) driven by cocotbext-axi's AxiStreamSource, one 16-bit word a
    beat: a frame is the sample's words, then its label with tlast. `period_ns`: the clock's; `pause`: the
    probability per cycle that tvalid is held low (drawn from `rng`)."""

    def __init__(self, dut, clk, period_ns: int, pause: float = 0.0, rng=None):
        self.period_ns = period_ns
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), clk, dut.rst, byte_lanes=1)
        self.source.log.setLevel(logging.WARNING)  # not a line per frame with all its words
        if pause:
            self.source.set_pause_generator(iter(lambda: bool(rng.random() < pause), None))

    @staticmethod
    def frame(x, label: int) -> list[int]:
        return [int(v) & 0xFFFF for v in x] + [int(label)]

    def send(self, words: list[int]) -> None:
        """Queue a frame (any words: the tests send malformed ones too); it goes out as tready allows."""
        self.source.send_nowait(AxiStreamFrame(list(words)))

    async def wait(self, timeout_cycles: int) -> None:
        """Until every queued beat has been taken; HostError if that takes more than `timeout_cycles` (the
        accelerator never asks for them)."""
        try:
            await with_timeout(self.source.wait(), timeout_cycles * self.period_ns, "ns")
        except Exception as exc:  # cocotb's SimTimeoutError
            raise HostError(f"the stream's frames were not taken within {timeout_cycles} cycles") from exc


class AccelHost:
    def __init__(self, axil, dut, period_ns: int = 10):
        self.axil, self.dut, self.period_ns = axil, dut, period_ns

    async def wr(self, word: int, value: int) -> None:
        resp = await self.axil.write32(4 * word, value & 0xFFFFFFFF)
        if resp != OKAY:
            raise HostError(f"write of {value:#x} to word {word:#x} answered SLVERR")

    async def rd(self, word: int) -> int:
        value, resp = await self.axil.read32(4 * word)
        if resp != OKAY:
            raise HostError(f"read of word {word:#x} answered SLVERR")
        return value

    # --- what the HDL was built with ---
    async def params(self) -> AccelParams:
        if await self.rd(Reg.ID) != ACCEL_ID:
            raise HostError("no accelerator at this address (ID register)")
        adam = bool(await self.rd(Reg.P_ADAM))
        depth, width, _ = await self._bank_registers(adam)
        vec, vec_banks = await self.rd(Reg.P_VEC), await self.rd(Reg.P_VEC_BANKS)
        return AccelParams(
            bank_shift=await self.rd(Reg.P_BANK_SHIFT),
            bank_depth=depth,
            bank_width=width,
            prog_depth=await self.rd(Reg.P_PROG_DEPTH),
            lanes=await self.rd(Reg.P_LANES),
            buf_depth=await self.rd(Reg.P_BUF_DEPTH),
            adam=adam,
            rank=bool(await self.rd(Reg.P_RANK)),
            vec=vec,
            bank_vec=tuple(bool(vec_banks >> b & 1) for b in range(len(depth))) if vec > 1 else (),
            drain=await self.rd(Reg.P_DRAIN),
            acc_w=await self.rd(Reg.P_ACC_W),
            preload=bool(await self.rd(Reg.P_PRELOAD)),
        )

    async def _bank_registers(self, adam: bool) -> tuple[tuple[int, ...], ...]:
        """(depths, widths, read ports) of the banks built (banks 0..3, and the moment bank with Adam)."""
        regs = [[Reg.P_DEPTH + b, Reg.P_WIDTH + b, Reg.P_PORTS + b] for b in range(len(banks_built(False)))]
        if adam:
            regs.append([Reg.P_MOMENT, Reg.P_MOMENT + 1, Reg.P_MOMENT + 2])
        values = [[await self.rd(r) for r in bank] for bank in regs]
        return tuple(tuple(column) for column in zip(*values))

    async def bank_ports(self) -> tuple[int, ...]:
        return (await self._bank_registers(bool(await self.rd(Reg.P_ADAM))))[2]

    # --- memories ---
    async def write_program(self, words, old=None, base: int = 0) -> int:
        """Write the image (only the words that differ from `old`, when given); returns words written."""
        n = 0
        for i, w in enumerate(words):
            if old is None or i >= len(old) or old[i] != w:
                await self.wr(PROG_WORDS + base + i, w)
                n += 1
        return n

    async def read_program(self, n: int, base: int = 0) -> list[int]:
        return [await self.rd(PROG_WORDS + base + i) for i in range(n)]

    async def write_bank(self, bank: str, base: int, values) -> None:
        w = BANK_WORDS + (BANKS.index(bank) << WIN_LSB) + base
        for i, v in enumerate(values):
            await self.wr(w + i, int(v))

    async def read_bank(self, bank: str, base: int, n: int) -> list[int]:
        w = BANK_WORDS + (BANKS.index(bank) << WIN_LSB) + base
        return [to_signed(await self.rd(w + i)) for i in range(n)]

    async def write_stat(self, slot: int, sat: int, maxabs: int) -> None:
        await self.wr(STAT_WORDS + STAT_WORDS_PER_SLOT * slot, sat)
        await self.wr(STAT_WORDS + STAT_WORDS_PER_SLOT * slot + 1, maxabs)

    async def read_stat(self, slot: int) -> tuple[int, int]:
        return await self.rd(STAT_WORDS + STAT_WORDS_PER_SLOT * slot), await self.rd(
            STAT_WORDS + STAT_WORDS_PER_SLOT * slot + 1
        )

    # --- control ---
    async def seed(self, seed: int) -> None:
        await self.wr(Reg.SEED, seed)
        await self.wr(Reg.CTRL, Ctrl.SEED)

    async def set_lfsr_state(self, state: int) -> None:
        """Continue the random stream from `state` (a checkpoint): the seed whose mapped state it is."""
        await self.seed(state ^ LFSR_SEED_XOR)

    async def error(self) -> SeqFault | None:
        if not await self.rd(Reg.STATUS) & Status.ERROR:
            return None
        return SeqFault.decode(await self.rd(Reg.ERROR))

    async def start(self, pc: int, label: int | None = None) -> None:
        if label is not None:
            await self.wr(Reg.LABEL, label)
        await self.wr(Reg.START_PC, pc)
        await self.wr(Reg.CTRL, Ctrl.START)

    async def wait(self, timeout_cycles: int) -> None:
        """Wait (without touching the bus) until the program ends; raises HostError on its error or a timeout.
        The DUT runs free: the only Python wake-up is the done or error edge."""
        dut = self.dut
        if not (int(dut.done.value) or int(dut.error.value)):
            try:
                await with_timeout(
                    First(RisingEdge(dut.done), RisingEdge(dut.error)), timeout_cycles * self.period_ns, "ns"
                )
            except Exception as exc:  # cocotb's SimTimeoutError
                raise HostError(f"program did not finish within {timeout_cycles} cycles") from exc
        err = await self.error()
        if err:
            raise HostError(str(err))

    async def run(self, pc: int, timeout_cycles: int, label: int | None = None) -> None:
        await self.start(pc, label)
        await self.wait(timeout_cycles)

    # --- the sample stream ---
    async def stream_setup(self, base: int, words: int, pc: int) -> None:
        """Frames of `words` sample words go to global element address `base`; each starts the program at `pc`."""
        await self.wr(Reg.STREAM_BASE, base)
        await self.wr(Reg.STREAM_WORDS, words)
        await self.wr(Reg.START_PC, pc)

    async def allow_frames(self, n: int) -> None:
        await self.wr(Reg.STREAM_FRAMES, n)

    async def wait_stream_run(self, timeout_cycles: int) -> None:
        """After the last frame's label beat was taken: wait until its run has started, then until it ends."""
        for _ in range(8):
            if not await self.rd(Reg.STATUS) & Status.STREAM_PENDING:
                break
        else:
            raise HostError("a complete frame did not start its run")
        await self.wait(timeout_cycles)

    async def counters(self) -> dict:
        async def wide(i):
            return await self.rd(i) | await self.rd(i + 1) << 32

        return {
            "cycles": await wide(Reg.CYCLES),
            **{
                f"{u}_cycles": await wide(Reg.RANK_CYCLES if u == "rank" else Reg.UNIT_CYCLES + 2 * k)
                for k, u in enumerate(UNITS)
            },
            "ops": await self.rd(Reg.OPS),
            "sat_total": await self.rd(Reg.SAT_TOTAL),
        }

    async def clear_counters(self) -> None:
        await self.wr(Reg.CTRL, Ctrl.CLEAR_COUNTERS)


def _bits(handle) -> int:
    """A memory word's value from the simulator's bit string (an X or Z raises ValueError, as int(handle.value)
    does): building a LogicArray per word took a third of a co-simulated training run's time in its lock-step
    checks."""
    return int(handle._handle.get_signal_val_binstr(), 2)


class RamWords:
    """The words of one tt_prim_ram (rtl/prim/) through the simulator's hierarchy, as unsigned integers, whatever
    its technology: the generic memory's array, or the block RAMs' storage in their cell models, laid out as
    tt_prim_ram_ecp5 (verif/models/ecp5/DP16KD.v: 1,024 rows of 18 bits) and tt_prim_ram_ice40 (yosys's
    SB_RAM40_4K: 256 rows of 16 bits) place them."""

    def __init__(self, ram):
        self.width, self.depth = int(ram.WIDTH.value), int(ram.DEPTH.value)
        if hasattr(ram, "g_generic"):
            self.tech, mem = "generic", ram.g_generic.u_ram.mem
            self._read = lambda i: _bits(mem[i])
        elif hasattr(ram, "g_ecp5"):
            self.tech = "ecp5"
            mode_w = next(w for w, d in ((18, 1024), (9, 2048), (4, 4096), (2, 8192), (1, 16384)) if self.depth <= d)
            per_row = {18: 1, 9: 2}.get(mode_w, 16 // mode_w)
            tiles = [t.u_bram.u_cell.mem for t in ram.g_ecp5.u_ram.g_tiles.g_tile]  # the banks' memories: one part

            def read(i: int) -> int:
                row, k = divmod(i, per_row)
                lsb = 9 * k if mode_w == 9 else mode_w * k + (mode_w * k) // 8
                return sum(((_bits(t[row]) >> lsb) & ((1 << mode_w) - 1)) << (mode_w * c) for c, t in enumerate(tiles))

            self._read = read
        elif hasattr(ram, "g_ice40"):
            self.tech = "ice40"
            mode = 0 if self.depth <= 256 else 1 if self.depth <= 512 else 2 if self.depth <= 1024 else 3
            mode_w, mw = 16 >> mode, 8 + mode
            cells = [[c.u_bram.memory for c in r.g_col] for r in ram.g_ice40.u_ram.g_row]

            def read(i: int) -> int:
                local = i & ((1 << mw) - 1)
                row, slot = local & 0xFF, local >> 8
                word = 0
                for c, mem in enumerate(cells[i >> mw]):
                    v = _bits(mem[row])
                    word |= sum(((v >> ((16 // mode_w) * j + slot)) & 1) << j for j in range(mode_w)) << (mode_w * c)
                return word

            self._read = read
        else:
            raise ValueError(f"{ram._path}: not a tt_prim_ram of a known technology")

    def __len__(self) -> int:
        return self.depth

    def __getitem__(self, i: int) -> int:
        if not 0 <= i < self.depth:
            raise IndexError(i)
        return self._read(i) & ((1 << self.width) - 1)


class BankCopy:
    """The words of one copy of a tt_bank through the simulator's hierarchy: its columns' block memories
    (rtl/tt_bank.v g_copy[c].g_col[k].g_blk[b].u_ram: word i in column i % VEC, row i / VEC; BLK rows a block but the
    last), read as raw unsigned integers."""

    def __init__(self, bank, copy: int = 0):
        self.columns = [[RamWords(blk.u_ram) for blk in col.g_blk] for col in bank.g_copy[copy].g_col]
        self.blk = len(self.columns[0][0])

    def __getitem__(self, i: int) -> int:
        row = i // len(self.columns)
        return self.columns[i % len(self.columns)][row // self.blk][row % self.blk]


class Backdoor:
    """Reads the data banks through the simulator's hierarchy (rtl/tt_banks.v g_bank[k].u_bank, copy 0)."""

    def __init__(self, dut, params: AccelParams):
        self.copies = [BankCopy(dut.u_banks.g_bank[k].u_bank) for k in range(len(params.banks))]
        self.width = params.bank_width

    def read(self, bank: str, base: int, n: int) -> list[int]:
        k = BANKS.index(bank)
        words, w = self.copies[k], self.width[k]
        return [to_signed(words[base + i], w) for i in range(n)]
