"""`make bench`: the project's figures, measured side by side, into results/ (bench.json, BENCH.md, PNGs).

Sections: memory of the whole on-chip training state against FP32 dense training; work per training sample
(MACs) and the ideal cycles at each synthesized target's lane count and Fmax; CPU software speed on one core
(float TT at batch 1 and 64, dense float, and the bit-exact golden model); accuracy tables
(scripts/accuracy.py: digits always, Fashion-MNIST with the paper model unless QUICK=1); accuracy against
bits (scripts/bits.py, digits); the accelerator's own accuracy (make train on the simulated RTL against the golden
model, every weight read back from the RTL and compared; not with QUICK=1); rank pruning shrinking the work (a
rank-adapted run's live ranks
recompiled and measured on the simulated RTL).

The accelerator section (verif/top/bench_rtl.py) measures, on the simulated top, the cycles of one training
sample, one update and one inference of each model, where they go (contraction engine, element-wise unit,
softmax unit, sequencer), and the simulators' speed with the environment attached; with the Fmax of each
synthesized target (committed baselines) they give the training throughput. Each model is measured at the MAC lanes
and lane buffer depth of the synthesis target that builds it (engine_of).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import astuple
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from golden.checkpoint import golden_version
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.cost import fit_ranks
from golden.device import calibrate_machine
from golden.float_train import measure_speed
from golden.machine import Machine
from golden.memory import memory_report
from golden.planner import PLAN_ENGINES
from golden.train import init_float_params
from scripts.accuracy import accuracy_table, version_text
from scripts.bits import bits_table
from verif.top.bench_rtl import measure as measure_rtl

ROOT = Path(__file__).resolve().parent.parent

MODELS = ("tiny", "digits", "paper")
TARGETS = ("ice40-up5k", "ecp5-85k", "zynq-usplus")
OUT = ROOT / "results"


def section_memory() -> dict:
    return {m: memory_report(compile_network(load_config(m))) for m in MODELS}


def engine_of(model: str) -> tuple[int, int, int, int]:
    """(MAC lanes, words per lane buffer, vector load words, drain elements a cycle) the model is measured with: those
    of the synthesis
    target that builds it (scripts/synth_targets.json), one lane for a model no target builds."""
    targets_cfg = json.loads((ROOT / "scripts" / "synth_targets.json").read_text())
    for t in TARGETS:
        if targets_cfg[t]["model"] == model:
            cfg = targets_cfg[t]
            return cfg.get("lanes", 1), cfg.get("buf_depth", 0), cfg.get("vec", 1), cfg.get("drain", 1)
    return 1, 0, 1, 1


def target_clock(base: dict) -> tuple[float | None, str]:
    """The clock a target's build runs at, from its committed baseline: the PLL's (the requested clock) where the
    routed build meets timing there, else its Fmax (the clock a PLL would have to be set to), and which it is."""
    fmax = base["metrics"].get("fmax_mhz", {}).get("clk")
    requested = base.get("clocks_requested_mhz", {}).get("clk")
    if base.get("timing") == "pass" and requested:
        return requested, "PLL clock, timing met"
    return fmax, "Fmax (timing not met at the requested clock)" if fmax else "not placed"


def section_work(rtl: dict) -> dict:
    """Per synthesis target: the model it is built for, the clock its routed build runs at (committed baseline:
    target_clock), the cycles per training sample measured on the simulated RTL (verilator run of the rtl section, at
    the target's lanes) and the training throughput they give; MACs per sample per model."""
    targets_cfg = json.loads((ROOT / "scripts" / "synth_targets.json").read_text())
    measured = {v["model"]: v["train_sample"]["cycles"] for k, v in rtl.items() if k.endswith("/verilator")}
    targets = {}
    for t in TARGETS:
        base = json.loads((ROOT / "scripts" / "qor_baselines" / f"{t}.json").read_text())
        model = targets_cfg[t]["model"]
        fmax = base["metrics"].get("fmax_mhz", {}).get("clk")
        clock, clock_is = target_clock(base)
        cycles = measured.get(model)
        targets[t] = {
            "model": model,
            "top": base["top"],
            "fmax_mhz": fmax,
            "clock_mhz": clock,
            "clock_is": clock_is,
            "cycles_per_sample": cycles,
            "samples_per_s": clock * 1e6 / cycles if clock and cycles else None,
            "fits": base.get("fits", fmax is not None),
        }
    models = {}
    for m in MODELS:
        comp = compile_network(load_config(m))
        models[m] = {
            "train_macs_per_sample": comp.macs("train_sample"),
            "infer_macs_per_sample": comp.macs("infer"),
            "measured_cycles_per_sample": measured.get(m),
        }
    return {"targets": targets, "models": models}


PLANNED = "paper/verilator/planned-engine"  # section_rtl's key of paper on the engine its programs are planned for


def section_rtl(quick: bool) -> dict:
    """Measured cycles and simulation speed of the accelerator top (verif/top/tb_bench.py): each model on the engine
    of the target that builds it, and paper also on the engine its programs are planned for (PLAN_ENGINES[0], 128
    lanes: the paper target's wide engine, a build no target fits yet)."""
    pairs = [("tiny", "verilator"), ("digits", "verilator"), ("paper", "verilator")]
    if not quick:
        pairs += [("tiny", "icarus"), ("digits", "icarus")]
    out = {}
    for model, sim in pairs:
        print(f"bench: accelerator {model} on {sim}", flush=True)
        out[f"{model}/{sim}"] = measure_rtl(model, sim, None, *engine_of(model))
    print(f"bench: accelerator paper on verilator, on the planned engine {astuple(PLAN_ENGINES[0])}", flush=True)
    out[PLANNED] = measure_rtl("paper", "verilator", None, *astuple(PLAN_ENGINES[0]))
    return out


def section_bits() -> dict:
    """Accuracy against bits of the bit-exact model (scripts/bits.py), digits."""
    return {"digits-digits": bits_table("digits", "digits")}


# engines beside the synthesis target's that section_pruning measures: digits on make train's build; paper on the
# engine its programs are planned for (128 lanes) and at 16 lanes with the vector loads, wide drain and lane sums
# that the ECP5 build leaves out (its lanes, the forms of the wide engine)
PRUNING_ENGINES = {"digits": ((8, 512, 8, 8),), "paper": (astuple(PLAN_ENGINES[0]), (16, 512, 16, 16))}


def section_pruning(accuracy: dict, rtl: dict) -> dict:
    """Rank pruning shrinks the work: the live ranks a rank-adapted run ended with (the bit-exact row, else the
    float one when the bit-exact run pruned nothing), recompiled and measured on the RTL against the full ranks: on the
    engine of the target that builds the model and on the model's PRUNING_ENGINES. On each engine also the ranks
    golden/cost.py fit_ranks recompiles the pruned network at (some pruned slices kept, zero, where the engine runs
    them faster), where they differ from the live ones."""
    out = {}
    for key, table in accuracy.items():
        model = table["model"]
        cfg = load_config(model)
        full_ranks = [list(lay.ranks) for lay in cfg.layers]
        pruned = [
            (row, [list(r) for r in table["rows"][row]["ranks"]])
            for row in ("golden_rank", "float_rank")
            if row in table["rows"]
        ]
        pruned = [(row, ranks) for row, ranks in pruned if ranks != full_ranks]
        if not pruned or rtl.get(f"{model}/verilator") is None:
            continue
        row, ranks = pruned[0]
        engines = {key: engine_of(model)}
        for engine in PRUNING_ENGINES.get(model, ()):
            engines[
                f"{key}/planned-engine"
                if engine == astuple(PLAN_ENGINES[0])
                else f"{key}/engine-{'x'.join(map(str, engine))}"
            ] = engine
        measured = {engine_of(model): rtl.get(f"{model}/verilator")}  # the rtl section's full-rank runs
        if model == "paper":
            measured[astuple(PLAN_ENGINES[0])] = rtl.get(PLANNED)
        for name, engine in engines.items():
            print(
                f"bench: accelerator {model} on the engine {engine}: full ranks, the pruned ranks {ranks} ({row}), "
                "and the ranks fitted to the engine",
                flush=True,
            )
            full = measured.get(engine) or measure_rtl(model, "verilator", None, *engine)
            lanes, buf_depth, vec, drain = engine
            fit = fit_ranks(cfg, ranks, lanes, buf_depth, vec=vec, drain=drain, log=sys.stdout)
            out[name] = {
                "model": model,
                "row": row,
                "ranks": ranks,
                "full_ranks": full_ranks,
                "engine": engine,
                "ranks_golden_version": table.get("golden_version"),  # the accuracy run the ranks come from
                "golden_version": golden_version(),  # the compiler of the measured programs
                "full": program_costs(full),
                "pruned": program_costs(measure_rtl(model, "verilator", ranks, *engine)),
            }
            if fit["ranks"] != ranks:
                out[name]["fitted"] = {
                    "ranks": fit["ranks"],
                    **program_costs(measure_rtl(model, "verilator", fit["ranks"], *engine)),
                }
    return out


def program_costs(m: dict) -> dict:
    """MACs and measured cycles of one verif.top.bench_rtl measurement."""
    return {
        "train_macs": m["macs"]["train_sample"],
        "train_cycles": m["train_sample"]["cycles"],
        "infer_cycles": m["infer"]["cycles"],
        "update_cycles": m["update"]["cycles"],
    }


def golden_speed(model: str, batches: int) -> dict:
    """Bit-exact golden model, one BLAS thread: samples per CPU second and per wall second."""
    cfg = load_config(model)
    comp = compile_network(cfg)
    rng = np.random.default_rng(1)
    m = Machine(comp, seed=1)
    m.load_float_params(*init_float_params(cfg, rng))
    b = cfg.train.batch
    x = m.quantize_input(rng.random((b * batches, cfg.input_size)))
    y = rng.integers(0, cfg.classes, b * batches)
    with threadpool_limits(limits=1):
        calibrate_machine(m, x[:b], y[:b])
        c0, w0 = time.process_time(), time.time()
        for i in range(0, b * batches, b):
            m.train_batch(x[i : i + b], y[i : i + b])
        cpu, wall = time.process_time() - c0, time.time() - w0
    n = b * batches
    return {"batch": b, "samples_per_cpu_s": n / cpu, "samples_per_wall_s": n / wall}


def section_cpu(quick: bool) -> dict:
    out = {}
    for m in ("digits", "paper"):
        cfg = load_config(m)
        n = 1280 if quick else 6400
        out[m] = {
            "float_tt_batch1": measure_speed(cfg, batch=1, n=n // 10),
            "float_tt_batch64": measure_speed(cfg, batch=64, n=n),
            "float_dense_batch64": measure_speed(cfg, batch=64, n=n, dense=True),
            "golden": golden_speed(m, 4 if quick else 12),
        }
    return out


def section_versus_cpu(work: dict, rtl: dict, cpu: dict) -> dict:
    """Each placed target's training throughput against the CPU software of the cpu section on one desktop core,
    as ratios. Cycles per sample: the measured train_sample, the host's cycles around it (samples through the
    AXI4-Stream input) and the measured update spread over its mini-batch, at the target's clock (its PLL's); for
    paper also on the planned 128-lane engine (section_rtl's PLANNED measurement) at the same clock, labelled as a
    build that does not fit the part."""
    out = {}
    for t, v in work["targets"].items():
        m = v["model"]
        meas = rtl.get(f"{m}/verilator")
        if not v["clock_mhz"] or meas is None or m not in cpu:
            continue
        c = cpu[m]
        hz = v["clock_mhz"] * 1e6
        software = {
            "float_tt_batch1": c["float_tt_batch1"],
            "float_tt_batch64": c["float_tt_batch64"],
            "golden": c["golden"]["samples_per_cpu_s"],
        }
        out[t] = {"model": m, "software_samples_per_s": software, **_throughput(meas, m, hz, software)}
        if m == "paper" and PLANNED in rtl:
            out[t]["planned_engine"] = {"lanes": rtl[PLANNED]["lanes"], **_throughput(rtl[PLANNED], m, hz, software)}
    return out


def _throughput(meas: dict, model: str, hz: float, software: dict) -> dict:
    """Cycles per training sample of one bench_rtl measurement (train_sample, the stream's host cycles, the update over
    the mini-batch) and the samples/s at `hz`, against each software figure."""
    per_sample = (
        meas["train_sample"]["cycles"]
        + meas["train_stream"]["host_cycles_per_sample"]
        + meas["update"]["cycles"] / load_config(model).train.batch
    )
    return {
        "cycles_per_sample": per_sample,
        "samples_per_s": hz / per_sample,
        "ratio": {k: hz / per_sample / s for k, s in software.items()},
    }


def section_accuracy(quick: bool) -> dict:
    out = {"digits-digits": accuracy_table("digits", "digits", prior=3e-4)}
    if not quick:
        out["paper-fashion-mnist"] = accuracy_table("paper", "fashion-mnist")  # rank settings: golden/models/paper.json
    return out


ACCEL_EPOCHS = 1  # one epoch keeps the section short; the full schedule is make train EPOCHS=20


def start_accelerator_accuracy(quick: bool) -> dict | None:
    """The accelerator's own accuracy: `make train` (verif/train.py) on digits for ACCEL_EPOCHS, on the simulated
    RTL (Verilator, every sample checked in lock-step) and on the golden model alone, from scratch. Started in the
    background (logs in build/bench/), so they share the cores with the accuracy tables; finish_accelerator_accuracy
    compares their test accuracies and every final weight."""
    if quick:
        return None
    import shutil
    import subprocess

    runs = {}
    for sim in ("verilator", "golden"):
        out = ROOT / "build" / "bench" / f"train-digits-{sim}"
        shutil.rmtree(out, ignore_errors=True)  # a finished run would be resumed as done, even after an RTL change
        out.mkdir(parents=True)
        print(
            f"bench: make train on {sim}, digits, {ACCEL_EPOCHS} epoch(s), in the background (log: {out}.log)",
            flush=True,
        )
        log = open(f"{out}.log", "w")
        proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "verif" / "train.py"),
                "--model",
                "digits",
                "--dataset",
                "digits",
                "--epochs",
                str(ACCEL_EPOCHS),
                "--seed",
                "1",
                "--sim",
                sim,
                "--check",
                "sample",
                "--out",
                str(out),
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        runs[sim] = (proc, out, log)
    return runs


def finish_accelerator_accuracy(started: dict | None) -> dict | None:
    if started is None:
        return None
    runs = {}
    for sim, (proc, out, log) in started.items():
        rc = proc.wait()
        log.close()
        if rc:
            tail = "".join(Path(f"{out}.log").read_text().splitlines(keepends=True)[-20:])
            raise SystemExit(f"bench: make train on {sim} failed (exit {rc}); end of {out}.log:\n{tail}")
        report = json.loads((out / "report.json").read_text())
        # the RTL run's state as read back from the RTL over the host bus; the golden run's from its machine
        state = out / ("rtl_state.npz" if sim != "golden" else "weights.npz")
        with np.load(state) as w:
            runs[sim] = {
                "test_acc": report["test_acc"],
                "executor": report["executor"],
                "weights": {k: w[k].reshape(-1) for k in w.files if k.startswith("mem/")},
            }
    rtl, gold = runs["verilator"], runs["golden"]
    compared = sorted(gold["weights"].keys() & rtl["weights"].keys())
    same = bool(compared) and all(np.array_equal(rtl["weights"][k], gold["weights"][k]) for k in compared)
    return {
        "model": "digits",
        "dataset": "digits",
        "epochs": ACCEL_EPOCHS,
        "seed": 1,
        "rtl_test_acc": rtl["test_acc"],
        "golden_test_acc": gold["test_acc"],
        "executor": rtl["executor"],
        "weights_identical": same,
        "tensors_compared": len(compared),
    }


def markdown(r: dict) -> str:
    lines = [
        f"# Benchmarks ({r['date']}, {r['machine']})",
        "",
        "Regenerate with `make bench` (`QUICK=1` for the short subset). " + r["note"],
        "",
        f"This {'QUICK=1 ' if r['quick'] else 'full '}run took {r['wall_s'] / 60:.1f} min."
        + "".join(
            f" Re-measured on {day}: sections {', '.join(names)} (`python scripts/bench.py --sections "
            f"{','.join(names)}`)."
            for day, names in _by_day(r.get("refreshed", {})).items()
        ),
        "",
        "## Memory: the whole on-chip training state",
        "",
        "| model | accelerator bytes | FP32 dense + SGD momentum | ratio | FP32 dense + Adam | ratio | "
        "parameter-only ratio (paper's count) |",
        "|---|---|---|---|---|---|---|",
    ]
    for m, v in r["memory"].items():
        lines.append(
            f"| {m} | {v['accelerator_total_bytes']} | {v['dense_fp32_sgd_momentum_bytes']} | "
            f"{v['ratio_vs_dense_sgd_momentum']:.1f}x | {v['dense_fp32_adam_bytes']} | "
            f"{v['ratio_vs_dense_adam']:.1f}x | {v['parameter_only_ratio']:.0f}x |"
        )
    lines += [
        "",
        "## The accelerator, measured (simulated RTL)",
        "",
        "Cycles of one run of each program, where the training sample's cycles go, and the simulator's speed "
        "(the train_sample program back to back, host attached). Train cycles are the accelerator's busy "
        "cycles; host is what the host adds per sample outside them: over AXI-Lite (sample upload, label, start, "
        "status polls, pred and p[label] reads), or through the AXI4-Stream input (a frame of the sample's words "
        "and its label, one a cycle, which starts the run itself; averaged over a few samples). Each model runs on the "
        "MAC lanes of the synthesis target that builds it; cycles / ideal compares the train cycles with train MACs / "
        "lanes.",
        "",
        "| model | simulator | lanes | train cycles | train MACs | cycles / ideal | contraction | element-wise | "
        "softmax | sequencer | host (AXI-Lite) | host (stream) | update cycles | inference cycles | "
        "simulated cycles/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for v in r["rtl"].values():
        t, u = v["train_sample"], v["train_sample"]["units"]
        lines.append(
            f"| {v['model']} | {v['sim']} | {v['lanes']} | {t['cycles']} | {v['macs']['train_sample']} | "
            f"{t['cycles'] * v['lanes'] / v['macs']['train_sample']:.3f} | {u['contract']} | {u['ewise']} | "
            f"{u['sce']} | {t['sequencer_overhead']} | {t['host_cycles']} | "
            f"{v['train_stream']['host_cycles_per_sample']:.0f} | {v['update']['cycles']} | {v['infer']['cycles']} | "
            f"{v['sim_speed']['cycles_per_s']:.0f} |"
        )
    lines += [
        "",
        "## Training throughput of each synthesized target",
        "",
        "The clock a target's routed build runs at, from its committed synthesis baseline (scripts/qor_baselines): "
        "the PLL's where timing is met there, else the Fmax; cycles per training sample measured on the "
        "simulated RTL above (at the target's MAC lanes).",
        "",
        "| target | model | top | clock MHz | which clock | Fmax MHz | cycles per sample | training samples/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t, v in r["work"]["targets"].items():
        rate = f"{v['samples_per_s']:.1f}" if v["samples_per_s"] else "-"
        lines.append(
            f"| {t} | {v['model']} | {v['top']} | {v.get('clock_mhz') or '-'} | {v.get('clock_is', '')} | "
            f"{v['fmax_mhz'] or 'no Fmax (does not fit or not placed)'} | "
            f"{v['cycles_per_sample'] or 'not measured'} | {rate} |"
        )
    lines += ["", "| model | train MACs | infer MACs | measured cycles per sample |", "|---|---|---|---|"]
    for m, v in r["work"]["models"].items():
        lines.append(
            f"| {m} | {v['train_macs_per_sample']} | {v['infer_macs_per_sample']} | "
            f"{v['measured_cycles_per_sample'] or '-'} |"
        )
    vs = r.get("versus_cpu", {})
    if vs:
        lines += [
            "",
            "## The accelerator against CPU software (training samples/s, ratio accelerator / CPU)",
            "",
            "Accelerator cycles per sample: train_sample, the host's cycles around it (through the sample stream), "
            "and the update spread "
            "over its mini-batch, at the "
            "clock the target's routed build runs at (above). CPU figures from the next section (this machine, one "
            "core). The paper "
            "reports 59x against an "
            "embedded CPU it does not name; a desktop core is another class of machine. The rows at 128 lanes "
            "are measured cycles of a build no target fits yet (the planned engine: results/synth.md), at the "
            "same clock.",
            "",
            "| target | model | accelerator | float TT batch 1 | float TT batch 64 | bit-exact golden |",
            "|---|---|---|---|---|---|",
        ]
        for t, v in vs.items():
            sw = v["software_samples_per_s"]
            rows = [(v, "measured cycles")]
            if "planned_engine" in v:
                rows.append((v["planned_engine"], f"measured cycles at {v['planned_engine']['lanes']} lanes"))
            for x, label in rows:
                ra = x["ratio"]
                lines.append(
                    f"| {t} | {v['model']} | {x['samples_per_s']:.1f} ({label}) | {sw['float_tt_batch1']:.0f} "
                    f"({ra['float_tt_batch1']:.3f}x) | {sw['float_tt_batch64']:.0f} "
                    f"({ra['float_tt_batch64']:.4f}x) | {sw['golden']:.0f} ({ra['golden']:.3f}x) |"
                )
    lines += [
        "",
        "## CPU software on one core (samples/s)",
        "",
        "| model | float TT batch 1 | float TT batch 64 | float dense batch 64 | bit-exact golden "
        "(per CPU s) | bit-exact golden (wall) |",
        "|---|---|---|---|---|---|",
    ]
    for m, v in r["cpu"].items():
        g = v["golden"]
        lines.append(
            f"| {m} | {v['float_tt_batch1']:.0f} | {v['float_tt_batch64']:.0f} | "
            f"{v['float_dense_batch64']:.0f} | {g['samples_per_cpu_s']:.0f} | {g['samples_per_wall_s']:.0f} |"
        )
    lines += [
        "",
        "## Rank pruning shrinks the work",
        "",
        "The final live ranks of a rank-adapted run (accuracy section), recompiled and measured on the simulated "
        "RTL against the full ranks; and where the engine runs them faster, the ranks `python -m golden cost "
        "--fit-ranks` recompiles them at (golden/cost.py fit_ranks: per bond between the live and the built "
        "rank, the pruned slices kept zero), measured the same way. Plot: [pruning.png](pruning.png).",
        "",
        "| model | engine (lanes, buffer words, vector load, drain) | ranks (row) | train MACs | train cycles | "
        "cycles vs full | MACs vs full | inference cycles | update cycles |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    versions: dict = {}
    for v in r.get("pruning", {}).values():
        versions.setdefault(v["model"], (v.get("ranks_golden_version"), v.get("golden_version")))
        f, p = v["full"], v["pruned"]
        variants = [(f"{v['full_ranks']} (full)", f), (f"{v['ranks']} ({v['row']})", p)]
        if "fitted" in v:
            variants.append((f"{v['fitted']['ranks']} ({v['row']}, fitted to the engine)", v["fitted"]))
        for ranks, c in variants:
            lines.append(
                f"| {v['model']} | {tuple(v.get('engine', ()))} | {ranks} | {c['train_macs']} | "
                f"{c['train_cycles']} | {c['train_cycles'] / f['train_cycles']:.3f} | "
                f"{c['train_macs'] / f['train_macs']:.3f} | "
                f"{c['infer_cycles']} | {c['update_cycles']} |"
            )
    if versions:
        lines += [""] + [
            f"- {model}: the ranks come from an accuracy run of golden version {version_text(ranks_v)}, and the "
            f"programs were compiled and measured under golden version {version_text(measured_v)}."
            for model, (ranks_v, measured_v) in versions.items()
        ]
    lines += ["", "## Accuracy", ""]
    a = r.get("accelerator_accuracy")
    if a:
        lines += [
            f"The accelerator itself: `make train` on {a['model']} for {a['epochs']} epoch(s) (seed {a['seed']}) on "
            f"the simulated RTL ({a['executor']}, every sample checked in lock-step) reaches test accuracy "
            f"**{100 * a['rtl_test_acc']:.2f} %**; the golden model alone, same run: {100 * a['golden_test_acc']:.2f} "
            f"%. Final weights identical: **{'yes' if a['weights_identical'] else 'NO'}** ({a['tensors_compared']} "
            "tensors). The full schedules below run on the golden model, which the RTL equals bit for bit.",
            "",
        ]
    for name in r["accuracy"]:
        lines.append(f"See [accuracy-{name}.md](accuracy-{name}.md).")
    for name in r.get("bits", {}):
        lines.append(f"Accuracy against bits: [bits-{name}.md](bits-{name}.md).")
    return "\n".join(lines) + "\n"


def _by_day(refreshed: dict) -> dict:
    """{section: day} as {day: [sections]}, in order."""
    out: dict = {}
    for name, day in refreshed.items():
        out.setdefault(day, []).append(name)
    return out


def plot(r: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    models = list(r["memory"])
    kinds = sorted({k for v in r["memory"].values() for k in v["accelerator_bytes"]})
    bottom = np.zeros(len(models))
    for k in kinds:
        vals = np.array([r["memory"][m]["accelerator_bytes"].get(k, 0) / 1024 for m in models])
        ax.bar(models, vals, bottom=bottom, label=k)
        bottom += vals
    ax.set(ylabel="KiB", title="on-chip training state by kind")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "memory.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4))
    labels: list[str] = []
    rates: list[float] = []
    for m in ("digits", "paper"):
        c = r["cpu"][m]
        labels += [f"{m}\nfloat TT b1", f"{m}\nfloat TT b64", f"{m}\ngolden"]
        rates += [c["float_tt_batch1"], c["float_tt_batch64"], c["golden"]["samples_per_cpu_s"]]
    for t, v in r["work"]["targets"].items():
        if v["samples_per_s"]:
            labels.append(f"{v['model']}\n{t} RTL")
            rates.append(v["samples_per_s"])
    ax.bar(range(len(rates)), rates)
    ax.set_xticks(range(len(rates)), labels, fontsize=6, rotation=60)
    ax.set(yscale="log", ylabel="training samples/s", title="CPU vs accelerator at Fmax (measured cycles, 1 lane)")
    fig.tight_layout()
    fig.savefig(OUT / "throughput.png", dpi=100)
    plt.close(fig)
    if r.get("pruning"):
        plot_pruning(r["pruning"], plt)


def plot_pruning(pruning: dict, plt) -> None:
    """results/pruning.png: per model and engine, the train cycles and MACs of the pruned and fitted ranks relative
    to the full ranks' (1.0: no gain; the section's table)."""
    fig, ax = plt.subplots(figsize=(12, 4.5))
    labels: list[str] = []
    bars: dict[str, list[float]] = {"train cycles": [], "train MACs": []}
    for v in pruning.values():
        f = v["full"]
        for name, c in [("live", v["pruned"])] + ([("fitted", v["fitted"])] if "fitted" in v else []):
            lanes, _, vec, drain = v["engine"]
            engine = f"{lanes} lane{'s' * (lanes > 1)}" + (f"\nvec {vec}, drain {drain}" if vec > 1 else "\n")
            labels.append(f"{v['model']}, {engine}\n{name} {c.get('ranks', v['ranks'])}")
            bars["train cycles"].append(c["train_cycles"] / f["train_cycles"])
            bars["train MACs"].append(c["train_macs"] / f["train_macs"])
    x = np.arange(len(labels))
    for i, (name, vals) in enumerate(bars.items()):
        ax.bar(x + (i - 0.5) * 0.4, vals, 0.4, label=name)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set(ylabel="relative to the full ranks", title="rank pruning on the accelerator (simulated RTL)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "pruning.png", dpi=100)
    plt.close(fig)


SECTIONS = ("memory", "rtl", "work", "cpu", "versus_cpu", "accuracy", "accelerator_accuracy", "bits", "pruning")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the short subset (digits accuracy only, fewer batches)")
    ap.add_argument(
        "--sections",
        default=None,
        help=f"measure only these sections (comma-separated, of {', '.join(SECTIONS)}) into the existing "
        "results/bench.json, whose other sections keep their figures; BENCH.md says which were "
        "refreshed and when",
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    t0 = time.time()
    today = time.strftime("%Y-%m-%d")
    if args.sections:
        wanted = args.sections.split(",")
        unknown = [w for w in wanted if w not in SECTIONS]
        if unknown:
            ap.error(f"unknown sections {unknown}; the sections are {', '.join(SECTIONS)}")
        if not (OUT / "bench.json").exists():
            ap.error(f"--sections refreshes {OUT / 'bench.json'}, which does not exist: run make bench first")
        r = json.loads((OUT / "bench.json").read_text())
    else:
        wanted = list(SECTIONS)
        r = {
            "date": today,
            "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "quick": args.quick,
            "note": "Accelerator cycles are measured on the simulated RTL (at each target's MAC lanes), Fmax from "
            "the committed synthesis baselines of the accelerator top.",
        }

    def section(name, fn):
        if name not in wanted:
            return
        print(f"bench: {name} ({time.time() - t0:.0f} s)", flush=True)
        r[name] = fn()
        if args.sections:
            r.setdefault("refreshed", {})[name] = today

    # The speed sections first, on an idle machine; then the accelerator's training runs go to the background
    # while the accuracy tables use every core.
    section("memory", section_memory)
    section("rtl", lambda: section_rtl(args.quick))
    section("work", lambda: section_work(r["rtl"]))
    section("cpu", lambda: section_cpu(args.quick))
    section("versus_cpu", lambda: section_versus_cpu(r["work"], r["rtl"], r["cpu"]))
    accelerator_runs = start_accelerator_accuracy(args.quick) if "accelerator_accuracy" in wanted else None
    section("accuracy", lambda: section_accuracy(args.quick))
    section("accelerator_accuracy", lambda: finish_accelerator_accuracy(accelerator_runs))
    section("bits", section_bits)
    section("pruning", lambda: section_pruning(r["accuracy"], r["rtl"]))
    if not args.sections:
        r["wall_s"] = round(time.time() - t0)
    (OUT / "bench.json").write_text(json.dumps(r, indent=1, default=str))
    (OUT / "BENCH.md").write_text(markdown(r))
    plot(r)
    print((OUT / "BENCH.md").read_text())
    print(f"bench: done in {round(time.time() - t0)} s; results in {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
