"""Cycle counts and simulation speed of the accelerator top, for `make bench` (verif/top/bench_rtl.py).

Runs one training sample, one update and one inference of MODEL (the accelerator's timing does not depend on
the data), then STREAM_SAMPLES (4) training samples through the AXI4-Stream input, reads the sequencer's
counters (busy cycles and each unit's cycles) and times the simulator while the DUT runs free. Writes BENCH_OUT
(JSON). The run is checked against the golden model like every top-level test.
"""

import json
import os
import time
from pathlib import Path

import cocotb
from cocotb.simtime import get_sim_time

from golden import program as P
from golden.datasets import load_dataset
from verif.host import UNITS, SampleStream
from verif.top.accel_env import model_config, seed, start_accel


async def measure(dev, prog: str, run) -> dict:
    """Busy cycles by unit, and the clock cycles of the whole host call (`elapsed_cycles`): for train_sample
    that is the sample upload, the label, the start, the status polls and the pred / p[label] reads over AXI-Lite,
    so elapsed - busy is what the host adds per sample. For update and infer it includes checking reads. The busy
    and unit cycles must equal golden/program.py program_cycles (the model `python -m golden cost` prints)."""
    host = dev.host
    await host.clear_counters()
    t0 = time.perf_counter()
    t0_ns = get_sim_time("ns")
    await run()
    elapsed = round((get_sim_time("ns") - t0_ns) / host.period_ns)
    wall = time.perf_counter() - t0
    c = await host.counters()
    units = {u: c[f"{u}_cycles"] for u in UNITS}
    model = P.program_cycles(dev.image, prog, dev.mem_lat)  # golden/cost.py's figures: they must be the measured ones
    assert (c["cycles"], units) == (model["cycles"], model["units"]), (
        f"{prog}: measured {c['cycles']} cycles {units}, modelled {model['cycles']} {model['units']}"
    )
    return {
        "cycles": c["cycles"],
        "units": units,
        "sequencer_overhead": c["cycles"] - sum(units.values()),
        "ops": c["ops"],
        "elapsed_cycles": elapsed,
        "host_cycles": elapsed - c["cycles"],
        "host_and_check_wall_s": wall,
    }


async def measure_stream(dut, dev, xq, labels) -> dict:
    """Samples through the AXI4-Stream input (RtlDevice.stream_samples): the clock cycles from the host's set-up
    to the last run's end, over the samples, less the busy cycles, is what feeding a sample costs this way (its
    words and label at one a cycle, while the accelerator waits: the stream is held while a run is busy)."""
    host, n = dev.host, len(xq)
    stream = SampleStream(dut, dut.clk, host.period_ns)
    await host.clear_counters()
    t0_ns = get_sim_time("ns")
    await dev.stream_samples(stream, xq, labels)
    elapsed = round((get_sim_time("ns") - t0_ns) / host.period_ns)
    busy = (await host.counters())["cycles"]
    return {"samples": n, "cycles": busy, "elapsed_cycles": elapsed, "host_cycles_per_sample": (elapsed - busy) / n}


@cocotb.test()
async def bench(dut):
    ranks = os.environ.get("BENCH_RANKS")
    cfg = model_config(os.environ["MODEL"], ranks=json.loads(ranks) if ranks else None)
    dev = await start_accel(dut, cfg, seed(), check="batch", fast_bus=True)
    data = load_dataset(os.environ["DATASET"])
    x = dev.golden.quantize_input(data.train_x[:1])
    label = int(data.train_y[0])
    out = {
        "model": cfg.name,
        "ranks": [list(lay.ranks) for lay in cfg.layers],
        "sim": cocotb.SIM_NAME,
        "lanes": dev.params.lanes,
        "buf_depth": dev.params.buf_depth,
        "vec": dev.params.vec,
        "drain": dev.params.drain,
        "macs": {p: dev.comp.macs(p) for p in ("train_sample", "infer")},
        "ops": {p: len(getattr(dev.comp, p)) for p in ("train_sample", "update", "infer")},
    }
    out["train_sample"] = await measure(dev, "train_sample", lambda: dev.train_sample(x[0], label))
    out["update"] = await measure(dev, "update", dev.update)
    out["infer"] = await measure(dev, "infer", lambda: dev.infer(x))
    n = int(os.environ.get("STREAM_SAMPLES", "4"))
    out["train_stream"] = await measure_stream(
        dut, dev, dev.golden.quantize_input(data.train_x[1 : 1 + n]), data.train_y[1 : 1 + n]
    )
    # Simulation speed with the environment attached: the train_sample program back to back, the host only
    # starting it and waiting for done (the state is not checked after this point).
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    await dev.host.clear_counters()
    t0 = time.perf_counter()
    for _ in range(runs):
        await dev.host.run(dev.image.entry["train_sample"], dev.budget["train_sample"], label)
    wall = time.perf_counter() - t0
    cycles = (await dev.host.counters())["cycles"]
    out["sim_speed"] = {"runs": runs, "cycles": cycles, "wall_s": wall, "cycles_per_s": cycles / wall}
    Path(os.environ["BENCH_OUT"]).write_text(json.dumps(out, indent=1))
    t = out["train_sample"]
    dut._log.info(
        f"{cfg.name}: train_sample {t['cycles']} cycles ({t['units']}, sequencer {t['sequencer_overhead']}),"
        f" simulated at {out['sim_speed']['cycles_per_s']:.0f} cycles/s"
    )
    assert t["cycles"] * out["lanes"] >= out["macs"]["train_sample"]  # never fewer cycles than MACs / lanes
