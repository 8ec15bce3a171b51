"""Accuracy table of one model on one dataset: float dense MLP, float TT, bit-exact low-precision TT (golden),
each TT row with and without rank adaptation. Writes results/accuracy-<model>-<dataset>.{json,md,png}.

The golden runs are resumable training runs under build/accuracy/ (run the command again after an
interruption and it continues); the float runs take seconds to minutes. The rows run in `--jobs` processes
(default: one per core, each with one BLAS thread), the two golden rows first, since they take longest. Examples,
the two tables results/ keeps:
    python scripts/accuracy.py --model paper --dataset fashion-mnist      # long: two bit-exact paper runs
    python scripts/accuracy.py --model digits --dataset digits            # short

Several seeds (`--seeds 1,2,3`, default rows golden,golden_rank): every row once per seed, each golden run in
its own per-seed directory (a seed's finished runs are reused), reported per seed with the mean and sample std
per row, the mean accuracy gap and parameter reduction of each row against its rank-adapted twin, and the
verdict on the rank target. Writes results/accuracy-<model>-<dataset>-seeds.{json,md}; the single-seed files
are left alone. Example:
    python scripts/accuracy.py --model paper --dataset fashion-mnist --seeds 1,2,3 --jobs 1

A subset of the data (`--train-first n`, `--test-first m`: the first n training and m test images, in the files'
order) is a data set of its own name (fashion-mnist-first6000), so its results and runs sit beside the full set's.
The rank schedule's options beyond the epoch form: `--prior-scaling map` and `--budget-target` (golden/config.py).
Example, the paper config's rank target on 6,000 Fashion-MNIST images:
    python scripts/accuracy.py --model paper --dataset fashion-mnist --train-first 6000 --seeds 1 --jobs 1 \
        --prior-scaling map --prior 2.4 --budget-target
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np

from golden.checkpoint import TrainError, golden_version
from golden.compiler import compile_network
from golden.config import ConfigError
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.datasets import Dataset, DatasetError, load_dataset
from golden.float_train import train_float
from golden.memory import dense_sizes, memory_report
from golden.train import Run, check_compatible
from verif.runner import environ

ROOT = Path(__file__).resolve().parent.parent


def first_images(data: Dataset, train_first: int | None, test_first: int | None) -> Dataset:
    """`data` cut to its first `train_first` training and `test_first` test images (None: all), named after the
    cut so that its runs and results do not mix with the whole set's."""
    name = data.name
    for split, n in (("train", train_first), ("test", test_first)):
        if n is None:
            continue
        have = len(getattr(data, f"{split}_y"))
        if not 1 <= n <= have:
            raise DatasetError(f"--{split}-first {n}: {data.name} has {have} {split} images; give 1..{have}")
        data = replace(
            data, **{f"{split}_x": getattr(data, f"{split}_x")[:n], f"{split}_y": getattr(data, f"{split}_y")[:n]}
        )
        name += f"-first{n}" if split == "train" else f"-test{n}"
    return replace(data, name=name)


def load_rows_data(dataset: str, data_dir, subset: tuple[int | None, int | None]) -> Dataset:
    return first_images(load_dataset(dataset, data_dir), *subset)


def golden_row(cfg, data, seed, out: Path) -> dict:
    run = Run(cfg, data, seed, out, cfg.train.epochs)
    rep = run.run()
    last = rep["history"][-1]
    budget: dict[str, Any] = {}
    if rep.get("rank_schedule"):
        rs = rep["rank_schedule"]
        budget = {k: rs[k] for k in ("budget_text", "budget_reached", "budget_reached_step", "prune_steps")}
    return {
        "budget": budget,
        "test_acc": rep["test_acc"],
        "ranks": last["ranks"],
        "core_params": last["live_core_params"],
        "samples_per_s": float(np.mean([h["samples_per_s"] for h in rep["history"]])),
        "curve": [h["test_acc"] for h in rep["history"]],
        "memory": rep["memory"],
    }


