"""Accuracy against bits: the bit-exact golden model of one model trained with narrower or wider number formats,
one format family at a time, beside the float TT reference. Writes results/bits-<model>-<dataset>.{json,md,png}.

Two sweeps, each changing one family and keeping the others at the config's formats:
  - compute cores: W bits (W - 1 fraction bits) with the master copy 4 bits wider, as the default 4/8;
  - activations, errors, gradients and momentum: W bits, fractions moved with the width (the adaptive ones
    then settle by shift control).
The runs are resumable golden training runs under build/bits/ and run in one worker process per core.

    python scripts/bits.py --model digits --dataset digits       # one short golden run per width and family
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from golden.checkpoint import golden_version
from golden.config_file import load_config
from golden.datasets import load_dataset
from golden.fxp import Fmt
from golden.train import Run, check_compatible
from scripts.accuracy import INPUT_ERRORS, refuse, run_args, worker_pool, write_results

ROOT = Path(__file__).resolve().parent.parent
CORE_BITS = (2, 3, 4, 5, 6, 8)
DATA_BITS = (8, 10, 12, 14, 16)
DATA_FAMILIES = ("act", "err", "bwd", "grad", "momentum")


def with_core_bits(cfg, w: int):
    f = replace(cfg.formats, core=Fmt(w, w - 1), master=Fmt(w + 4, w + 3))
    return replace(cfg, formats=f)


def with_data_bits(cfg, w: int):
    """Every data family `w` bits wide, keeping its integer bits where it can (16 - frac at the default)."""
    f = cfg.formats
    moved = {k: Fmt(w, max(getattr(f, k).frac - (getattr(f, k).width - w), f.frac_min)) for k in DATA_FAMILIES}
    return replace(cfg, formats=replace(f, **moved))


def run_point(sweep: str, bits: int, cfg, dataset: str, data_dir, seed: int, out: Path) -> dict:
    t0 = time.time()
    data = load_dataset(dataset, data_dir)
    rep = Run(cfg, data, seed, out, cfg.train.epochs).run()
    print(f"== {sweep} {bits} bits: test accuracy {rep['test_acc']:.4f}", flush=True)
    return {
        "sweep": sweep,
        "bits": bits,
        "test_acc": rep["test_acc"],
        "saturations": rep["saturations_total"],
        "wall_s": round(time.time() - t0, 1),
    }


def bits_table(model: str, dataset: str, data_dir=None, seed: int = 1, jobs: int | None = None) -> dict:
    from golden.float_train import train_float

    cfg = load_config(model)
    data = load_dataset(dataset, data_dir)
    check_compatible(cfg, data)
    tag = f"{cfg.name}-{data.name}"
    work = ROOT / "build" / "bits" / f"{tag}-seed{seed}-{golden_version()}"  # resumable, per golden version
    points = [("core", w, with_core_bits(cfg, w)) for w in CORE_BITS]
    points += [("data", w, with_data_bits(cfg, w)) for w in DATA_BITS]
    with worker_pool(jobs) as pool:
        futures = [pool.submit(run_point, s, w, c, dataset, data_dir, seed, work / f"{s}{w}") for s, w, c in points]
        rows = [f.result() for f in futures]
    ref = train_float(cfg, data, seed=seed, progress=False)["final_test_acc"]
    result = {
        "model": cfg.name,
        "dataset": data.name,
        "seed": seed,
        "epochs": cfg.train.epochs,
        "default": {
            "core": [cfg.formats.core.width, cfg.formats.core.frac],
            "data": [getattr(cfg.formats, k).width for k in DATA_FAMILIES],
        },
        "test_samples": len(data.test_y),
        "float_tt_acc": ref,
        "points": rows,
    }
    write_results(f"bits-{tag}", result, markdown, plot)
    return result


def markdown(r: dict) -> str:
    lines = [
        f"# Accuracy against bits: {r['model']} on {r['dataset']} (bit-exact golden, seed {r['seed']}, "
        f"{r['epochs']} epochs)",
        "",
        f"Float TT reference: {100 * r['float_tt_acc']:.2f}%. `core`: compute cores W bits, master W + 4. "
        f"`data`: activations, errors, gradients and momentum W bits. The other family stays at the "
        f"config's formats. One of the {r['test_samples']} test samples is "
        f"{100 / r['test_samples']:.2f} points.",
        "",
        "| sweep | bits | test accuracy | saturations | wall s |",
        "|---|---|---|---|---|",
    ]
    for p in r["points"]:
        lines.append(
            f"| {p['sweep']} | {p['bits']} | {100 * p['test_acc']:.2f}% | {p['saturations']} | {p['wall_s']} |"
        )
    return "\n".join(lines) + "\n"


def plot(r: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for ax, sweep, label in (
        (axes[0], "core", "compute core bits (master + 4)"),
        (axes[1], "data", "activation / error / gradient bits"),
    ):
        pts = [p for p in r["points"] if p["sweep"] == sweep]
        ax.plot([p["bits"] for p in pts], [100 * p["test_acc"] for p in pts], "o-", label="bit-exact golden")
        ax.axhline(100 * r["float_tt_acc"], color="gray", ls="--", label="float TT")
        ax.set(xlabel=label, xticks=[p["bits"] for p in pts])
        ax.grid(alpha=0.3)
    low = min(100 * p["test_acc"] for p in r["points"])
    axes[0].set(ylabel="test accuracy %", ylim=(min(low - 2, 100 * r["float_tt_acc"] - 5), 100.5))
    axes[0].legend()
    fig.suptitle(
        f"{r['model']} on {r['dataset']}: accuracy against bits "
        f"({r['test_samples']} test samples, {100 / r['test_samples']:.2f} points each)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_args(ap)
    a = ap.parse_args(argv)
    try:
        print(markdown(bits_table(a.model, a.dataset, a.data_dir, a.seed, a.jobs)))
    except INPUT_ERRORS as e:
        return refuse(e)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
