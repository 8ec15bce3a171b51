"""Reusable host-side pieces for AXI4-Lite tests (rtl/tt_axil_slave.v now, the accelerator's top level later).

  AxilHost      cocotbext-axi AxiLiteMaster on the `s_axil` ports with 32-bit helpers (write32 with byte
                strobes, read32) and seeded random stalls on each of the five channels (set_stalls)
  pauses        an endless seeded pause pattern for cocotbext-axi's set_pause_generator: bursts of pause
                cycles, so both short and long stalls occur
  BusResponder  the register-bus side of tt_axil_slave (bus_req / bus_we / bus_addr / bus_wdata / bus_wstrb ->
                bus_ack / bus_rdata / bus_err): a sparse word memory with byte-strobe writes, a random ack delay
                per transaction (0 = ack in the cycle req rises), bus_err on chosen word addresses (an erring
                write changes nothing), junk on rdata / err while ack is low
  word_init     the deterministic contents of a never-written word, so a test's shadow memory needs no copy

Timing: BusResponder drives right after each falling edge (the DUT samples at the rising edge), as the
verif/uvm drivers do. Randomness comes from numpy Generators the caller seeds (verif.uvm.seeded_rng).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator

import cocotb
import numpy as np
from cocotb.task import Task
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

MASK32 = 0xFFFF_FFFF
CHANNELS = ("aw", "w", "b", "ar", "r")
# Ack delay classes (cycles after the first req cycle); a test draws the class, then a delay in it.
DELAY_CLASSES = {"0": (0, 0), "1": (1, 1), "2-3": (2, 3), "4-8": (4, 8)}


def delay_class(d: int) -> str:
    for name, (lo, hi) in DELAY_CLASSES.items():
        if lo <= d <= hi:
            return name
    return "long"


def word_init(addr: int, salt: int = 0) -> int:
    """Contents of a word nobody has written: a fixed mix of its address (and a per-test salt)."""
    x = (addr * 0x9E37_79B1 + salt * 0x85EB_CA6B + 0x1234_5678) & MASK32
    x ^= x >> 15
    return (x * 0x2C1B_3C6D) & MASK32


def apply_strobes(old: int, data: int, strb: int) -> int:
    mask = sum(0xFF << (8 * i) for i in range(4) if strb >> i & 1)
    return (old & ~mask & MASK32) | (data & mask)


def pauses(rng: np.random.Generator, p: float, max_run: int = 6) -> Iterator[bool]:
    """Endless pause pattern: each cycle a pause run of 1..max_run cycles starts with probability p."""
    while True:
        if p > 0 and rng.random() < p:
            for _ in range(int(rng.integers(1, max_run + 1))):
                yield True
        else:
            yield False


class AxilHost:
    """cocotbext-axi AxiLiteMaster on `prefix`_* with 32-bit word helpers and per-channel random stalls."""

    def __init__(self, dut, clk, rst, prefix: str = "s_axil", log_level: int = logging.WARNING):
        self.master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, prefix), clk, rst, reset_active_level=True)
        self.clk = clk
        self.stalled: dict[str, int] | None = None
        for itf in (self.master.write_if, self.master.read_if):
            itf.log.setLevel(log_level)
        m = self.master
        self.channels = {
            "aw": m.write_if.aw_channel,
            "w": m.write_if.w_channel,
            "b": m.write_if.b_channel,
            "ar": m.read_if.ar_channel,
            "r": m.read_if.r_channel,
        }

    def set_stalls(self, rng: np.random.Generator, probs: dict[str, float]) -> None:
        """Pause each channel in `probs` (aw/w/ar: valid held low, b/r: ready held low) with that probability;
        channels not named run without pauses. From the first call on, `stalled` counts per channel the cycles
        a pause held back a transfer that was ready to go (aw/w/ar: a request queued, valid low; b/r: the
        slave's valid high, ready low), so a test can prove its stalls happened."""
        if self.stalled is None:
            self.stalled = dict.fromkeys(self.channels, 0)
            cocotb.start_soon(self._count_stalls(self.stalled))
        for name, ch in self.channels.items():
            p = probs.get(name, 0.0)
            ch.set_pause_generator(pauses(rng, p) if p > 0 else None)
            if p == 0:
                ch.pause = False  # a generator stopped mid-run leaves the channel paused

    async def _count_stalls(self, stalled: dict[str, int]) -> None:
        while True:
            await RisingEdge(self.clk)
            for name, ch in self.channels.items():
                if ch.pause and (ch.count() > 0 if name in ("aw", "w", "ar") else ch.valid.value == 1):
                    stalled[name] += 1

    async def write32(self, addr: int, value: int, strb: int = 0xF) -> int:
        """Write the strobed bytes of `value` to the word at byte address `addr` (aligned); returns bresp.
        cocotbext-axi forms the strobes from the byte offset and length, so `strb` must be contiguous."""
        assert addr % 4 == 0 and 0 < strb <= 0xF
        lo = (strb & -strb).bit_length() - 1
        n = bin(strb).count("1")
        assert strb == ((1 << n) - 1) << lo, f"non-contiguous strobes {strb:#x}"
        data = (value >> (8 * lo)).to_bytes(4, "little")[:n]
        resp = await self.master.write(addr + lo, data)
        return int(resp.resp)

    async def read32(self, addr: int) -> tuple[int, int]:
        """(data, rresp) of the word at byte address `addr` (aligned)."""
        assert addr % 4 == 0
        resp = await self.master.read(addr, 4)
        return int.from_bytes(resp.data, "little"), int(resp.resp)

    def idle(self) -> bool:
        return self.master.idle()


OKAY, SLVERR = int(AxiResp.OKAY), int(AxiResp.SLVERR)


class BusResponder:
    """Bus-side model of the register file / memory windows behind tt_axil_slave.

    mem: word address -> 32-bit value (missing words read as word_init(addr, salt)). delay(): the ack delay
    of the next transaction in cycles after its first req cycle. err_addrs: word addresses that answer with
    bus_err (an erring write leaves the word unchanged; an erring read still returns the word). While ack is
    low, bus_rdata and bus_err carry junk (the DUT must take them only in the ack cycle). Counts of completed
    transactions are kept per kind; `log` (when a list) records (we, addr, wdata, wstrb, rdata, err, delay).
    """

    def __init__(
        self,
        dut,
        clk,
        rst,
        rng: np.random.Generator,
        delay: Callable[[], int] | None = None,
        err_addrs: Iterable[int] = (),
        salt: int = 0,
        prefix: str = "bus_",
    ):
        self.dut, self.clk, self.rst, self.rng = dut, clk, rst, rng
        self.delay = delay or (lambda: 0)
        self.err_addrs = set(err_addrs)
        self.salt = salt
        self.mem: dict[int, int] = {}
        self.sig = {n: getattr(dut, prefix + n) for n in ("req", "we", "addr", "wdata", "wstrb", "ack", "rdata", "err")}
        self.writes = self.reads = self.errors = 0
        self.log: list | None = None
        self._delay = 0  # the ack delay drawn for the transaction in progress
        self._task: Task[None] | None = None

    def peek(self, addr: int) -> int:
        return self.mem.get(addr, word_init(addr, self.salt))

    def start(self) -> None:
        self._idle()
        self._task = cocotb.start_soon(self._run())

    def _idle(self) -> None:
        s = self.sig
        s["ack"].value = 0
        s["rdata"].value = int(self.rng.integers(0, 1 << 32))
        s["err"].value = int(self.rng.integers(0, 2))

    async def _run(self) -> None:
        s = self.sig
        wait = None  # cycles left before the ack of the transaction in progress (None: none in progress)
        acked = False
        while True:
            await FallingEdge(self.clk)
            if acked:  # the previous cycle's ack ended that transaction; a req now is a new one
                wait, acked = None, False
            if str(self.rst.value) != "0" or str(s["req"].value) != "1":
                wait = None
                self._idle()
                continue
            if wait is None:
                wait = self.delay()
                self._delay = wait
            if wait > 0:
                wait -= 1
                self._idle()
                continue
            we, addr = int(s["we"].value), int(s["addr"].value)
            err = addr in self.err_addrs
            rdata = self.peek(addr)
            wdata = wstrb = 0
            if we:
                wdata, wstrb = int(s["wdata"].value), int(s["wstrb"].value)
                if not err:
                    self.mem[addr] = apply_strobes(rdata, wdata, wstrb)
                self.writes += 1
                rdata = int(self.rng.integers(0, 1 << 32))  # no read data on a write
            else:
                self.reads += 1
            self.errors += err
            if self.log is not None:
                self.log.append((we, addr, wdata, wstrb, rdata, int(err), self._delay))
            s["ack"].value = 1
            s["rdata"].value = rdata
            s["err"].value = int(err)
            acked = True