def float_row(cfg, data, seed, dense=False) -> dict:
    r = train_float(cfg, data, seed=seed, dense=dense, progress=True)
    return {
        "test_acc": r["final_test_acc"],
        "ranks": None if dense else r["live_ranks"][-1],
        "core_params": None if dense else r["core_params"][-1],
        "samples_per_s": r["samples_per_s"],
        "curve": list(r["test_acc"]),
    }


def run_row(
    name: str, cfg, dataset: str, data_dir, seed: int, out: Path, subset: tuple[int | None, int | None] = (None, None)
) -> dict:
    """One row, in a worker process: `cfg` is the plain or the rank-adapting config as the row needs."""
    t0 = time.time()
    data = load_rows_data(dataset, data_dir, subset)
    print(f"== {cfg.name}-{data.name}: {name}", flush=True)
    if name in ("golden", "golden_rank"):
        row = golden_row(cfg, data, seed, out)
    else:
        row = float_row(cfg, data, seed, dense=name == "dense")
    row["wall_s"] = round(time.time() - t0, 1)
    print(f"== {name}: test accuracy {row['test_acc']:.4f}", flush=True)
    return row


LONG_ROWS = ("golden", "golden_rank")  # started first, so the short rows fill the other workers


OFF = -1  # --end-epoch / --budget value for "none" (null in the config)


def table_setup(model, dataset, data_dir, epochs, rank_options, rows, subset=(None, None)):
    """What both tables start from: the config, its rank recipe, the dataset, the run tag, the rows to run and
    the config of each row."""
    cfg, plain, ranked = row_configs(model, epochs, rank_options)
    data = load_rows_data(dataset, data_dir, subset)
    check_compatible(cfg, data)
    row_cfg = {"dense": plain, "float": plain, "golden": plain, "float_rank": ranked, "golden_rank": ranked}
    return cfg, ranked.train.rank, data, f"{cfg.name}-{data.name}", row_names(rows), row_cfg


def version_span(start: str) -> str | dict:
    """The golden version that runs started under: `start`, or both ends when the golden model's modules changed
    while they ran (with a warning)."""
    end = golden_version()
    if end == start:
        return start
    print(f"warning: the golden model's modules changed during the runs (golden version {start} -> {end})")
    return {"start": start, "end": end}


def version_text(v: str | dict | None) -> str:
    """A golden_version field for a results page."""
    if v is None:
        return "(not recorded)"
    return v if isinstance(v, str) else f"{v['start']} (changed to {v['end']} during the runs)"


def accuracy_table(
    model: str,
    dataset: str,
    data_dir=None,
    seed: int = 1,
    epochs: int | None = None,
    rows: str = "dense,float,golden,float_rank,golden_rank",
    jobs: int | None = None,
    keep: bool = False,
    subset: tuple[int | None, int | None] = (None, None),
    **rank_options,
) -> dict:
    """Run the rows and write results/accuracy-<model>-<dataset>.{json,md,png}; returns the result.
    `rank_options`: train.rank settings of the rank rows over the config's (see row_configs). `keep`: rows without
    rank adaptation that are not run now are taken from the existing results file (same model, dataset, seed,
    epochs and recipe)."""
    cfg, rank, data, tag, names, row_cfg = table_setup(model, dataset, data_dir, epochs, rank_options, rows, subset)
    version = golden_version()
    row_out = golden_dirs(tag, seed, version, rank)
    order = sorted(names, key=lambda n: n not in LONG_ROWS)
    with worker_pool(jobs) as pool:
        futures = {
            n: pool.submit(run_row, n, row_cfg[n], dataset, data_dir, seed, row_out.get(n), subset) for n in order
        }
        results = {n: futures[n].result() for n in names}
    recipe = recipe_of(cfg)
    kept = kept_rows(f"accuracy-{cfg.name}-{data.name}", seed, cfg.train.epochs, recipe, names) if keep else {}
    results = {n: (results[n] if n in results else kept[n]) for n in LABELS if n in results or n in kept}

    comp = compile_network(row_cfg["golden"])
    result = {
        "model": cfg.name,
        "dataset": data.name,
        "seed": seed,
        "epochs": cfg.train.epochs,
        "recipe": recipe,
        "rank": rank_settings(rank),
        "kept_rows": sorted(kept),
        "dense_mlp": "-".join(map(str, dense_sizes(comp))),
        "core_params_full": sum(l.n_core_params for l in comp.cfg.layers),
        "rows": results,
        "golden_version": version_span(version),
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine()},
    }
    if "golden_rank" in results:
        result["memory_after_pruning"] = memory_report(comp, results["golden_rank"]["core_params"])
    write_results(f"accuracy-{tag}", result, markdown, plot)
    return result


