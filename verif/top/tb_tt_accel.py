"""Top-level cocotb tests of rtl/tt_accel.v: whole training steps in lock-step with the golden machine.

The model comes from the environment (MODEL, BATCH, OPTIMIZER, UPDATES, TEST_SAMPLES; BUS=direct: verif.host.DirectAxil
instead of cocotbext-axi's master; BUS=stalls: cocotbext-axi's master with random pauses on all five channels,
STALL_P per cycle), set by test_tt_accel.py. Every sample's prediction,
p[label], gradients and random stream, every update's weights and statistics, and every inference are
compared bit for bit (verif/rtl_device.py).
"""

import os

import cocotb
import numpy as np

from golden import program as P
from golden.arch import KIND_CONTRACT
from golden.compact import compact
from golden.datasets import load_dataset
from golden.device import calibrate, train_batch
from verif.rtl_device import Mismatch
from verif.top.accel_env import model_config, prune_config, prune_to_rank_one, seed, start_accel


@cocotb.test()
async def train_steps(dut):
    """Calibration, a few mini-batches (samples, update, shift control) and inference, all on the RTL."""
    s = seed()
    cfg = model_config(os.environ["MODEL"], int(os.environ.get("BATCH") or 0), optimizer=os.environ.get("OPTIMIZER"))
    bus = os.environ.get("BUS", "")
    stalls = float(os.environ.get("STALL_P", "0.3")) if bus == "stalls" else 0.0
    dev = await start_accel(dut, cfg, s, fast_bus=bus == "direct", stalls=stalls)
    dut._log.info(f"seed {s}: host bus {bus or 'cocotbext'}" + (f", stall probability {stalls}" if stalls else ""))
    data = load_dataset(os.environ.get("DATASET", cfg.name if cfg.name in ("tiny", "digits") else "digits"))
    rng = np.random.default_rng(s)
    xq = dev.golden.quantize_input(data.train_x)
    b = cfg.train.batch
    updates = int(os.environ.get("UPDATES", "3"))
    idx = rng.permutation(len(data.train_y))
    rounds = await calibrate(dev, dev.golden, xq[idx[:b]], data.train_y[idx[:b]])
    dut._log.info(f"seed {s}: calibrated in {rounds} rounds")
    for u in range(updates):
        sel = idx[b * (u + 1) : b * (u + 2)]
        await train_batch(dev, dev.golden, xq[sel], data.train_y[sel])
    n_test = int(os.environ.get("TEST_SAMPLES", "8"))
    await dev.infer(dev.golden.quantize_input(data.test_x[:n_test]))
    if stalls:
        stalled = dev.host.axil.stalled
        dut._log.info(f"cycles a pause held back a ready transfer, per channel: {stalled}")
        assert all(stalled.values()), f"a channel never stalled a transfer: {stalled}"
    c = dev.cycles
    dut._log.info(
        f"{dev.samples} samples, {dev.golden.updates} updates, {n_test} inferences bit-exact; cycles "
        f"per train_sample {c['train_sample'] / max(1, dev.runs['train_sample']):.0f}, per update "
        f"{c['update'] / max(1, dev.runs['update']):.0f}, per inference "
        f"{c['infer'] / max(1, dev.runs['infer']):.0f}"
    )


