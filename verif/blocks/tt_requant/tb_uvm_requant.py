"""pyuvm environment for rtl/tt_requant.v (SPEC section 2), built on the reusable pieces in verif/uvm/.

    RequantRandomSeq / RequantCornerSeq / RequantStressSeq  ->  seqr  ->  RequantDriver  ->  tt_requant
    RequantInMonitor  -> RequantPredictor (golden.fxp) -> Scoreboard.expected_export, RequantCoverage
    RequantOutMonitor ---------------------------------> Scoreboard.actual_export

One transaction is one cycle of the DUT's LANES lanes: RequantItem (acc, shift, mode, rnd per lane, plus the
idle cycles the driver inserts before it) in, RequantResult (y, sat, shift_err per lane, and the cycle it
appeared) out. The predictor computes every expected value with golden.fxp (round_shift + saturate, via
requantize when ACC_W is the golden 48 bits; check_shift decides shift_err, whose y = sat = 0 is the RTL's
documented contract) and due cycle = input cycle + LATENCY, LATENCY read from the HDL, so the scoreboard
checks timing as well as data.

Tests (pyuvm factory variants of one test):
  RequantRandomTest   coverage-shaped random stimulus with random idle cycles (junk data while invalid)
  RequantCornerTest   overrides RequantRandomSeq with RequantCornerSeq: accumulator extremes, zero, +-1, ties,
                      saturation edges, shifts -16/0/47 and out-of-range ones, for both modes
  RequantStressTest   overrides it with RequantStressSeq: back to back, no idle cycle (checked)
  RequantCoverageHoleDemo  skip=True, run only by name: nearest mode only, must FAIL the coverage check
                      (verif/blocks/tt_requant/test_uvm_requant.py runs it to prove the check can fail)
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pyuvm
from pyuvm import ConfigDB, uvm_factory, uvm_sequence

from golden import fxp
from verif.lanes import pack, unpack
from verif.uvm import (
    BlockEnv,
    BlockTest,
    ClockedDriver,
    ClockedMonitor,
    Coverage,
    Predictor,
    SeqItem,
    current_test_name,
    seeded_rng,
    signal_int,
)

SHIFT_W = 7  # width of each lane's signed shift field
MODES = {fxp.NEAREST: "nearest", fxp.STOCHASTIC: "stochastic"}
SHIFT_CLASSES = {  # class -> the shifts in it (the 7-bit field holds -64..63)
    "negative": list(range(fxp.SHIFT_MIN, 0)),
    "zero": [0],
    "1..7": list(range(1, 8)),
    "8": [8],
    "9..47": list(range(9, fxp.SHIFT_MAX + 1)),
    "out_of_range": [
        s for s in range(-(1 << (SHIFT_W - 1)), 1 << (SHIFT_W - 1)) if not fxp.SHIFT_MIN <= s <= fxp.SHIFT_MAX
    ],
}
OUTCOMES = ["exact", "rounded", "sat_hi", "sat_lo", "shift_err"]


def shift_class(s: int) -> str:
    if not fxp.SHIFT_MIN <= s <= fxp.SHIFT_MAX:
        return "out_of_range"
    return "negative" if s < 0 else "zero" if s == 0 else "1..7" if s < 8 else "8" if s == 8 else "9..47"


def golden_lane(acc: int, shift: int, mode: int, rnd: int, acc_w: int, fmt: fxp.Fmt) -> tuple[int, int, int]:
    """(y, sat, shift_err) of one element, from golden.fxp only."""
    try:
        fxp.check_shift(shift)
    except ValueError:
        return 0, 0, 1  # illegal op: the RTL raises shift_err with y = 0 and sat = 0 (rtl/tt_requant.v header)
    a = np.array([acc], dtype=np.int64)
    r = np.array([rnd], dtype=np.int64) if mode == fxp.STOCHASTIC else None
    if acc_w == fxp.ACC_W:
        y, n_sat = fxp.requantize(a, shift, mode, fmt, r)
    else:  # requantize checks the golden 48-bit accumulator range; a narrower ACC_W is always inside it
        y, n_sat = fxp.saturate(fxp.round_shift(a, shift, mode, r), fmt)
    return int(y[0]), int(n_sat > 0), 0


# ------------------------------------------------------------------------------------------------------
# Transactions
# ------------------------------------------------------------------------------------------------------
class RequantItem(SeqItem):
    """One input cycle: per-lane lists acc, shift, mode, rnd; idle_before = invalid cycles the driver inserts
    first; cycle = the cycle the input monitor saw it (None for items from a sequence)."""

    FIELDS = ("acc", "shift", "mode", "rnd")

    def __init__(self, name="requant_item"):
        super().__init__(name)
        self.idle_before = 0
        self.cycle = None

    def do_randomize(self, rng, params=None, max_idle=3):
        p = params
        elems = [random_element(rng, p.ACC_W, p.OUT_W) for _ in range(p.LANES)]
        self.set_lanes(elems)
        self.idle_before = 0 if max_idle == 0 or rng.random() < 0.5 else int(rng.integers(1, max_idle + 1))

    def set_lanes(self, elems):
        self.acc, self.shift, self.mode, self.rnd = (list(x) for x in zip(*elems))

    def lanes(self):
        return list(zip(self.acc, self.shift, self.mode, self.rnd))

    def __str__(self):
        return f"{super().__str__()}@cycle {self.cycle}"


class RequantResult(SeqItem):
    """One output cycle: per-lane y, sat, shift_err and the cycle it appears; `inp` = the input it came from
    (predicted results only; not compared)."""

    FIELDS = ("cycle", "y", "sat", "shift_err")

    def __init__(self, name="requant_result"):
        super().__init__(name)
        self.inp = None

    def __str__(self):
        return super().__str__() + (f" <- {self.inp}" if self.inp is not None else "")


# ------------------------------------------------------------------------------------------------------
# Stimulus
# ------------------------------------------------------------------------------------------------------
# Shift class weights of the random stimulus: every class is common, whatever its size.
CLASS_WEIGHTS = {"negative": 0.17, "zero": 0.14, "1..7": 0.18, "8": 0.15, "9..47": 0.26, "out_of_range": 0.10}
_CLASS_CUM = np.cumsum(list(CLASS_WEIGHTS.values()))
_CLASS_SHIFTS = [SHIFT_CLASSES[c] for c in CLASS_WEIGHTS]


def random_element(rng: np.random.Generator, acc_w: int, out_w: int) -> tuple[int, int, int, int]:
    """(acc, shift, mode, rnd) drawn so that every shift class meets every reachable outcome often:
    magnitudes spread over all bit widths, plus aligned values (exact), ties and saturation edges.
    (Scalar draws only: numpy's choice() with weights costs ~20 us a call.)"""
    acc_min, acc_max = -(1 << (acc_w - 1)), (1 << (acc_w - 1)) - 1
    qmin, qmax = -(1 << (out_w - 1)), (1 << (out_w - 1)) - 1
    u = rng.random(3)
    shifts = _CLASS_SHIFTS[
        min(int(np.searchsorted(_CLASS_CUM, u[0] * _CLASS_CUM[-1], side="right")), len(_CLASS_SHIFTS) - 1)
    ]
    s = shifts[int(u[1] * len(shifts))]
    sl = min(max(s, fxp.SHIFT_MIN), fxp.SHIFT_MAX)  # the legal shift the value is shaped for
    bits = int(rng.integers(1, acc_w + 1))
    acc = int(rng.integers(-(1 << (bits - 1)), 1 << (bits - 1))) if bits > 1 else -int(u[1] < 0.5)
    kind = u[2]
    if kind < 0.2 and sl > 0:  # aligned: nothing below the kept LSB
        acc = (acc >> sl) << sl
    elif kind < 0.3 and sl > 0:  # nearest-rounding tie
        acc = ((acc >> sl) << sl) + (1 << (sl - 1))
    elif kind < 0.45:  # near a saturation edge
        q = (qmax, qmax + 1, qmin, qmin - 1)[int(rng.integers(4))]
        if sl > 0:
            acc = (q << sl) + int(rng.integers(-(1 << (sl - 1)), 1 << (sl - 1)))
        else:
            acc = (q >> -sl) + int(rng.integers(-1, 2))
    acc = min(max(acc, acc_min), acc_max)
    mr = int(rng.integers(512))
    return acc, s, mr >> 8, mr & 0xFF


def corner_elements(p, rng: np.random.Generator) -> list[tuple[int, int, int, int]]:
    """Accumulator extremes, zero, +-1, ties and values at the saturation edges, for the corner shifts
    (-16, -OUT_W, -1, 0, 1, 2, 7, 8, 9, OUT_W, 46, 47 and out-of-range -17, 48, -64, 63), both modes and
    the extreme random bytes."""
    acc_min, acc_max = -(1 << (p.ACC_W - 1)), (1 << (p.ACC_W - 1)) - 1
    qmin, qmax = -(1 << (p.OUT_W - 1)), (1 << (p.OUT_W - 1)) - 1
    illegal = [fxp.SHIFT_MIN - 1, fxp.SHIFT_MAX + 1, -(1 << (SHIFT_W - 1)), (1 << (SHIFT_W - 1)) - 1]
    shifts = [fxp.SHIFT_MIN, -p.OUT_W, -1, 0, 1, 2, 7, 8, 9, p.OUT_W, fxp.SHIFT_MAX - 1, fxp.SHIFT_MAX] + illegal
    elems: list[tuple[int, int, int, int]] = []
    for s in dict.fromkeys(shifts):
        sl = min(max(s, fxp.SHIFT_MIN), fxp.SHIFT_MAX)
        accs = {acc_min, acc_max, 0, 1, -1, acc_min + 1, acc_max - 1}
        for q in (qmax, qmax + 1, qmin, qmin - 1, 0, -1, 1):
            if sl > 0:
                base, half = q << sl, 1 << (sl - 1)
                accs |= {base, base - 1, base + half, base + half - 1, base - half, base - half - 1}
            else:
                base = q >> -sl
                accs |= {base, base + 1, base - 1}
        for acc in sorted(a for a in accs if acc_min <= a <= acc_max):
            for mode in (fxp.NEAREST, fxp.STOCHASTIC):
                rnds = (0x80,) if mode == fxp.NEAREST else (0, 0x7F, 0x80, 0xFF, int(rng.integers(256)))
                elems.extend((acc, s, mode, r) for r in rnds)
    rng.shuffle(elems)
    return elems


class RequantRandomSeq(uvm_sequence):
    """N_ELEMENTS random elements in items of LANES, each item after 0..MAX_IDLE idle cycles."""

    N_ELEMENTS = 2400
    MAX_IDLE = 3

    def params(self):
        return ConfigDB().get(None, "", "PARAMS")

    def rng(self):
        return seeded_rng(current_test_name(), type(self).__name__)

    async def body(self):
        p = self.params()
        for i in range(math.ceil(self.N_ELEMENTS / p.LANES)):
            item = RequantItem.create(f"item{i}")
            await self.start_item(item)
            item.randomize(params=p, max_idle=self.MAX_IDLE)  # the item class's stream for this test
            await self.finish_item(item)


class RequantStressSeq(RequantRandomSeq):
    """Back to back: no idle cycle between items."""

    N_ELEMENTS = 3000
    MAX_IDLE = 0


class RequantCornerSeq(RequantRandomSeq):
    """Every corner element once, LANES per item; about a third of the items follow 1..2 idle cycles."""

    async def body(self):
        p, rng = self.params(), self.rng()
        elems = corner_elements(p, rng)
        elems += [(0, 0, 0, 0)] * (-len(elems) % p.LANES)
        for i in range(0, len(elems), p.LANES):
            item = RequantItem.create(f"corner{i // p.LANES}")
            await self.start_item(item)
            item.set_lanes(elems[i : i + p.LANES])
            item.idle_before = int(rng.integers(1, 3)) if rng.random() < 0.3 else 0
            await self.finish_item(item)


class RequantNearestOnlySeq(RequantRandomSeq):
    """Deliberately weak stimulus (never STOCHASTIC): the coverage check must fail on it."""

    N_ELEMENTS = 400

    async def body(self):
        p = self.params()
        for i in range(math.ceil(self.N_ELEMENTS / p.LANES)):
            item = RequantItem.create(f"item{i}")
            await self.start_item(item)
            item.randomize(params=p, max_idle=self.MAX_IDLE)
            item.mode = [fxp.NEAREST] * p.LANES
            await self.finish_item(item)


# ------------------------------------------------------------------------------------------------------
# Driver, monitors, predictor, coverage
# ------------------------------------------------------------------------------------------------------
class RequantDriver(ClockedDriver):
    """Drives in_valid/acc/shift/mode/rnd at the falling edge; idle cycles carry random junk data."""

    def build_phase(self):
        super().build_phase()
        self.junk = seeded_rng(current_test_name(), self.get_full_name())
        self._started = False

    def _drive(self, valid: int, elems) -> None:
        d, p = self.dut, self.params
        d.in_valid.value = valid
        d.acc.value = pack([e[0] for e in elems], p.ACC_W)
        d.shift.value = pack([e[1] for e in elems], SHIFT_W)
        d.mode.value = pack([e[2] for e in elems], 1)
        d.rnd.value = pack([e[3] for e in elems], 8)

    def _junk_bits(self, n: int) -> int:
        return int.from_bytes(self.junk.bytes((n + 7) // 8), "little") & ((1 << n) - 1)

    def drive_idle(self) -> None:
        if not self._started:  # defined (zero) data before the first item
            self._drive(0, [(0, 0, 0, 0)] * self.params.LANES)
            self._started = True
        else:
            self.dut.in_valid.value = 0

    async def drive_item(self, item: RequantItem) -> None:
        p = self.params
        d = self.dut
        for _ in range(item.idle_before):  # junk that must be ignored: random bits in every field
            d.in_valid.value = 0
            d.acc.value = self._junk_bits(p.ACC_W * p.LANES)
            d.shift.value = self._junk_bits(SHIFT_W * p.LANES)
            d.mode.value = self._junk_bits(p.LANES)
            d.rnd.value = self._junk_bits(8 * p.LANES)
            await self.next_cycle()
        self._drive(1, item.lanes())
        await self.next_cycle()


class RequantInMonitor(ClockedMonitor):
    """Every accepted input cycle (in_valid high, reset low) as a RequantItem stamped with its cycle."""

    def build_phase(self):
        super().build_phase()
        self.cycles: list[int] = []

    def sample(self, cycle):
        d, p = self.dut, self.params
        valid = signal_int(d.in_valid)
        assert valid is not None, f"cycle {cycle}: in_valid is X/Z after reset (testbench bug)"
        if not valid:
            return None
        item = RequantItem("in")
        item.set_lanes(
            zip(
                unpack(int(d.acc.value), p.ACC_W, p.LANES, True),
                unpack(int(d.shift.value), SHIFT_W, p.LANES, True),
                unpack(int(d.mode.value), 1, p.LANES, False),
                unpack(int(d.rnd.value), 8, p.LANES, False),
            )
        )
        item.cycle = cycle
        self.cycles.append(cycle)
        return item


class RequantOutMonitor(ClockedMonitor):
    """Every output cycle with out_valid high (or X/Z: reported, so the scoreboard flags it)."""

    def sample(self, cycle):
        d, p = self.dut, self.params
        valid = signal_int(d.out_valid)
        if valid == 0:
            return None
        res = RequantResult("out")
        res.cycle = cycle

        def lanes(sig, width, signed):
            v = signal_int(sig)
            return None if v is None else unpack(v, width, p.LANES, signed)

        if valid is None:  # X/Z valid: a transaction of unknowns, never equal to a prediction
            res.y = res.sat = res.shift_err = "X"
        else:
            res.y, res.sat, res.shift_err = (
                lanes(d.y, p.OUT_W, True),
                lanes(d.sat, 1, False),
                lanes(d.shift_err, 1, False),
            )
        return res


class RequantPredictor(Predictor):
    def build_phase(self):
        super().build_phase()
        p = self.params
        assert p.ACC_W <= fxp.ACC_W, f"ACC_W={p.ACC_W}: the golden model computes in int64 up to {fxp.ACC_W} bits"
        self.fmt = fxp.Fmt(p.OUT_W, 0)

    def predict(self, item: RequantItem) -> RequantResult:
        p = self.params
        res = RequantResult("expected")
        lanes = [golden_lane(a, s, m, r, p.ACC_W, self.fmt) for a, s, m, r in item.lanes()]
        res.y, res.sat, res.shift_err = (list(x) for x in zip(*lanes))
        res.cycle = item.cycle + p.LATENCY
        res.inp = item
        return res


def outcome(acc: int, shift: int, y: int, sat: int, err: int, fmt: fxp.Fmt) -> str:
    if err:
        return "shift_err"
    if sat:
        return "sat_hi" if y == fmt.qmax else "sat_lo"
    return "exact" if shift <= 0 or acc % (1 << shift) == 0 else "rounded"


def reachable(p, mode: int, cls: str) -> set[str]:
    """Outcomes a (mode, shift class) can produce for these HDL parameters (decided with golden.fxp at the
    class's most favourable shift: the most negative one, or the smallest positive one)."""
    if cls == "out_of_range":
        return {"shift_err"}
    fmt = fxp.Fmt(p.OUT_W, 0)
    s = SHIFT_CLASSES[cls][0]
    acc_min, acc_max = -(1 << (p.ACC_W - 1)), (1 << (p.ACC_W - 1)) - 1

    def rq(acc, r):
        return int(fxp.round_shift(np.array([acc]), s, mode, np.array([r]) if mode == fxp.STOCHASTIC else None)[0])

    out = {"exact"}
    if s > 0:
        out.add("rounded")
    if rq(acc_max, 0xFF) > fmt.qmax:
        out.add("sat_hi")
    if rq(acc_min, 0) < fmt.qmin:
        out.add("sat_lo")
    return out


class RequantCoverage(Coverage):
    """mode, shift class and outcome per lane; crosses mode x shift class and mode x shift class x outcome
    (bins unreachable for the HDL parameters are ignored)."""

    def declare(self):
        p = self.params
        self.fmt = fxp.Fmt(p.OUT_W, 0)
        reach = {(m, c): reachable(p, m, c) for m in MODES for c in SHIFT_CLASSES}
        outcomes = [o for o in OUTCOMES if any(o in r for r in reach.values())]
        self.point("mode", lambda s: s.mode, list(MODES.values()))
        self.point("shift_class", lambda s: s.shift_class, list(SHIFT_CLASSES))
        self.point("outcome", lambda s: s.outcome, outcomes)
        self.cross("mode_x_shift_class", ["mode", "shift_class"])
        self.cross(
            "mode_x_shift_class_x_outcome",
            ["mode", "shift_class", "outcome"],
            ignore=[(MODES[m], c, o) for (m, c), r in reach.items() for o in outcomes if o not in r],
        )

    def samples(self, res: RequantResult):
        inp = res.inp
        for lane, (acc, s, m, _) in enumerate(inp.lanes()):
            yield SimpleNamespace(
                mode=MODES[m],
                shift_class=shift_class(s),
                outcome=outcome(acc, s, res.y[lane], res.sat[lane], res.shift_err[lane], self.fmt),
            )


# ------------------------------------------------------------------------------------------------------
# Environment and tests
# ------------------------------------------------------------------------------------------------------
class RequantEnv(BlockEnv):
    HDL_PARAMS = ("ACC_W", "OUT_W", "LANES", "LATENCY")
    driver_type = RequantDriver
    input_monitor_type = RequantInMonitor
    output_monitor_type = RequantOutMonitor
    predictor_type = RequantPredictor
    coverage_type = RequantCoverage


@pyuvm.test()
class RequantRandomTest(BlockTest):
    env_type = RequantEnv
    sequence_type = RequantRandomSeq


@pyuvm.test()
class RequantCornerTest(RequantRandomTest):
    def build_phase(self):
        uvm_factory().set_type_override_by_type(RequantRandomSeq, RequantCornerSeq)
        super().build_phase()


@pyuvm.test()
class RequantStressTest(RequantRandomTest):
    def build_phase(self):
        uvm_factory().set_type_override_by_type(RequantRandomSeq, RequantStressSeq)
        super().build_phase()

    def check_phase(self):
        cycles = self.env.input_monitor.cycles
        gaps = [(a, b) for a, b in zip(cycles, cycles[1:]) if b != a + 1]
        assert cycles and not gaps, f"stress test: inputs not back to back, gaps after cycles {gaps[:10]}"
        self.logger.info(f"stress: {len(cycles)} input cycles back to back")


@pyuvm.test(skip=True)
class RequantCoverageHoleDemo(RequantRandomTest):
    """Run by name only; must fail in RequantCoverage.check_phase (no STOCHASTIC element is ever sent)."""

    def build_phase(self):
        uvm_factory().set_type_override_by_type(RequantRandomSeq, RequantNearestOnlySeq)
        super().build_phase()