def row_configs(model: str, epochs: int | None, rank_options: dict):
    """(the config, its plain copy without rank adaptation, its rank-adapting copy with the given settings).
    `rank_options`: train.rank fields (prior, threshold, warmup_epochs, end_epoch, budget); None keeps the config's,
    OFF (for end_epoch and budget) sets null."""
    cfg = load_config(model)
    if epochs:
        cfg = replace(cfg, train=replace(cfg.train, epochs=epochs))
    rk = cfg.train.rank
    d = config_to_dict(cfg)
    d["train"]["rank"]["enabled"] = True
    d["train"]["rank"].update({k: None if v == OFF else v for k, v in rank_options.items() if v is not None})
    try:
        ranked = config_from_dict(d)  # validated like a config file
    except ConfigError as e:
        raise SystemExit(f"error: {e}") from None
    plain = replace(cfg, train=replace(cfg.train, rank=replace(rk, enabled=False)))
    return cfg, plain, ranked


def row_names(rows: str) -> list[str]:
    names = rows.split(",")
    unknown = [n for n in names if n not in LABELS]
    if unknown:
        raise SystemExit(f"error: unknown row(s) {unknown}; expected some of {list(LABELS)}")
    return names


def golden_dirs(tag: str, seed: int, version: str, rank) -> dict:
    """The output directories of the two golden rows of one seed. One directory per seed and golden version: the
    runs resume after an interruption, and start afresh after a change of the golden model's modules."""
    work = ROOT / "build" / "accuracy" / f"{tag}-seed{seed}-{version}"
    rank_dir = (
        f"golden-rank-{rank.prior:g}-t{rank.threshold:g}-w{rank.warmup_epochs}"
        + ("" if rank.end_epoch is None else f"-e{rank.end_epoch}")
        + ("" if rank.budget is None else f"-b{rank.budget:g}")
        + ("" if rank.prior_scaling == "per_sample" else f"-{rank.prior_scaling}")
        + ("-target" if rank.budget_target else "")
    )
    return {"golden": work / "golden", "golden_rank": work / rank_dir}


def rank_settings(rank) -> dict:
    return {
        "prior": rank.prior,
        "threshold": rank.threshold,
        "warmup_epochs": rank.warmup_epochs,
        "end_epoch": rank.end_epoch,
        "budget": rank.budget,
        "prior_scaling": rank.prior_scaling,
        "budget_target": rank.budget_target,
    }


def recipe_of(cfg) -> dict:
    return {
        "optimizer": cfg.train.optimizer,
        "lr": cfg.train.lr,
        "momentum": cfg.train.momentum,
        "batch": cfg.train.batch,
    }


def parse_seeds(text: str) -> list[int]:
    """ "1,2,3" -> [1, 2, 3]: distinct integers, in the given order."""
    try:
        seeds = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise SystemExit(f"error: --seeds {text!r}: expected comma-separated integers such as 1,2,3") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise SystemExit(f"error: --seeds {text!r}: expected distinct comma-separated integers such as 1,2,3")
    return seeds


