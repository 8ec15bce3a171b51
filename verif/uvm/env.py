"""Environment and test bases: DUT parameters from the HDL, clock/reset, driver and monitor timing, wiring.

Timing convention (race-free on Icarus and Verilator):
  - drivers write DUT inputs right after a falling clock edge;
  - monitors sample after a falling edge in the ReadOnly phase, when every input and output has settled to
    the value the next rising edge samples, and stamp each transaction with that rising edge's number (the
    clock's rising edges are numbered 0, 1, ... from BlockEnv.start). So an input and the output it causes
    LATENCY cycles later carry cycle numbers LATENCY apart, whatever the DUT's registers do, a predictor can
    state *when* an output is due and the scoreboard checks timing as well as data.
  - monitors ignore everything until they have seen the reset asserted (Verilator starts
    with random register contents) and every cycle while it is asserted.

Wiring (BlockEnv.connect_phase):
    sequence -> seqr -> driver -> DUT -> output_monitor.ap -> scoreboard.actual_export
                                   \\-> input_monitor.ap -> predictor -> predictor.ap -> scoreboard.expected_export
                                                                                     \\-> coverage
A subclass of BlockEnv names its component classes in the *_type attributes; they are created with
`.create(name, self)` through the pyuvm factory, so a test may override any of them by type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import cocotb
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge
from pyuvm import (
    ConfigDB,
    UVMConfigError,
    uvm_analysis_port,
    uvm_driver,
    uvm_env,
    uvm_monitor,
    uvm_sequence,
    uvm_sequencer,
    uvm_subscriber,
    uvm_test,
)

from verif.uvm.coverage import Coverage
from verif.uvm.scoreboard import Scoreboard


class DutParams(dict):
    """HDL parameters by name, also as attributes (params.LATENCY)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def read_hdl_params(dut, names: Iterable[str]) -> DutParams:
    """Read parameters / localparams from the elaborated HDL (cocotb handles), as Python ints."""
    out = DutParams()
    for n in names:
        try:
            handle = getattr(dut, n)
        except AttributeError:
            raise UVMConfigError(f"{dut._name}: parameter {n} is not visible to cocotb") from None
        out[n] = int(handle.value)
    return out


def signal_int(sig, signed: bool = False) -> int | None:
    """Value of a DUT signal as int, None when it holds X/Z (so monitors report it instead of crashing)."""
    v = sig.value
    if not v.is_resolvable:
        return None
    return v.to_signed() if signed else int(v)


