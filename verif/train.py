"""`make train`: train a TT network on the co-simulated accelerator, checked in lock-step by the golden model.

    python -m verif.train [--model digits] [--dataset digits] [--data-dir DIR] [--epochs N] [--seed N]
                          [--optimizer sgd|adam] [--rank-adaptation] [--sim verilator|icarus|golden]
                          [--check every|sample|batch|off] [--out DIR]

Everything that can be wrong with the inputs (arguments, model, dataset files, sizes, a network the accelerator
cannot hold or run, a checkpoint in OUT that this run cannot resume, another run on OUT) fails here with one line,
before any simulation starts. Then the accelerator is built for the model
(rtl/tt_accel.v parameters from golden/program.py params_for) and verif/top/tb_train.py runs golden/train.py's
Run in the simulator: the same progress lines, report.json, plots, weights and resumable checkpoints as a
golden run, plus the device's cycle counts. `--sim golden` trains on the golden model alone (fast).
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from golden import program as P
from golden.compiler import CompileError
from golden.config import ConfigError, load_config
from golden.datasets import DatasetError, load_dataset
from golden.train import (
    CHECKPOINT,
    Run,
    TrainError,
    check_args,
    check_run,
    load_checkpoint,
    locked,
)
from verif.rtl_device import CHECKS

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="digits")
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--epochs", type=int, default=None, help="the config's train.epochs unless given (at least 1)")
    ap.add_argument("--seed", type=int, default=1, help="the one seed behind the run (0..2^32-1)")
    ap.add_argument("--optimizer", default=None, choices=("sgd", "adam"),
                    help="the config's optimizer unless given (adam: the accelerator is built with its Adam ops)")
    ap.add_argument("--rank-adaptation", action="store_true",
                    help="rank adaptation on whatever the config says (the accelerator is built with its rank unit; "
                         "the config's prior, threshold and phases)")
    ap.add_argument("--sim", default="verilator", choices=("verilator", "icarus", "golden"))
    ap.add_argument("--check", default="sample", choices=CHECKS)
    ap.add_argument("--out", default=None, help="output directory (default build/train/<model>-<dataset>-seed<seed>-"
                                                "<sim>[-<optimizer>][-rank]; resumes if it holds a checkpoint)")
    ap.add_argument("--lanes", type=int, default=8, help="MAC lanes of the contraction engine (default 8)")
    ap.add_argument("--buf-depth", type=int, default=512, help="words per lane buffer (default 512)")
    ap.add_argument("--vec", type=int, default=8, help="words a vector load reads into the lane buffers (default 8; "
                                                       "a power of two is cut to the largest one within the lanes; "
                                                       "1: one word a cycle)")
    ap.add_argument("--drain", type=int, default=8, help="elements the contraction engine's drain writes a cycle "
                                                         "(default 8, cut to --vec; 1: one a cycle)")
    ap.add_argument("--interrupt-after", type=int, default=0, help=argparse.SUPPRESS)  # tests: a Ctrl-C after n batches
    a = ap.parse_args(argv)
    try:
        check_args(a.epochs, a.seed)
        cfg = load_config(a.model)
        if a.epochs is not None:
            cfg = replace(cfg, train=replace(cfg.train, epochs=a.epochs))
        if a.optimizer:
            cfg = replace(cfg, train=replace(cfg.train, optimizer=a.optimizer))
        if a.rank_adaptation:
            cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
        data = load_dataset(a.dataset, a.data_dir)
        comp = check_run(cfg, data, cfg.train.epochs)
        if a.sim != "golden":
            vec, drain = P.cut_to_lanes(a.lanes, a.vec, a.drain)
            params = P.params_for(comp, lanes=a.lanes, buf_depth=a.buf_depth, vec=vec, drain=drain)
            P.assemble(comp, params, {n: t.fmt.frac for n, t in comp.tensors.items()}, host_step=(1, 0))
    except (ConfigError, DatasetError, CompileError, P.ProgramError, TrainError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # an optimizer other than the config's, or rank adaptation switched on: another run
    suffix = (f"-{a.optimizer}" if a.optimizer else "") + ("-rank" if a.rank_adaptation else "")
    out = Path(a.out or ROOT / "build" / "train" / f"{cfg.name}-{data.name}-seed{a.seed}-{a.sim}{suffix}")
    print(f"seed {a.seed}  model {cfg.name}  dataset {data.name} ({len(data.train_y)} train / {len(data.test_y)} "
          f"test)  epochs {cfg.train.epochs}  batch {cfg.train.batch}  device {a.sim}  check {a.check}  lanes {a.lanes}"
          f"  out {out}")
    try:
        with locked(out):
            if a.sim == "golden":
                report = Run(cfg, data, a.seed, out, cfg.train.epochs).run()
                print(f"test accuracy {report['test_acc']:.4f}")
                return 0
            # the run inside the simulator refuses such a checkpoint too, but only once the accelerator is built
            load_checkpoint(out / CHECKPOINT, cfg, data, a.seed, cfg.train.epochs, comp)
            return cosimulate(a, cfg, params, out, suffix)
    except TrainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def cosimulate(a: argparse.Namespace, cfg, params: P.AccelParams, out: Path, suffix: str) -> int:
    """Build the accelerator for `params` and run verif/top/tb_train.py's training in the simulator `a.sim`."""
    from verif.runner import BUILD, run_block
    from verif.top.accel_env import hdl_parameters, long_run_build_args
    from verif.top.test_tt_accel import SOURCES
    model = str(Path(a.model).resolve()) if Path(a.model).is_file() else a.model  # the simulator runs elsewhere
    os.environ.update({"TRAIN_MODEL": model, "TRAIN_DATASET": a.dataset, "TRAIN_DATA_DIR": a.data_dir or "",
                       "TRAIN_EPOCHS": str(cfg.train.epochs), "TRAIN_OPTIMIZER": cfg.train.optimizer,
                       "TRAIN_RANK": "1" if cfg.train.rank.enabled else "",
                       "TRAIN_SEED": str(a.seed), "TRAIN_CHECK": a.check,
                       "TRAIN_OUT": str(out.resolve()), "TRAIN_INTERRUPT_AFTER": str(a.interrupt_after)})
    os.environ.setdefault("SEED", str(a.seed))
    try:
        run_block(toplevel="tt_accel", sources=SOURCES, parameters=hdl_parameters(params), sim=a.sim,
                  test_module="verif.top.tb_train", testcase="train", build_args=long_run_build_args(a.sim),
                  build_dir=BUILD / "train" / f"{cfg.name}-lanes{a.lanes}x{a.buf_depth}-vec{params.vec}-drain{params.drain}{suffix}" / a.sim,
                  test_dir=out / "sim")
    except AssertionError as e:
        print(f"error: the co-simulated run failed (see {out / 'sim'}): {e}", file=sys.stderr)
        return 1
    print(f"wrote {out / 'report.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