# The rank target: rank adaptation must remove at least 25 % of the core parameters for at most 0.5 points of
# accuracy against the same run without it. Checked on the mean over seeds of the golden pair, so that one seed's
# luck does not decide it.
class Target(TypedDict):
    base: str
    ranked: str
    min_reduction: float
    max_gap_points: float


TARGET: Target = {"base": "golden", "ranked": "golden_rank", "min_reduction": 0.25, "max_gap_points": 0.5}
PAIRS = (("golden", "golden_rank"), ("float", "float_rank"))  # each row without and with rank adaptation


class RowStats(TypedDict):
    """One row over the seeds (core parameters: None for a row without TT cores, e.g. the dense reference)."""

    test_acc: list[float]
    core_params: list[int | None]
    mean_test_acc: float
    std_test_acc: float
    mean_core_params: float | None
    std_core_params: float | None


class PairStats(TypedDict):
    """A row against its rank-adapted twin over the seeds."""

    base: str
    ranked: str
    gap_points: list[float]
    mean_gap_points: float
    std_gap_points: float
    sem_gap_points: float
    reduction: list[float]
    mean_reduction: float
    std_reduction: float
    reduction_of_mean_params: float


class Verdict(Target):
    """The rank target and whether the mean of its pair meets it."""

    pair: str
    mean_reduction: float
    mean_gap_points: float
    reduction_met: bool
    gap_met: bool
    met: bool


