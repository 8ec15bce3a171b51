"""pyuvm top-level environment of rtl/tt_accel.v: training steps with functional coverage of the ops executed.

    AccelTrainTest.run_phase: the host (verif/rtl_device.py over AXI4-Lite) calibrates, trains mini-batches and
    infers; the lock-step device is the scoreboard: every sample's prediction, p[label], gradients and stream,
    every update's weights and statistics are predicted by the golden machine and compared bit for bit.
    OpMonitor: wakes when the sequencer retires an op (its statistics cycle: one wake-up per op, none per cycle)
    and publishes what the RTL executed: unit and opcode, output size, shift, rounding, saturation, for a
    contraction its form (direct or lanes), drain (one element a cycle or wide) and preload (carries the next op's,
    is preloaded, both), and for the
    rank ops the state of the bonds in the tables the element-wise unit read (the masks' live slices, the taus).
    OpCoverage: opcode x size class x shift class x rounding x saturation, contraction forms, drains and preloads
    (cocotb-coverage); a hole fails the test.
    RankCoverage: MASK ops at full rank, with pruned slices and at rank 1; PENALTY ops with zero and non-zero taus.
The workload trains with rank adaptation on (the host's rank update after every mini-batch, then every bond
pruned to rank 1 and one more mini-batch).

MODEL / BATCH / UPDATES select the workload (verif/top/test_tt_accel.py sets them); SKIP_CORNERS=1 leaves out the
saturating phase, a stimulus the coverage check must reject (test_tt_accel.py proves it fails).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import cocotb
import numpy as np
import pyuvm
from cocotb.triggers import Edge
from pyuvm import uvm_analysis_port, uvm_component, uvm_env, uvm_test

from golden import program as P
from golden.arch import (
    CNT_W,
    CONTRACT_FIELDS,
    EW_ADAM_OPS,
    EW_MASK_N,
    EWISE_FIELDS,
    MAX_RED,
    NLOOPS,
    RANK_FIELDS,
    SCE_FIELDS,
    EwOpcode,
)
from golden.datasets import load_dataset
from golden.device import calibrate, train_batch
from golden.ir import OpKind
from verif.top.accel_env import model_config, prune_config, prune_to_rank_one, seed, start_accel
from verif.uvm import Coverage

KINDS = [k for k in OpKind if k.ewise_opcode not in EW_ADAM_OPS]  # the workload trains with SGD
MASK_STATES = ["full", "pruned", "one"]
SIZES = {"1-16": (1, 16), "17-256": (17, 256), "257+": (257, 1 << 30)}
SHIFTS = {"negative": (-64, -1), "zero": (0, 0), "1-8": (1, 8), "9+": (9, 63)}
FORMS = ["direct", "lanes", "vector"]  # one MAC a cycle; lanes loaded one word a beat; loaded VEC words a beat
DRAINS = ["one", "wide"]  # one element a cycle; a run of DRAIN elements a cycle
# the lanes split the outputs; they split the reduction (a lane sum); both (a lane sum with output lanes)
SUMS = ["outputs", "reduction", "both"]
PRELOADS = ["none", "carries", "preloaded", "both"]  # a contraction carries the next one's b walk, is preloaded, both


def size_class(n: int) -> str:
    return next(k for k, (lo, hi) in SIZES.items() if lo <= n <= hi)


def shift_class(s: int) -> str:
    return next(k for k, (lo, hi) in SHIFTS.items() if lo <= s <= hi)


def signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


def unit_tables(dut) -> tuple[list[int], list[int]]:
    """The tables the element-wise unit of `dut` (tt_accel) read for its last MASK or PENALTY op (rtl/tt_ewise.v
    tab_l_q, tab_r_q: entry r in bits 16 r .. 16 r + 15; an absent side holds ones for MASK, zeros for PENALTY)."""
    ew = dut.u_ewise.g_tables

    def entries(reg) -> list[int]:
        return [int(reg.value) >> (16 * r) & 0xFFFF for r in range(EW_MASK_N)]

    return entries(ew.tab_l_q), entries(ew.tab_r_q)


def mask_state(d: dict, tables: tuple[list[int], list[int]]) -> str:
    """The rank state a MASK op applied: "one" if a bond of rank > 1 kept one slice, "pruned" if a bond kept fewer
    than its rank, else "full" (an absent bond's mask is all ones)."""
    live = [(sum(e != 0 for e in table[: d[r]]), d[r]) for table, r in zip(tables, ("r0", "r1"))]
    if any(n == 1 < r for n, r in live):
        return "one"
    return "pruned" if any(n < r for n, r in live) else "full"


async def saturate(dev, xq: np.ndarray, labels: np.ndarray) -> None:
    """Corner phase: every master core, bias and gradient sum at the top of its format, inputs at full scale,
    then a training step, still in lock-step: contractions, bias adds, gradient sums and updates saturate."""
    g = dev.golden
    for name in g.mem:
        if name.startswith(("W", "B", "dG", "dB")) and name in g.frac:
            g.mem[name][:] = g.fmt(name).qmax
    for op in dev.comp.update:
        if op.kind == OpKind.DERIVE:
            g._derive(op.out, op.ins[0])
    await dev.upload()
    top = np.full_like(xq, g.fmt("X0").qmax)
    await train_batch(dev, g, top, labels)


class OpMonitor(uvm_component):
    def build_phase(self):
        self.ap = uvm_analysis_port("ap", self)

    async def run_phase(self):
        seq = cocotb.top.u_seq
        s_stat = int(seq.S_STAT.value)  # the statistics state: the op is complete, its counts on the unit ports
        while True:
            await Edge(seq.state_q)
            if not seq.state_q.value.is_resolvable or int(seq.state_q.value) != s_stat:
                continue
            unit = int(seq.unit_q.value)
            desc = int((seq.ct_desc_q if unit == 0 else seq.desc_q).value)  # the contraction engine's own copy
            sat = int(seq.unit_sat.value) >> (32 * unit) & 0xFFFFFFFF
            if unit == 0:
                d = P.unpack_fields(CONTRACT_FIELDS, desc)
                counts = [d["counts"] >> (CNT_W * i) & 0xFFFF for i in range(NLOOPS)]
                out = int(np.prod(counts[MAX_RED:])) // (counts[MAX_RED] if d["lane_sum"] else 1)  # elements
                form = "direct" if d["lanes"] == 1 else "vector" if d["vec_load"] else "lanes"
                preload = PRELOADS[bool(d["pre_lanes"]) + 2 * d["preloaded"]]
                txn = SimpleNamespace(
                    kind=OpKind.CONTRACT,
                    size=size_class(out),
                    shift=shift_class(signed(d["shift"], 7)),
                    rounding="stochastic" if d["mode"] else "nearest",
                    form=form,
                    preload=preload,
                    drain=DRAINS[d["vec_store"]],
                    lane_sum=SUMS[d["lane_sum"] * (1 + (d["lanes"] != counts[MAX_RED]))],
                )
            elif unit == 1:
                d = P.unpack_fields(EWISE_FIELDS, desc)
                tables = unit_tables(cocotb.top)
                txn = SimpleNamespace(
                    kind=OpKind[EwOpcode(d["opcode"]).name],
                    size=size_class(d["count"]),
                    shift=shift_class(signed(d["shift"], 7)),
                    rounding="stochastic" if d["mode"] else "nearest",
                    mask_state=mask_state(d, tables),
                    taus="nonzero" if any(tables[0] + tables[1]) else "zero",
                )
            elif unit == 2:
                d = P.unpack_fields(SCE_FIELDS, desc)
                txn = SimpleNamespace(kind=OpKind.SCE, size=size_class(d["n_out"]), shift="zero", rounding="nearest")
            else:  # a bond's rank update: its size is the master words it reads
                d = P.unpack_fields(RANK_FIELDS, desc)
                txn = SimpleNamespace(
                    kind=OpKind.RANK,
                    size=size_class(d["rank"] * (d["left_rows"] + d["right_cols"])),
                    shift="zero",
                    rounding="nearest",
                )
            txn.saturated = "yes" if sat else "no"
            txn.form = getattr(txn, "form", None)
            txn.preload = getattr(txn, "preload", None)
            txn.drain = getattr(txn, "drain", None)
            txn.lane_sum = getattr(txn, "lane_sum", None)
            self.ap.write(txn)


class OpCoverage(Coverage):
    """What the compiled programs make the RTL do, in normal training and in the saturating corner phase.
    Combinations no compiled program can produce are ignored, each for a reason: ReLU, its derivative, ZERO,
    DERIVE and the softmax unit never round stochastically (SPEC 5.3-5.5), and the compiler emits ACC with
    stochastic rounding only; ReLU / RELU_BWD / ZERO cannot saturate (a copy, a gate, a zero); the softmax
    error p - onehot lies in [-1, 1], inside every error format the formats allow. Contraction shifts follow
    the adaptive formats: the workload gives 1..8 and 9+; zero and negative shifts are the block tests' and
    tb_accel_errors' (hand-built descriptors). MASK gates a tensor in its own format with NEAREST and shift 0
    (it cannot round or saturate); PENALTY rounds stochastically, and no workload here drives it to saturation (the
    prior's small pull added to a gradient): that is left to tb_tt_ewise's random descriptors (every opcode,
    operands and tau entries at both ends of their ranges; not a per-opcode coverage bin). The rank unit rounds Q
    and lambda to nearest and counts no saturation (lambda's clamp is not a counted event, SPEC 5.6)."""

    def declare(self):
        self.point("kind", lambda t: t.kind, KINDS)
        self.point("size", lambda t: t.size, list(SIZES))
        self.point("shift", lambda t: t.shift, list(SHIFTS))
        self.point("rounding", lambda t: t.rounding, ["nearest", "stochastic"])
        self.point("saturated", lambda t: t.saturated, ["no", "yes"])
        exact = (OpKind.RELU_BWD, OpKind.ZERO, OpKind.SCE, OpKind.DERIVE, OpKind.MASK, OpKind.RANK)
        self.cross(
            "kind_x_rounding",
            ["kind", "rounding"],
            ignore=[(k, "stochastic") for k in exact] + [(OpKind.ACC, "nearest"), (OpKind.PENALTY, "nearest")],
        )
        self.cross(
            "kind_x_saturated",
            ["kind", "saturated"],
            ignore=[
                (k, "yes") for k in (OpKind.RELU_BWD, OpKind.ZERO, OpKind.SCE, OpKind.MASK, OpKind.PENALTY, OpKind.RANK)
            ],
        )
        others = [(k, None) for k in KINDS if k != OpKind.CONTRACT]
        self.cross("contract_x_size", ["kind", "size"], ignore=others)
        self.cross(
            "contract_x_shift",
            ["kind", "shift"],
            ignore=others + [(OpKind.CONTRACT, "negative"), (OpKind.CONTRACT, "zero")],
        )
        # the DUT's lane forms: with one lane every contraction is direct (verif/top/test_tt_accel.py builds it
        # with lanes). Lane groups shorter than the lanes (drain-bound) are tb_tt_contract's test_lane_contractions':
        # the compiled digits programs have none at 8 lanes. With vector loads no digits contraction stays direct
        # (the dense head sums its lanes): the direct form is then the one-lane builds' (test_tt_accel_train_steps).
        lanes, vec = int(cocotb.top.LANES.value), int(cocotb.top.VEC.value)
        self.point("contract_form", lambda t: t.form, FORMS[1:] if vec > 1 else FORMS[:2] if lanes > 1 else ["direct"])
        # wide drains: digits at 8 lanes drains its outer-product gradient j,i->ji 8 a cycle (accumulating)
        self.point("contract_drain", lambda t: t.drain, DRAINS if int(cocotb.top.DRAIN.value) > 1 else ["one"])
        # lane sums (VEC > 1): digits at 8 lanes sums the lanes of its dense head ji,i->j and of two TT steps
        self.point("contract_lanes_split", lambda t: t.lane_sum, SUMS if lanes > 1 and vec > 1 else ["outputs"])
        # preloads (rtl/tt_contract.v): digits at 8 lanes has ops that carry one, are preloaded, or both
        self.point("contract_preload", lambda t: t.preload, PRELOADS if lanes > 1 else ["none"])


class RankCoverage(Coverage):
    """The rank states the MASK and PENALTY ops ran with: every bond full, some slices pruned, a bond at rank 1;
    taus all zero (before the first rank update) and not."""

    REPORT_NAME = "rank_coverage"

    def declare(self):
        self.point("mask_state", lambda t: t.mask_state, MASK_STATES)
        self.point("penalty_taus", lambda t: t.taus, ["zero", "nonzero"])

    def samples(self, txn):
        return (txn,) if txn.kind in (OpKind.MASK, OpKind.PENALTY) else ()


class AccelEnv(uvm_env):
    def build_phase(self):
        self.monitor = OpMonitor("monitor", self)
        self.coverage = OpCoverage.create("coverage", self)
        self.rank_coverage = RankCoverage.create("rank_coverage", self)

    def connect_phase(self):
        self.monitor.ap.connect(self.coverage.analysis_export)
        self.monitor.ap.connect(self.rank_coverage.analysis_export)


@pyuvm.test()
class AccelTrainTest(uvm_test):
    def build_phase(self):
        self.env = AccelEnv("env", self)

    async def run_phase(self):
        self.raise_objection()
        s = seed()
        cfg = model_config(os.environ["MODEL"], int(os.environ.get("BATCH") or 0))
        cfg = prune_config(cfg, s, np.random.default_rng(s))
        dev = await start_accel(cocotb.top, cfg, s, fast_bus=os.environ.get("BUS") == "direct")
        data = load_dataset(cfg.name if cfg.name in ("tiny", "digits") else "digits")
        rng = np.random.default_rng(s)
        xq = dev.golden.quantize_input(data.train_x)
        b = cfg.train.batch
        idx = rng.permutation(len(data.train_y))
        updates = int(os.environ.get("UPDATES", "3"))
        await calibrate(dev, dev.golden, xq[idx[:b]], data.train_y[idx[:b]])
        for u in range(updates + 1):
            if u == updates:
                await prune_to_rank_one(dev)
            sel = idx[b * (u + 1) : b * (u + 2)]
            await train_batch(dev, dev.golden, xq[sel], data.train_y[sel])
            if u < updates:
                await dev.rank_update()
        await dev.infer(dev.golden.quantize_input(data.test_x[:4]))
        if os.environ.get("SKIP_CORNERS") != "1":  # SKIP_CORNERS=1: the weak stimulus coverage must reject
            await saturate(dev, xq[idx[-b:]], data.train_y[idx[-b:]])
        self.logger.info(
            f"seed {s}: {dev.samples} samples, {dev.golden.updates} updates bit-exact; live ranks "
            f"{dev.golden.live_ranks()}"
        )
        self.drop_objection()