@cocotb.test()
async def rank_steps(dut):
    """Rank adaptation on the RTL: mini-batches whose updates run the PENALTY ops, each followed by the host's
    rank update (it reads the master cores back, prunes, writes the zeroed slices and re-assembles the MASK and
    PENALTY descriptors); then every bond pruned to rank 1, the end of the prune phase (every tau 0) and one more
    mini-batch at rank 1; then the network recompiled at the ranks the prune phase had left, its state carried over
    (golden/compact.py), and a mini-batch and inference of it; bit-exact throughout."""
    s = seed()
    cfg = model_config(os.environ["MODEL"], int(os.environ.get("BATCH") or 0))
    cfg = prune_config(cfg, s, np.random.default_rng(s))
    dev = await start_accel(dut, cfg, s, fast_bus=True)
    data = load_dataset(cfg.name)
    rng = np.random.default_rng(s)
    xq, y = dev.golden.quantize_input(data.train_x), data.train_y
    idx = rng.permutation(len(y))
    b = cfg.train.batch
    updates = int(os.environ.get("UPDATES", "2"))
    await calibrate(dev, dev.golden, xq[idx[:b]], y[idx[:b]])
    full = dev.golden.live_ranks()
    taus_seen = 0
    for u in range(updates):
        sel = idx[b * (u + 1) : b * (u + 2)]
        await train_batch(dev, dev.golden, xq[sel], y[sel])
        await dev.rank_update()
        taus_seen += sum(int(np.count_nonzero(dev.golden.mem[op.ins[2]])) for op in dev.comp.rank_update)
        dut._log.info(f"seed {s}: after update {u + 1} live ranks {dev.golden.live_ranks()} (from {full})")
    pruned = dev.golden.live_ranks()
    flat, flat_full = sum(pruned, []), sum(full, [])
    assert all(r >= 1 for r in flat) and sum(flat) < sum(flat_full), f"no slice pruned: {pruned} from {full}"
    assert taus_seen > 0, "every tau stayed 0: the penalty was never exercised"
    rank_cycles = (await dev.host.counters())["rank_cycles"]
    model = P.program_cycles(dev.image, "rank_update", dev.mem_lat)["units"]["rank"]
    assert dev.params.rank and rank_cycles == updates * model > 0, (
        f"the rank unit held {rank_cycles} cycles, the model says {updates} x {model}"
    )
    await prune_to_rank_one(dev)
    ones = dev.golden.live_ranks()
    assert all(r == 1 for r in sum(ones, [])), f"ranks {ones} after pruning to one"
    await dev.rank_freeze()
    sel = idx[b * (updates + 1) : b * (updates + 2)]
    await train_batch(dev, dev.golden, xq[sel], y[sel])  # penalty ops with every tau 0, masks kept
    await dev.infer(dev.golden.quantize_input(data.test_x[:2]))
    assert dev.golden.live_ranks() == ones, "ranks changed after the prune phase"
    # The network recompiled (golden/compact.py) at the ranks the prune phase had left: each bond its live slice and
    # zero, masked ones up to them, uploaded to the same RTL; a mini-batch and inference bit-exact, with fewer MACs.
    sel = idx[b * (updates + 2) : b * (updates + 3)]
    small = dev.recompiled(compact(dev.golden, pruned, calibration=(xq[sel], y[sel])))
    await small.upload()
    await train_batch(small, small.golden, xq[sel], y[sel])
    await small.infer(small.golden.quantize_input(data.test_x[:2]))
    assert small.golden.live_ranks() == ones and [list(r.ranks) for r in small.golden.cfg.layers] == pruned
    assert small.comp.macs("train_sample") < dev.comp.macs("train_sample")
    dut._log.info(
        f"seed {s}: recompiled at {pruned}: train_sample {small.model_cycles('train_sample')} cycles "
        f"(at {full}: {dev.model_cycles('train_sample')})"
    )


@cocotb.test()
async def check_every(dut):
    """CHECK=every: programs run op by op stay bit-exact, and a core corrupted on the RTL alone is caught at the
    first op that reads it, named in the message."""
    s = seed()
    cfg = model_config(os.environ["MODEL"])
    dev = await start_accel(dut, cfg, s, check="every")
    data = load_dataset(cfg.name)
    xq, y = dev.golden.quantize_input(data.train_x), data.train_y
    b = cfg.train.batch
    await calibrate(dev, dev.golden, xq[:b], y[:b])
    await train_batch(dev, dev.golden, xq[b : 2 * b], y[b : 2 * b])
    await dev.infer(dev.golden.quantize_input(data.test_x[:2]))
    ops = dev.comp.train_sample
    i, name = next((i, t) for i, op in enumerate(ops) for t in op.ins if t in dev.golden.mem and t.startswith("G"))
    fmt = dev.comp.tensors[name].fmt
    bank, base = dev.comp.layout[name]
    want = dev.golden.mem[name]
    await dev.host.write_bank(bank, base, np.where(want == fmt.qmax, fmt.qmin, fmt.qmax))  # the RTL's copy only
    try:
        await dev.train_sample(xq[2 * b], int(y[2 * b]))
    except Mismatch as e:
        assert f"op {i} ({ops[i].kind} -> {ops[i].out})" in str(e), str(e)
        dut._log.info(f"corrupted {name} caught: {e}")
    else:
        raise AssertionError(f"a corrupted {name} on the RTL went unnoticed by CHECK=every")