class Aggregate(TypedDict):
    seeds: list[int]
    rows: dict[str, RowStats]
    pairs: dict[str, PairStats]
    target: NotRequired[Verdict]  # only when the target's pair ran


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof 1; 0 for a single value)."""
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def _counted(params: list[int | None]) -> list[int] | None:
    """The core parameters of every seed, or None if a seed has none."""
    counted = [p for p in params if p is not None]
    return counted if len(counted) == len(params) else None


def aggregate(per_seed: dict[int, dict[str, dict]], target: Target = TARGET) -> Aggregate:
    """Statistics over seeds of {seed: {row name: row}} (rows as run_row returns them; only `test_acc` and
    `core_params` are read). Per row present in every seed: the per-seed accuracies and core parameters, their
    means and sample stds. Per pair (a row and its rank-adapted twin): the per-seed gap in accuracy points
    (row minus twin) and reduction in core parameters (1 - twin/row), their means, the paired std and standard
    error of the gap. `target`: the verdict on the rank target from the mean gap and the mean reduction."""
    seeds = sorted(per_seed)
    if not seeds:
        raise ValueError("no seeds")
    names = [n for n in LABELS if all(n in per_seed[s] for s in seeds)]
    rows: dict[str, RowStats] = {}
    for n in names:
        acc = [float(per_seed[s][n]["test_acc"]) for s in seeds]
        params: list[int | None] = [per_seed[s][n]["core_params"] for s in seeds]
        m, sd = _mean_std(acc)
        counted = _counted(params)
        pm = None if counted is None else _mean_std(counted)
        rows[n] = {
            "test_acc": acc,
            "core_params": params,
            "mean_test_acc": m,
            "std_test_acc": sd,
            "mean_core_params": None if pm is None else pm[0],
            "std_core_params": None if pm is None else pm[1],
        }
    pairs: dict[str, PairStats] = {}
    for base, ranked in PAIRS:
        if base not in rows or ranked not in rows:
            continue
        b, r = rows[base], rows[ranked]
        b_params, r_params = _counted(b["core_params"]), _counted(r["core_params"])
        b_mean, r_mean = b["mean_core_params"], r["mean_core_params"]
        if b_params is None or r_params is None or b_mean is None or r_mean is None:
            raise ValueError(f"{base}, {ranked}: a row without core parameters in some seed has no reduction")
        gap = [100 * (x - y) for x, y in zip(b["test_acc"], r["test_acc"])]
        red = [1 - y / x for x, y in zip(b_params, r_params)]
        g, gsd = _mean_std(gap)
        rm, rsd = _mean_std(red)
        pairs[f"{base}-{ranked}"] = {
            "base": base,
            "ranked": ranked,
            "gap_points": gap,
            "mean_gap_points": g,
            "std_gap_points": gsd,
            "sem_gap_points": gsd / np.sqrt(len(gap)),
            "reduction": red,
            "mean_reduction": rm,
            "std_reduction": rsd,
            "reduction_of_mean_params": 1 - r_mean / b_mean,
        }
    out: Aggregate = {"seeds": seeds, "rows": rows, "pairs": pairs}
    key = f"{target['base']}-{target['ranked']}"
    if key in pairs:
        p = pairs[key]
        # Accuracies are counts over the test set: round away the float noise of the subtraction before comparing.
        ok_red = round(p["mean_reduction"], 9) >= target["min_reduction"]
        ok_gap = round(p["mean_gap_points"], 9) <= target["max_gap_points"]
        out["target"] = {
            **target,
            "pair": key,
            "mean_reduction": p["mean_reduction"],
            "mean_gap_points": p["mean_gap_points"],
            "reduction_met": ok_red,
            "gap_met": ok_gap,
            "met": ok_red and ok_gap,
        }
    return out


def seeds_table(
    model: str,
    dataset: str,
    seeds: list[int],
    data_dir=None,
    epochs: int | None = None,
    rows: str = "golden,golden_rank",
    jobs: int | None = None,
    subset: tuple[int | None, int | None] = (None, None),
    **rank_options,
) -> dict:
    """Run the rows once per seed and write results/accuracy-<model>-<dataset>-seeds.{json,md}; returns the
    result. The golden runs go to the per-seed directories of accuracy_table, so finished runs of any seed
    (those of the single-seed table too) are reused and unfinished ones resume."""
    cfg, rank, data, tag, names, row_cfg = table_setup(model, dataset, data_dir, epochs, rank_options, rows, subset)
    version = golden_version()
    dirs = {s: golden_dirs(tag, s, version, rank) for s in seeds}
    # The long rows of every seed first, so the short rows fill the other workers.
    order = sorted(((s, n) for s in seeds for n in names), key=lambda sn: sn[1] not in LONG_ROWS)
    with worker_pool(jobs) as pool:
        futures = {
            (s, n): pool.submit(run_row, n, row_cfg[n], dataset, data_dir, s, dirs[s].get(n), subset) for s, n in order
        }
        per_seed = {s: {n: futures[s, n].result() for n in names} for s in seeds}
    result = {
        "model": cfg.name,
        "dataset": data.name,
        "seeds": seeds,
        "epochs": cfg.train.epochs,
        "recipe": recipe_of(cfg),
        "rank": rank_settings(rank),
        "golden_version": version_span(version),
        "golden_dirs": {str(s): {n: str(p.relative_to(ROOT)) for n, p in dirs[s].items() if n in names} for s in seeds},
        "core_params_full": sum(l.n_core_params for l in compile_network(row_cfg["golden"]).cfg.layers),
        "per_seed": {
            str(s): {
                n: {
                    k: row[k]
                    for k in ("test_acc", "ranks", "core_params", "samples_per_s", "wall_s", "curve", "budget")
                    if k in row
                }
                for n, row in per_seed[s].items()
            }
            for s in seeds
        },
        "stats": aggregate(per_seed),
        "machine": {"python": platform.python_version(), "cpu": platform.processor() or platform.machine()},
    }
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    stem = f"accuracy-{tag}-seeds"
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    (out / f"{stem}.md").write_text(markdown_seeds(result))
    return result


def kept_rows(stem: str, seed: int, epochs: int, recipe: dict, running: list[str]) -> dict:
    """The rows without rank adaptation of results/<stem>.json that this invocation does not run, if that file
    is of the same seed, epoch count and recipe (rank rows depend on the rank settings: never kept)."""
    path = ROOT / "results" / f"{stem}.json"
    if not path.is_file():
        return {}
    old = json.loads(path.read_text())
    if (old.get("seed"), old.get("epochs"), old.get("recipe")) != (seed, epochs, recipe):
        print(f"note: {path} is of another seed, epoch count or recipe: no rows kept")
        return {}
    return {n: row for n, row in old["rows"].items() if n in ("dense", "float", "golden") and n not in running}


@contextmanager
def worker_pool(jobs: int | None):
    """Worker processes (default one per core), each with one BLAS thread: the runs are the parallelism.
    spawn: the children import numpy afresh, under the one-thread setting."""
    with environ({v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}):
        with ProcessPoolExecutor(
            max_workers=jobs or os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")
        ) as pool:
            yield pool


def run_args(ap: argparse.ArgumentParser) -> None:
    """The options every results script shares: what to train, and how many worker processes."""
    ap.add_argument("--model", default="digits")
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")


def write_results(stem: str, result: dict, markdown, plot) -> None:
    """results/<stem>.json, .md and .png."""
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    (out / f"{stem}.md").write_text(markdown(result))
    plot(result, out / f"{stem}.png")


# A model, dataset or pairing of the two that cannot train is refused with these before any run starts
INPUT_ERRORS = (ConfigError, DatasetError, TrainError)


def refuse(e: Exception) -> int:
    """One line on stderr and exit status 2, as make train and python -m golden refuse bad input."""
    print(f"error: {e}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    try:
        return tables(argv)
    except INPUT_ERRORS as e:
        return refuse(e)


def tables(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_args(ap)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--prior", type=float, default=None, help="rank prior (default: the config's)")
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument(
        "--end-epoch",
        type=int,
        default=None,
        help="rank adaptation stops before this epoch (0-based) and the rest fine-tunes at the pruned "
        f"ranks (default: the config's; {OFF}: no end)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="rank adaptation also stops once the live core parameters are at most this fraction of the "
        f"full count (default: the config's; {OFF}: none)",
    )
    ap.add_argument(
        "--prior-scaling",
        choices=("per_sample", "map"),
        default=None,
        help="the prior per training sample or per data set, scaled by batch / N (default: the config's)",
    )
    ap.add_argument(
        "--budget-target",
        action="store_true",
        help="the budget is a target the prune phase reaches, pruning the smallest lambdas where the prior lags",
    )
    ap.add_argument("--train-first", type=int, default=None, help="train on the first n training images only")
    ap.add_argument("--test-first", type=int, default=None, help="test on the first n test images only")
    ap.add_argument(
        "--rows",
        default=None,
        help="comma-separated rows (default: dense,float,golden,float_rank,golden_rank; with --seeds: "
        "golden,golden_rank)",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the dense, float and golden rows not run now from the existing results file",
    )
    ap.add_argument(
        "--seeds",
        default=None,
        help="comma-separated seeds, e.g. 1,2,3: run the rows once per seed and write the statistics "
        "over seeds to results/accuracy-<model>-<dataset>-seeds.{json,md} (instead of --seed)",
    )
    a = ap.parse_args(argv)
    rank_options = {
        "prior": a.prior,
        "threshold": a.threshold,
        "warmup_epochs": a.warmup,
        "end_epoch": a.end_epoch,
        "budget": a.budget,
        "prior_scaling": a.prior_scaling,
        "budget_target": True if a.budget_target else None,
    }
    subset = (a.train_first, a.test_first)
    if a.seeds is not None:
        if a.keep:
            raise SystemExit("error: --keep is for the single-seed table, not with --seeds")
        result = seeds_table(
            a.model,
            a.dataset,
            parse_seeds(a.seeds),
            a.data_dir,
            a.epochs,
            a.rows or "golden,golden_rank",
            a.jobs,
            subset,
            **rank_options,
        )
        print(markdown_seeds(result))
        return 0
    result = accuracy_table(
        a.model,
        a.dataset,
        a.data_dir,
        a.seed,
        a.epochs,
        a.rows or "dense,float,golden,float_rank,golden_rank",
        a.jobs,
        a.keep,
        subset,
        **rank_options,
    )
    print(markdown(result))
    return 0


LABELS = {
    "dense": "float dense MLP",
    "float": "float TT",
    "golden": "low-precision TT (bit-exact golden)",
    "float_rank": "float TT + rank adaptation",
    "golden_rank": "low-precision TT + rank adaptation",
}


def markdown(r: dict) -> str:
    lines = [
        f"# Accuracy: {r['model']} on {r['dataset']} (seed {r['seed']}, {r['epochs']} epochs, "
        f"{r['recipe']['optimizer']} lr {r['recipe']['lr']} momentum {r['recipe']['momentum']} "
        f"batch {r['recipe']['batch']})",
        "",
        f"Rank adaptation: prior {r['rank']['prior']:g}, threshold {r['rank']['threshold']:g}, "
        f"warm-up {r['rank']['warmup_epochs']} epochs" + end_note(r) + ". "
        f"Full TT core parameters: {r['core_params_full']}. Dense reference: {r['dense_mlp']}. "
        f"Golden version {version_text(r.get('golden_version'))}."
        + (
            ""
            if not r.get("kept_rows")
            else f" Rows kept from the previous results file (not rerun): "
            f"{', '.join(LABELS[n] for n in r['kept_rows'])}."
        ),
        "",
        "| row | test accuracy | live ranks | core parameters | samples/s |",
        "|---|---|---|---|---|",
    ]
    for name, row in r["rows"].items():
        lines.append(
            f"| {LABELS[name]} | {100 * row['test_acc']:.2f}% | {row['ranks'] or '-'} | "
            f"{row['core_params'] if row['core_params'] is not None else '-'} | "
            f"{row['samples_per_s']:.0f} |"
        )
    if "memory_after_pruning" in r:
        m = r["memory_after_pruning"]
        lines += [
            "",
            f"Parameter-only ratio after pruning (FP32 dense {m['dense_mlp']} weights vs "
            f"{m['live_core_params']} live 4-bit core parameters): {m['parameter_only_ratio']:.0f}x.",
            f"Whole on-chip training state: {m['accelerator_total_bytes']} bytes "
            f"({m['accelerator_total_bytes'] / 1024:.1f} KiB).",
        ]
    return "\n".join(lines) + "\n"


def markdown_seeds(r: dict) -> str:
    """The statistics over seeds: per-seed accuracy and core parameters of every row, mean and sample std, and
    per pair the gap and reduction with the verdict on the rank target."""
    st = r["stats"]
    seeds = st["seeds"]
    lines = [
        f"# Accuracy over seeds: {r['model']} on {r['dataset']} (seeds {', '.join(map(str, seeds))}, "
        f"{r['epochs']} epochs, {r['recipe']['optimizer']} lr {r['recipe']['lr']} momentum "
        f"{r['recipe']['momentum']} batch {r['recipe']['batch']})",
        "",
        f"Rank adaptation: prior {r['rank']['prior']:g}, threshold {r['rank']['threshold']:g}, "
        f"warm-up {r['rank']['warmup_epochs']} epochs" + end_note({**r, "rows": st["rows"]}) + ". "
        f"Full TT core parameters: {r['core_params_full']}. Golden version {version_text(r['golden_version'])}. "
        f"std: sample standard deviation over the seeds (ddof 1).",
        "",
        "Test accuracy:",
        "",
        "| row | " + " | ".join(f"seed {s}" for s in seeds) + " | mean | std |",
        "|---" * (len(seeds) + 3) + "|",
    ]
    for name, row in st["rows"].items():
        lines.append(
            f"| {LABELS[name]} | "
            + " | ".join(f"{100 * a:.2f}%" for a in row["test_acc"])
            + f" | {100 * row['mean_test_acc']:.3f}% | {100 * row['std_test_acc']:.3f} |"
        )
    lines += [
        "",
        "Core parameters (live ranks):",
        "",
        "| row | " + " | ".join(f"seed {s}" for s in seeds) + " | mean |",
        "|---" * (len(seeds) + 2) + "|",
    ]
    for name, row in st["rows"].items():
        if row["mean_core_params"] is None:
            continue
        ps = r.get("per_seed", {})
        cells = [
            f"{p} {ps[str(s)][name]['ranks']}" if name in ps.get(str(s), {}) else f"{p}"
            for s, p in zip(seeds, row["core_params"])
        ]
        lines.append(f"| {LABELS[name]} | " + " | ".join(cells) + f" | {row['mean_core_params']:.1f} |")
    budgets = {
        s: row["budget"] for s, rows in r.get("per_seed", {}).items() for n, row in rows.items() if row.get("budget")
    }
    if budgets:
        lines += [
            "",
            "Rank budget ("
            + LABELS["golden_rank"]
            + "): "
            + "; ".join(
                f"seed {s}: {b['budget_text']} "
                + (
                    f"reached after mini-batch {b['budget_reached_step']} ({b['prune_steps']} steps of pruning)"
                    if b["budget_reached"]
                    else "not reached (the closest result)"
                )
                for s, b in budgets.items()
            )
            + ".",
        ]
    for p in st["pairs"].values():
        lines += [
            "",
            f"{LABELS[p['base']]} against {LABELS[p['ranked']]}: accuracy gap (without minus with rank "
            "adaptation) per seed "
            + ", ".join(f"{g:.2f}" for g in p["gap_points"])
            + f" points, mean {p['mean_gap_points']:.3f} (std {p['std_gap_points']:.3f}, standard error "
            f"{p['sem_gap_points']:.3f}); core parameters fewer per seed "
            + ", ".join(f"{100 * x:.1f}%" for x in p["reduction"])
            + f", mean {100 * p['mean_reduction']:.1f}%.",
        ]
    t = st.get("target")
    if t:
        lines += [
            "",
            f"Target ({LABELS[t['ranked']]} against {LABELS[t['base']]}: at least "
            f"{100 * t['min_reduction']:.0f}% fewer core parameters at <= {t['max_gap_points']} points "
            f"lower mean accuracy): **{'met' if t['met'] else 'not met'}** "
            f"(mean reduction {100 * t['mean_reduction']:.1f}%: {'ok' if t['reduction_met'] else 'short'}; "
            f"mean gap {t['mean_gap_points']:.3f} points: {'ok' if t['gap_met'] else 'too large'}).",
        ]
    return "\n".join(lines) + "\n"


def end_note(r: dict) -> str:
    end, budget = r["rank"].get("end_epoch"), r["rank"].get("budget")
    note = ", prior scaled by batch / N (MAP)" if r["rank"].get("prior_scaling") == "map" else ""
    note += ", pruning to the end of the run" if end is None else f", prune phase to epoch {end}"
    if budget is not None:
        note += f" or until the live core parameters are at most {budget:g} of the full count" + (
            " (a target: the smallest lambdas pruned where the prior lags)" if r["rank"].get("budget_target") else ""
        )
    if end is not None or budget is not None:
        note += ", then fine-tuning at the pruned ranks with the penalty off"
    return note


def plot(r: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, row in r["rows"].items():
        ax.plot(range(1, len(row["curve"]) + 1), [100 * a for a in row["curve"]], marker="o", label=LABELS[name])
    ax.set(xlabel="epoch", ylabel="test accuracy (%)", title=f"{r['model']} on {r['dataset']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
