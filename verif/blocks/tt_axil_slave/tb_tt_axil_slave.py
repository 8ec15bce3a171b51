"""pyuvm environment for rtl/tt_axil_slave.v, the AXI4-Lite host interface (cocotbext-axi master on the host
side, verif.axil.BusResponder on the register-bus side).

    workers (coroutines) -> AxilHost (AxiLiteMaster, random pauses on AW/W/B/AR/R) -> tt_axil_slave -> BusResponder
    AxilMonitor (every port, every cycle) --req_ap--> ReqPredictor  --> Scoreboard.expected  (BusItem)
                                          --bus_ap--> Scoreboard.actual (BusItem)
                                                  \\-> RespPredictor --> Scoreboard.expected  (RespItem)
                                          --resp_ap-> Scoreboard.actual (RespItem)
                                          --cov_ap--> AxilCoverage

Checks:
  - Scoreboard (streams per item type and kind, in order): every AXI request becomes exactly one bus
    transaction with the word address, data and strobes of the request (zero data and strobes for a read), and
    every bus transaction exactly one B or R with SLVERR iff bus_err was high at the ack and the ack's rdata;
    nothing missing, nothing extra (a lost or duplicated transaction is a missing or extra item).
  - AxilMonitor, every cycle: bus_req, bus_we, bus_addr, bus_wdata and bus_wstrb stable from req until ack;
    req never without a complete AXI request waiting; req never dropped before ack; B / R valid and payload
    held until ready; the header's timing (req two cycles after a request completes at an idle slave, B / R
    the cycle after the ack: an idle slave with work waiting must start it); when a read and a write were both
    waiting, the kind not started last goes first.
  - The workers: each owns a few words (disjoint, including word 0 and the top word), some of which err; every
    read returns the worker's shadow (strobes applied, erring writes dropped) with SLVERR exactly on erring
    words, every write's bresp likewise; at the end the responder's memory equals every shadow, and the
    responder counted exactly the transactions the workers issued.
  - A hang (no AXI response for HANG_CYCLES) fails the test; the first protocol error ends the stimulus.
  - AxilCoverage: kind x ack delay class x error x stall class (none, request waited for ready, AW and W in
    different cycles, response back-pressured), write order, strobes, kind x contention; fails on any hole.

Tests: AxilRandomTest (phases of 1..5 workers with directed and random stall probabilities, then random phases
until coverage closes), AxilAlternationTest (a write stream and a read stream, both always waiting: the bus
alternates strictly and neither stream starves). numpy and random are seeded from cocotb.RANDOM_SEED.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import cocotb
import pyuvm
from cocotb.triggers import ClockCycles, Event, First, Timer
from pyuvm import ConfigDB, uvm_analysis_port, uvm_factory, uvm_test

from verif.axil import DELAY_CLASSES, OKAY, SLVERR, AxilHost, BusResponder, delay_class, word_init
from verif.uvm import (
    BlockEnv,
    ClockedMonitor,
    Coverage,
    Predictor,
    Scoreboard,
    SeqItem,
    read_hdl_params,
    seeded_rng,
    signal_int,
)

REGION = 8  # words per worker
STALLS = ["none", "req_wait", "split", "resp_wait"]
HANG_CYCLES = 2_000  # no AXI response for this long: hung (a transaction takes well under 100 cycles)


class BusItem(SeqItem):
    """One register-bus transaction (word address). Besides FIELDS an actual one carries rdata, err, delay."""

    FIELDS = ("kind", "addr", "wdata", "wstrb")


class RespItem(SeqItem):
    """One AXI response (B: rdata 0)."""

    FIELDS = ("kind", "resp", "rdata")


# ------------------------------------------------------------------------------------------------------
# Monitor: every port, every cycle
# ------------------------------------------------------------------------------------------------------
class AxilMonitor(ClockedMonitor):
    SIGNALS = (
        "s_axil_awaddr",
        "s_axil_awvalid",
        "s_axil_awready",
        "s_axil_wdata",
        "s_axil_wstrb",
        "s_axil_wvalid",
        "s_axil_wready",
        "s_axil_bresp",
        "s_axil_bvalid",
        "s_axil_bready",
        "s_axil_araddr",
        "s_axil_arvalid",
        "s_axil_arready",
        "s_axil_rdata",
        "s_axil_rresp",
        "s_axil_rvalid",
        "s_axil_rready",
        "bus_req",
        "bus_we",
        "bus_addr",
        "bus_wdata",
        "bus_wstrb",
        "bus_ack",
        "bus_rdata",
        "bus_err",
    )

    def build_phase(self):
        super().build_phase()
        self.req_ap = uvm_analysis_port("req_ap", self)
        self.bus_ap = uvm_analysis_port("bus_ap", self)
        self.resp_ap = uvm_analysis_port("resp_ap", self)
        self.cov_ap = uvm_analysis_port("cov_ap", self)
        self.handles = {n.removeprefix("s_axil_"): getattr(self.dut, n) for n in self.SIGNALS}
        self.errors: list[str] = []
        self.failed = Event()
        self.responses = 0
        self.aw, self.w = [], []  # handshaken, not yet paired: (addr, cycle, waited) / (data, strb, cycle, waited)
        self.wait_start = {}  # request channel -> cycle its valid rose without ready
        self.accepted = {"wr": 0, "rd": 0}
        self.started = {"wr": 0, "rd": 0}
        self.hist = []  # accepted counts after each sample
        self.req_info = {"wr": [], "rd": []}  # per accepted request: stall and order facts for coverage
        self.done = {"wr": [], "rd": []}  # per acked bus transaction: delay, err, contended
        self.cur = None  # bus transaction in progress
        self.last_kind = None
        self.prev_idle_work = False  # last sample: slave idle with a complete request waiting
        self.resp_due = None  # (kind, cycle) a B / R must be valid in
        self.resp_cur = {"wr": None, "rd": None}  # response valid, not yet taken: (first cycle, payload)
        self.contended = {"wr": 0, "rd": 0}
        self.bus_log = []  # kinds in bus order

    def error(self, msg: str) -> None:
        if len(self.errors) < 10:
            self.logger.error(msg)
        self.errors.append(msg)
        self.failed.set()  # ends the stimulus early: after a protocol error the rest only hangs or repeats it

    def sample(self, c: int):
        v = {n: signal_int(h) for n, h in self.handles.items()}
        self._requests(v, c)
        self._bus(v, c)
        self._response(v, c, "wr", "bvalid", "bready", lambda: (v["bresp"], 0))
        self._response(v, c, "rd", "rvalid", "rready", lambda: (v["rresp"], v["rdata"]))
        return None

    def _waited(self, ch: str, valid: int, ready: int, c: int) -> bool:
        """Track valid-without-ready on a request channel; True at a handshake that had to wait."""
        if valid and not ready:
            self.wait_start.setdefault(ch, c)
            return False
        start = self.wait_start.pop(ch, None)
        return bool(valid and ready and start is not None)

    def _requests(self, v, c):
        aw_w = self._waited("aw", v["awvalid"], v["awready"], c)
        w_w = self._waited("w", v["wvalid"], v["wready"], c)
        ar_w = self._waited("ar", v["arvalid"], v["arready"], c)
        if v["awvalid"] and v["awready"]:
            self.aw.append((v["awaddr"], c, aw_w))
        if v["wvalid"] and v["wready"]:
            self.w.append((v["wdata"], v["wstrb"], c, w_w))
        while self.aw and self.w:
            (addr, ca, wa), (data, strb, cw, ww) = self.aw.pop(0), self.w.pop(0)
            self.accepted["wr"] += 1
            order = "same" if ca == cw else "aw_first" if ca < cw else "w_first"
            self.req_info["wr"].append(
                SimpleNamespace(order=order, waited=wa or ww, strobe="full" if strb == 0xF else "partial")
            )
            self.req_ap.write(SimpleNamespace(kind="wr", addr=addr, wdata=data, wstrb=strb))
        if v["arvalid"] and v["arready"]:
            self.accepted["rd"] += 1
            self.req_info["rd"].append(SimpleNamespace(order=None, waited=ar_w, strobe=None))
            self.req_ap.write(SimpleNamespace(kind="rd", addr=v["araddr"], wdata=0, wstrb=0))
        self.hist = self.hist[-2:] + [dict(self.accepted)]

    def _bus(self, v, c):
        # Requests the slave could see in its decision cycle (c - 1): handshaken by sample c - 2.
        seen = self.hist[-3] if len(self.hist) >= 3 else {"wr": 0, "rd": 0}
        waiting = {k: seen[k] - self.started[k] for k in seen}
        if self.prev_idle_work and not v["bus_req"]:
            self.error(f"cycle {c}: slave idle with a request waiting, bus_req not raised (latency 2)")
        if self.resp_due and self.resp_due[1] == c:
            kind = self.resp_due[0]
            if not v["bvalid" if kind == "wr" else "rvalid"]:
                self.error(f"cycle {c}: no {'B' if kind == 'wr' else 'R'} valid the cycle after the ack")
            self.resp_due = None
        if v["bus_req"]:
            snap = (v["bus_we"], v["bus_addr"], v["bus_wdata"], v["bus_wstrb"])
            if None in snap:
                self.error(f"cycle {c}: bus_we/addr/wdata/wstrb not 0/1 with req high: {snap}")
            if self.cur is None:
                kind = "wr" if snap[0] else "rd"
                other = "rd" if kind == "wr" else "wr"
                if waiting[kind] <= 0:
                    self.error(f"cycle {c}: bus {kind} transaction without a complete AXI request waiting")
                contended = waiting[other] > 0
                if contended:
                    self.contended[kind] += 1
                    if self.last_kind == kind:
                        self.error(f"cycle {c}: {kind} started twice in a row while a {other} was waiting")
                self.started[kind] += 1
                self.last_kind = kind
                self.bus_log.append(kind)
                self.cur = SimpleNamespace(kind=kind, snap=snap, start=c, contended=contended)
            elif snap != self.cur.snap:
                self.error(f"cycle {c}: bus request changed before ack: {self.cur.snap} -> {snap}")
            if v["bus_ack"]:
                cur, self.cur = self.cur, None
                we, addr, wdata, wstrb = cur.snap
                item = BusItem("bus")
                item.kind, item.addr, item.wdata, item.wstrb = cur.kind, addr, wdata, wstrb
                item.rdata, item.err, item.delay = v["bus_rdata"], v["bus_err"], c - cur.start
                self.done[cur.kind].append(SimpleNamespace(delay=item.delay, err=item.err, contended=cur.contended))
                self.resp_due = (cur.kind, c + 1)
                self.bus_ap.write(item)
        elif self.cur is not None:
            self.error(f"cycle {c}: bus_req dropped before ack ({self.cur.kind} from cycle {self.cur.start})")
            self.cur = None
        idle = not v["bus_req"] and not v["bvalid"] and not v["rvalid"]
        self.prev_idle_work = (
            idle and any(self.hist[-2][k] - self.started[k] > 0 for k in self.started) if len(self.hist) >= 2 else False
        )

    def _response(self, v, c, kind, valid, ready, payload):
        cur = self.resp_cur[kind]
        if not v[valid]:
            if cur is not None:
                self.error(f"cycle {c}: {valid} dropped before {ready}")
                self.resp_cur[kind] = None
            return
        pay = payload()
        if cur is None:
            cur = self.resp_cur[kind] = (c, pay)
        elif pay != cur[1]:
            self.error(f"cycle {c}: {kind} response changed while waiting for {ready}: {cur[1]} -> {pay}")
        if not v[ready]:
            return
        self.resp_cur[kind] = None
        self.responses += 1
        item = RespItem("resp")
        item.kind, (item.resp, item.rdata) = kind, pay
        self.resp_ap.write(item)
        if self.req_info[kind] and self.done[kind]:
            req, bus = self.req_info[kind].pop(0), self.done[kind].pop(0)
            stall = (
                "resp_wait"
                if c > cur[0]
                else "split"
                if req.order not in (None, "same")
                else "req_wait"
                if req.waited
                else "none"
            )
            self.cov_ap.write(
                SimpleNamespace(
                    kind=kind,
                    delay=delay_class(bus.delay),
                    err=bus.err,
                    stall=stall,
                    order=req.order,
                    strobe=req.strobe,
                    contended="yes" if bus.contended else "no",
                )
            )

    def check_phase(self):
        assert not self.errors, f"{len(self.errors)} protocol errors, first: {self.errors[0]}"


# ------------------------------------------------------------------------------------------------------
# Predictors, scoreboard, coverage
# ------------------------------------------------------------------------------------------------------
class ReqPredictor(Predictor):
    """AXI request -> the bus transaction it must become (word address; zero data and strobes for a read)."""

    def predict(self, req):
        item = BusItem("expected_bus")
        item.kind, item.addr, item.wdata, item.wstrb = req.kind, req.addr >> 2, req.wdata, req.wstrb
        return item


class RespPredictor(Predictor):
    """Bus transaction (at its ack) -> the AXI response it must become."""

    def predict(self, bus):
        item = RespItem("expected_resp")
        item.kind, item.resp = bus.kind, SLVERR if bus.err else OKAY
        item.rdata = bus.rdata if bus.kind == "rd" else 0
        return item


class AxilScoreboard(Scoreboard):
    def key(self, txn):
        return f"{type(txn).__name__}.{txn.kind}"


class AxilCoverage(Coverage):
    def declare(self):
        self.point("kind", lambda s: s.kind, ["wr", "rd"])
        self.point("delay", lambda s: s.delay, list(DELAY_CLASSES))
        self.point("err", lambda s: s.err, [0, 1])
        self.point("stall", lambda s: s.stall, STALLS)
        self.point("write_order", lambda s: s.order, ["same", "aw_first", "w_first"])
        self.point("strobe", lambda s: s.strobe, ["full", "partial"])
        self.point("contended", lambda s: s.contended, ["no", "yes"])
        self.cross(
            "kind_x_delay_x_err_x_stall", ["kind", "delay", "err", "stall"], ignore=[("rd", None, None, "split")]
        )  # a read has one request channel
        self.cross("kind_x_contended", ["kind", "contended"])


class AlternationCoverage(Coverage):
    def declare(self):
        self.point("kind", lambda s: s.kind, ["wr", "rd"])
        self.point("contended", lambda s: s.contended, ["yes"])
        self.cross("kind_x_contended", ["kind", "contended"])


class AxilEnv(BlockEnv):
    """BlockEnv's clock, reset and ConfigDB set-up, with this block's components (no sequencer or driver:
    the stimulus is cocotbext-axi's master, driven by the test's worker coroutines)."""

    HDL_PARAMS = ("ADDR_W", "DATA_W")
    coverage_type = AxilCoverage

    def build_phase(self):
        self.dut = cocotb.top
        self.params = read_hdl_params(self.dut, self.HDL_PARAMS)
        self.clocking = {
            "clock": self.CLOCK,
            "reset": self.RESET,
            "reset_active": self.RESET_ACTIVE,
            "period_ns": self.PERIOD_NS,
            "t0_ns": 0.0,
        }
        ConfigDB().set(None, "*", "DUT", self.dut)
        ConfigDB().set(None, "*", "PARAMS", self.params)
        ConfigDB().set(None, "*", "CLOCKING", self.clocking)
        self.monitor = AxilMonitor.create("monitor", self)
        self.req_predictor = ReqPredictor.create("req_predictor", self)
        self.resp_predictor = RespPredictor.create("resp_predictor", self)
        self.scoreboard = AxilScoreboard.create("scoreboard", self)
        self.coverage = self.coverage_type.create("coverage", self)

    def connect_phase(self):
        m = self.monitor
        m.req_ap.connect(self.req_predictor.analysis_export)
        self.req_predictor.ap.connect(self.scoreboard.expected_export)
        m.bus_ap.connect(self.scoreboard.actual_export)
        m.bus_ap.connect(self.resp_predictor.analysis_export)
        self.resp_predictor.ap.connect(self.scoreboard.expected_export)
        m.resp_ap.connect(self.scoreboard.actual_export)
        m.cov_ap.connect(self.coverage.analysis_export)


# ------------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------------
class AxilTestBase(uvm_test):
    def build_phase(self):
        random.seed(cocotb.RANDOM_SEED)
        self.env = AxilEnv.create("env", self)
        self.failures: list[str] = []

    def fail(self, msg: str) -> None:
        if len(self.failures) < 10:
            self.logger.error(msg)
        self.failures.append(msg)

    def setup(self):
        dut = self.env.dut
        self.params = self.env.params
        self.words = 1 << (self.params.ADDR_W - 2)
        self.rng = seeded_rng(type(self).__name__, "stimulus")
        self.host = AxilHost(dut, dut.clk, dut.rst)
        self.resp = BusResponder(
            dut,
            dut.clk,
            dut.rst,
            seeded_rng(type(self).__name__, "responder"),
            delay=self.draw_delay,
            salt=int(self.rng.integers(0, 1 << 16)),
        )
        self.resp.start()
        self.issued = {"wr": 0, "rd": 0}
        self.shadow: dict[int, int] = {}

    def draw_delay(self) -> int:
        lo, hi = list(DELAY_CLASSES.values())[int(self.rng.integers(0, len(DELAY_CLASSES)))]
        return int(self.rng.integers(lo, hi + 1))

    def expect(self, addr: int) -> int:
        return self.shadow.get(addr, word_init(addr, self.resp.salt))

    async def run_until_done(self, coro) -> None:
        """Await `coro`; a hang (a stuck ready or valid, a lost transaction) becomes a failure, not a stuck
        simulation, and the first protocol error the monitor finds ends the run (check_phase reports it)."""
        task = cocotb.start_soon(coro)
        mon = self.env.monitor
        while not task.done() and not mon.errors:
            seen = mon.responses
            await First(task.complete, mon.failed.wait(), Timer(HANG_CYCLES * self.env.PERIOD_NS, "ns"))
            if not task.done() and not mon.errors and mon.responses == seen:
                self.fail(f"hang: no AXI response for {HANG_CYCLES} cycles (a lost transaction?)")
                break
        if not task.done():
            task.cancel()
            return
        for _ in range(200):  # let the last responses through the monitor
            if self.host.idle():
                break
            await ClockCycles(self.env.clk, 1)
        await ClockCycles(self.env.clk, 8)

    def check_phase(self):
        done = {"wr": self.resp.writes, "rd": self.resp.reads}
        if done != self.issued:
            self.fail(f"bus transactions {done} != AXI transactions issued {self.issued}")
        for addr, want in self.shadow.items():
            got = self.resp.peek(addr)
            if got != want:
                self.fail(f"word {addr:#x}: memory {got:#010x}, want {want:#010x}")
        assert not self.failures, f"{len(self.failures)} failures, first: {self.failures[0]}"


@pyuvm.test()
class AxilRandomTest(AxilTestBase):
    """Phases of concurrent workers under directed stalls, then at least MIN_EXTRA random phases (random
    stalls on every channel, 1..5 workers), more until coverage closes (at most MAX_EXTRA)."""

    MIN_EXTRA, MAX_EXTRA = 12, 40

    def regions(self) -> list[list[int]]:
        """Disjoint REGION-word blocks: word 0, the top word's block, then random ones."""
        blocks = self.words // REGION
        picks = [0, blocks - 1] + [int(b) for b in self.rng.permutation(range(1, blocks - 1))[:4]]
        return [list(range(b * REGION, (b + 1) * REGION)) for b in picks]

    async def worker(self, words: list[int], ops: int) -> None:
        for _ in range(ops):
            addr = int(self.rng.choice(words))
            err = addr in self.resp.err_addrs
            want_resp = SLVERR if err else OKAY
            if self.rng.random() < 0.5:
                value = int(self.rng.integers(0, 1 << 32))
                if self.rng.random() < 0.5:
                    strb = 0xF
                else:
                    lo = int(self.rng.integers(0, 4))
                    n = int(self.rng.integers(1, 5 - lo))
                    strb = ((1 << n) - 1) << lo
                self.issued["wr"] += 1
                resp = await self.host.write32(addr * 4, value, strb)
                if resp != want_resp:
                    self.fail(f"write {addr:#x}: bresp {resp}, want {want_resp}")
                if not err:
                    mask = sum(0xFF << (8 * i) for i in range(4) if strb >> i & 1)
                    self.shadow[addr] = (self.expect(addr) & ~mask) | (value & mask)
            else:
                self.issued["rd"] += 1
                data, resp = await self.host.read32(addr * 4)
                if (data, resp) != (self.expect(addr), want_resp):
                    self.fail(f"read {addr:#x}: ({data:#010x}, {resp}), want ({self.expect(addr):#010x}, {want_resp})")

    async def phase(self, regions, n_workers: int, stalls: dict, ops: int) -> None:
        self.host.set_stalls(self.rng, stalls)
        order = [int(i) for i in self.rng.permutation(len(regions))[:n_workers]]
        tasks = [cocotb.start_soon(self.worker(regions[i], ops)) for i in order]
        for t in tasks:
            await t

    def random_stalls(self) -> dict:
        return {ch: float(self.rng.choice([0.0, 0.1, 0.3, 0.6])) for ch in ("aw", "w", "b", "ar", "r")}

    async def stimulus(self) -> None:
        regions = self.regions()
        for r in regions:  # a quarter of each worker's words err
            self.resp.err_addrs.update(int(a) for a in self.rng.choice(r, size=REGION // 4, replace=False))
        directed = [
            (1, {}, 150),
            (4, {}, 40),
            (3, {"aw": 0.3}, 40),
            (3, {"w": 0.3}, 40),
            (2, {"b": 0.4, "r": 0.4}, 50),
            (5, {"aw": 0.2, "w": 0.2, "b": 0.2, "ar": 0.2, "r": 0.2}, 30),
        ]
        for n, stalls, ops in directed:
            await self.phase(regions, n, stalls, ops)
        cov = self.env.coverage
        for extra in range(self.MAX_EXTRA):
            if extra >= self.MIN_EXTRA and not cov.holes():
                break
            await self.phase(regions, int(self.rng.integers(1, 6)), self.random_stalls(), 30)
        self.logger.info(
            f"{sum(self.issued.values())} transactions ({extra} random phases), "
            f"contended starts {self.env.monitor.contended}"
        )

    async def run_phase(self):
        self.raise_objection()
        self.setup()
        await self.env.start()
        await self.run_until_done(self.stimulus())
        self.drop_objection()


@pyuvm.test()
class AxilAlternationTest(AxilTestBase):
    """N writes and N reads queued at once (AW, W and AR always valid): the bus must alternate strictly
    between the kinds until one runs out, and both streams complete."""

    N = 40

    def build_phase(self):
        uvm_factory().set_type_override_by_type(AxilCoverage, AlternationCoverage)
        super().build_phase()

    async def stimulus(self) -> None:
        words = self.words
        wr = [2 * i for i in range(self.N)]  # writes to even words, reads of odd ones: no ordering between them
        rd = [2 * i + 1 for i in range(self.N)]
        values = [int(v) for v in self.rng.integers(0, 1 << 32, size=self.N)]
        events = []
        for i in range(self.N):
            events.append(("wr", wr[i], self.host.master.init_write(wr[i] * 4, values[i].to_bytes(4, "little"))))
            events.append(("rd", rd[i], self.host.master.init_read(rd[i] * 4, 4)))
        self.issued = {"wr": self.N, "rd": self.N}
        for kind, addr, ev in events:
            await ev.wait()
            r = ev.data
            if int(r.resp) != OKAY:
                self.fail(f"{kind} {addr:#x}: resp {int(r.resp)}")
            if kind == "rd" and int.from_bytes(r.data, "little") != self.expect(addr):
                self.fail(f"read {addr:#x}: {bytes(r.data).hex()}, want {self.expect(addr):#010x}")
        for addr, v in zip(wr, values):
            self.shadow[addr] = v
        assert max(wr + rd) < words

    async def run_phase(self):
        self.raise_objection()
        self.setup()
        await self.env.start()
        await self.run_until_done(self.stimulus())
        log = self.env.monitor.bus_log
        # after the first two starts (the second request may still be on its way), strictly alternating
        body = log[1 : 2 * self.N - 1]
        if any(a == b for a, b in zip(body, body[1:])):
            self.fail(f"bus order does not alternate: {''.join('W' if k == 'wr' else 'R' for k in log)}")
        self.drop_objection()