@cocotb.test()
async def random_networks(dut):
    """Constrained-random networks (verif/top/random_nets.py), all on this one accelerator build: each is compiled,
    uploaded, calibrated, trained for a few mini-batches and run for inference, in lock-step with the golden model.
    A build with MAC lanes (LANE_PARAMS) runs the lane forms; its first network has a preloaded contraction, the
    next ones are the regression networks (random_nets.REGRESSION_NETWORKS; REGRESSION=0: random ones instead)."""
    from golden.compiler import compile_network
    from golden.config_file import config_from_dict
    from golden.machine import Machine
    from golden.train import init_float_params
    from verif.top.accel_env import open_accel
    from verif.top.random_nets import LANE_PARAMS, PARAMS, REGRESSION_NETWORKS, fits, random_config, shape_class

    s = seed()
    rng = np.random.default_rng(s)
    make_device = await open_accel(dut, "sample", fast_bus=os.environ.get("BUS") == "direct")
    params = LANE_PARAMS if int(dut.LANES.value) > 1 else PARAMS
    regression = REGRESSION_NETWORKS if params.lanes > 1 and os.environ.get("REGRESSION") != "0" else []
    for k in range(int(os.environ.get("NETWORKS", "4"))):
        kept_for = None
        if 1 <= k <= len(regression):
            network, kept_for = regression[k - 1]
            cfg = config_from_dict(network)
        else:
            cfg = random_config(rng, k, params, preload=params.lanes > 1 and k == 0)
        # rank adaptation on half of the networks that have a bond: PENALTY, MASK and a rank update per batch
        bonds = any(l.ranks for l in cfg.layers)
        if bonds and rng.random() < 0.5:
            ranked = prune_config(cfg, s + k, rng, prior=float(rng.choice([1e-4, 1e-3, 1e-2])))
            if fits(ranked, params):  # the rank programs and state make the image bigger: it may not fit
                cfg = ranked
        if kept_for is not None:
            assert fits(cfg, params) and kept_for(cfg, params), (
                f"regression network {cfg.name} no longer fits the build or tests what it was kept for"
            )
        golden = Machine(compile_network(cfg), s + k)
        golden.load_float_params(*init_float_params(cfg, rng))
        dev = make_device(golden)
        await dev.upload()
        b = cfg.train.batch
        x = rng.random((4 * b, cfg.input_size))
        y = rng.integers(0, cfg.classes, 4 * b)
        xq = dev.golden.quantize_input(x)
        await calibrate(dev, dev.golden, xq[:b], y[:b])
        for u in range(1, 4):
            await train_batch(dev, dev.golden, xq[u * b : (u + 1) * b], y[u * b : (u + 1) * b])
            if cfg.train.rank.enabled:
                await dev.rank_update()
        await dev.infer(xq[:2])
        rank = (
            f", rank adaptation (prior {cfg.train.rank.prior:g}): live ranks {dev.golden.live_ranks()}"
            if cfg.train.rank.enabled
            else ""
        )
        preloaded = sum(r.kind == KIND_CONTRACT and r.desc.preloaded for r in dev.image.records)
        if params.lanes > 1 and k == 0:
            assert preloaded, "the lane build's first network has no preloaded contraction"
        dut._log.info(
            f"network {k}: {shape_class(cfg)}, layers {[(l.in_shape, l.out_shape, l.ranks) for l in cfg.layers]}"
            f", batch {b}{rank}, {preloaded} preloaded contractions: bit-exact"
        )