class _Timed:
    """Clock handle, period and cycle numbering shared by drivers and monitors (from ConfigDB "CLOCKING")."""

    def _get_clocking(self):
        self.dut = ConfigDB().get(self, "", "DUT")
        self.clocking = ConfigDB().get(self, "", "CLOCKING")
        self.clk = getattr(self.dut, self.clocking["clock"])
        self.period_ns = self.clocking["period_ns"]

    def cycle(self) -> int:
        """Number of the next rising edge (the clock starts high at clocking["t0_ns"]: rising edges at
        t0 + k * period); called after a falling edge."""
        return int((get_sim_time("ns") - self.clocking["t0_ns"]) // self.period_ns) + 1


class ClockedDriver(uvm_driver, _Timed):
    """Driver base. Subclasses implement drive_idle() and `async drive_item(item)`.

    drive_item is entered right after a falling edge; it writes the inputs of its cycle(s), advancing with
    `await self.next_cycle()`, and must leave after a next_cycle() following its last cycle. The base then
    drives idle and fetches the next item in the same time step, so items the sequence supplies without a
    pause go out on consecutive cycles.
    """

    def build_phase(self):
        self._get_clocking()
        self.params = ConfigDB().get(self, "", "PARAMS")
        self._edge_time = None
        self.items_driven = 0

    def drive_idle(self) -> None:
        raise NotImplementedError

    async def drive_item(self, item) -> None:
        raise NotImplementedError

    async def next_cycle(self) -> None:
        await FallingEdge(self.clk)
        self._edge_time = get_sim_time()

    async def run_phase(self):
        self.drive_idle()
        while True:
            item = await self.seq_item_port.get_next_item()
            if get_sim_time() != self._edge_time:  # not aligned to a falling edge (first item, after a pause)
                await self.next_cycle()
            await self.drive_item(item)
            self.drive_idle()
            self.items_driven += 1
            self.seq_item_port.item_done()


class ClockedMonitor(uvm_monitor, _Timed):
    """Monitor base. Subclasses implement `sample(cycle)` -> transaction or None (nothing this cycle)."""

    def build_phase(self):
        self._get_clocking()
        self.params = ConfigDB().get(self, "", "PARAMS")
        self.rst = getattr(self.dut, self.clocking["reset"])
        self.rst_active = int(self.clocking["reset_active"])
        self.ap = uvm_analysis_port("ap", self)
        self.count = 0

    def sample(self, cycle: int):
        raise NotImplementedError

    async def run_phase(self):
        seen_reset = False
        while True:
            await FallingEdge(self.clk)
            await ReadOnly()
            rst = signal_int(self.rst)
            if rst == self.rst_active:
                seen_reset = True
                continue
            if not seen_reset:
                continue
            txn = self.sample(self.cycle())
            if txn is not None:
                self.count += 1
                self.ap.write(txn)


class Predictor(uvm_subscriber):
    """Golden-model stage: `predict(txn)` returns the expected transaction(s) (one, a list, or None)."""

    def build_phase(self):
        self.ap = uvm_analysis_port("ap", self)
        self.params = ConfigDB().get(self, "", "PARAMS")
        self.count = 0

    def predict(self, txn):
        raise NotImplementedError

    def write(self, txn):
        out = self.predict(txn)
        if out is None:
            return
        for e in out if isinstance(out, (list, tuple)) else (out,):
            self.count += 1
            self.ap.write(e)


class BlockEnv(uvm_env):
    """One clocked interface: sequencer, driver, input/output monitors, predictor, scoreboard, coverage.

    Class attributes to set in a subclass:
      HDL_PARAMS       parameter/localparam names read from the DUT into ConfigDB "PARAMS" (a DutParams)
      CLOCK, RESET, RESET_ACTIVE, PERIOD_NS, RESET_CYCLES
      driver_type, input_monitor_type, output_monitor_type, predictor_type   (required)
      scoreboard_type  (default Scoreboard), coverage_type (None: no functional coverage)
      DRAIN_QUIET      cycles with nothing outstanding that end the drain (default: LATENCY + 4, or 8)
      DRAIN_TIMEOUT    cycles after which the drain gives up (the scoreboard then reports what is missing)
    ConfigDB keys set for every component: "DUT" (cocotb.top), "PARAMS", "CLOCKING".
    """

    HDL_PARAMS: Sequence[str] = ()
    CLOCK, RESET, RESET_ACTIVE, PERIOD_NS, RESET_CYCLES = "clk", "rst", 1, 10, 2
    DRAIN_QUIET: int | None = None
    DRAIN_TIMEOUT = 10_000

    driver_type: type[ClockedDriver] | None = None
    input_monitor_type: type[ClockedMonitor] | None = None
    output_monitor_type: type[ClockedMonitor] | None = None
    predictor_type: type[Predictor] | None = None
    scoreboard_type: type[Scoreboard] = Scoreboard
    coverage_type: type[Coverage] | None = None

    def build_phase(self):
        self.dut = cocotb.top
        self.params = read_hdl_params(self.dut, self.HDL_PARAMS)
        self.logger.info("HDL parameters: " + ", ".join(f"{k}={v}" for k, v in self.params.items()))
        clocking = {
            "clock": self.CLOCK,
            "reset": self.RESET,
            "reset_active": self.RESET_ACTIVE,
            "period_ns": self.PERIOD_NS,
            "t0_ns": 0.0,
        }
        ConfigDB().set(None, "*", "DUT", self.dut)
        ConfigDB().set(None, "*", "PARAMS", self.params)
        ConfigDB().set(None, "*", "CLOCKING", clocking)
        self.clocking = clocking
        for attr in ("driver_type", "input_monitor_type", "output_monitor_type", "predictor_type"):
            if getattr(self, attr) is None:
                raise UVMConfigError(f"{type(self).__name__}.{attr} is not set")
        self.seqr = uvm_sequencer("seqr", self)
        ConfigDB().set(None, "*", "SEQR", self.seqr)
        self.driver = self.driver_type.create("driver", self)
        self.input_monitor = self.input_monitor_type.create("input_monitor", self)
        self.output_monitor = self.output_monitor_type.create("output_monitor", self)
        self.predictor = self.predictor_type.create("predictor", self)
        self.scoreboard = self.scoreboard_type.create("scoreboard", self)
        self.coverage = self.coverage_type.create("coverage", self) if self.coverage_type else None

    def connect_phase(self):
        self.driver.seq_item_port.connect(self.seqr.seq_item_export)
        self.input_monitor.ap.connect(self.predictor.analysis_export)
        self.predictor.ap.connect(self.scoreboard.expected_export)
        self.output_monitor.ap.connect(self.scoreboard.actual_export)
        if self.coverage is not None:
            self.predictor.ap.connect(self.coverage.analysis_export)

    # --- run-time services for the test --------------------------------------------------------------
    @property
    def clk(self):
        return getattr(self.dut, self.CLOCK)

    async def start(self) -> None:
        """Start the clock, hold reset RESET_CYCLES rising edges, release it after a falling edge."""
        self.clocking["t0_ns"] = get_sim_time("ns")
        Clock(self.clk, self.PERIOD_NS, unit="ns").start(start_high=True)
        rst = getattr(self.dut, self.RESET)
        rst.value = self.RESET_ACTIVE
        await ClockCycles(self.clk, self.RESET_CYCLES)
        await FallingEdge(self.clk)
        rst.value = 1 - self.RESET_ACTIVE

    async def drain(self) -> None:
        """Wait until every predicted output has appeared and nothing more comes for DRAIN_QUIET cycles."""
        quiet_needed = self.DRAIN_QUIET if self.DRAIN_QUIET is not None else int(self.params.get("LATENCY", 4)) + 4
        quiet = 0
        for _ in range(self.DRAIN_TIMEOUT):
            await RisingEdge(self.clk)
            quiet = quiet + 1 if self.scoreboard.outstanding() <= 0 else 0
            if quiet >= quiet_needed:
                return
        self.logger.warning(
            f"drain: {self.scoreboard.outstanding()} transactions still outstanding after {self.DRAIN_TIMEOUT} cycles"
        )


class BlockTest(uvm_test):
    """Test base: build `env_type`, then in run_phase start clock + reset, run `sequence_type` on the env's
    sequencer and drain. Variants override the sequence (or any env component) through the pyuvm factory in
    their build_phase before calling super().build_phase(), e.g.
        uvm_factory().set_type_override_by_type(RandomSeq, CornerSeq)
    """

    env_type: type[BlockEnv] | None = None
    sequence_type: type[uvm_sequence] | None = None

    def build_phase(self):
        if self.env_type is None or self.sequence_type is None:
            raise UVMConfigError(f"{type(self).__name__}: env_type and sequence_type must be set")
        self.env = self.env_type.create("env", self)

    async def run_phase(self):
        self.raise_objection()
        await self.env.start()
        seq = self.sequence_type.create("main_seq")  # factory: a test's override takes effect here
        self.logger.info(f"running sequence {type(seq).__name__}")
        await seq.start(self.env.seqr)
        await self.env.drain()
        self.drop_objection()
