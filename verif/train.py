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

A co-simulated run trains COSIM_EPOCHS epochs unless --epochs is given (the config's count on the golden model): a
digits epoch takes minutes on the simulated RTL, and the first `make train` should end in a few; `--epochs 20`
(EPOCHS=20) is the config's full run. The simulator's build output goes to build.log in its build directory and
cocotb logs only warnings (COCOTB_LOG_LEVEL, GPI_LOG_LEVEL given in the environment win), so the terminal shows the
run; it ends with one summary: test accuracy, whether the accelerator's final state equals the golden model's, the
files written.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from golden import program as P
from golden.checkpoint import CHECKPOINT, TrainError, load_checkpoint, locked
from golden.compiler import CompileError
from golden.config import ConfigError
from golden.config_file import load_config
from golden.cost import cut_to_lanes
from golden.datasets import DatasetError, load_dataset
from golden.run_report import summary
from golden.train import CHECKPOINT_EVERY_S, GOLDEN_ONLY, Run, check_args, check_run
from verif.rtl_device import CHECKS

ROOT = Path(__file__).resolve().parent.parent
COSIM_EPOCHS = 2  # a co-simulated run's epochs unless --epochs is given (at most the config's)
INTERRUPTED = "interrupted"  # in OUT/sim: the simulated run stopped on request (SIGINT, SIGTERM) with its checkpoint


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="digits")
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"at least 1; default: the config's train.epochs on the golden model, at most {COSIM_EPOCHS} co-simulated",
    )
    ap.add_argument("--seed", type=int, default=1, help="the one seed behind the run (0..2^32-1)")
    ap.add_argument(
        "--optimizer",
        default=None,
        choices=("sgd", "adam"),
        help="the config's optimizer unless given (adam: the accelerator is built with its Adam ops)",
    )
    ap.add_argument(
        "--rank-adaptation",
        action="store_true",
        help="rank adaptation on whatever the config says (the accelerator is built with its rank unit; "
        "the config's prior, threshold and phases)",
    )
    ap.add_argument("--sim", default="verilator", choices=("verilator", "icarus", "golden"))
    ap.add_argument("--check", default="sample", choices=CHECKS)
    ap.add_argument(
        "--out",
        default=None,
        help="output directory (default build/train/<model>-<dataset>-seed<seed>-"
        "<sim>[-<optimizer>][-rank]; resumes if it holds a checkpoint)",
    )
    ap.add_argument("--lanes", type=int, default=8, help="MAC lanes of the contraction engine (default 8)")
    ap.add_argument("--buf-depth", type=int, default=512, help="words per lane buffer (default 512)")
    ap.add_argument(
        "--vec",
        type=int,
        default=8,
        help="words a vector load reads into the lane buffers (default 8; "
        "a power of two is cut to the largest one within the lanes; "
        "1: one word a cycle)",
    )
    ap.add_argument(
        "--drain",
        type=int,
        default=8,
        help="elements the contraction engine's drain writes a cycle (default 8, cut to --vec; 1: one a cycle)",
    )
    ap.add_argument("--interrupt-after", type=int, default=0, help=argparse.SUPPRESS)  # tests: a Ctrl-C after n batches
    ap.add_argument(
        "--checkpoint-every", type=float, default=CHECKPOINT_EVERY_S, help=argparse.SUPPRESS
    )  # tests: seconds between checkpoints within an epoch (0: every batch)
    a = ap.parse_args(argv)
    try:
        check_args(a.epochs, a.seed)
        cfg = load_config(a.model)
        full_epochs = cfg.train.epochs
        epochs = (
            a.epochs if a.epochs is not None else full_epochs if a.sim == "golden" else min(COSIM_EPOCHS, full_epochs)
        )
        cfg = replace(cfg, train=replace(cfg.train, epochs=epochs))
        if a.optimizer:
            cfg = replace(cfg, train=replace(cfg.train, optimizer=a.optimizer))
        if a.rank_adaptation:
            cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
        data = load_dataset(a.dataset, a.data_dir)
        comp = check_run(cfg, data, cfg.train.epochs)
        if a.sim != "golden":
            vec, drain = cut_to_lanes(a.lanes, a.vec, a.drain)
            params = P.params_for(comp, lanes=a.lanes, buf_depth=a.buf_depth, vec=vec, drain=drain)
            P.assemble(comp, params, {n: t.fmt.frac for n, t in comp.tensors.items()}, host_step=(1, 0))
    except (ConfigError, DatasetError, CompileError, P.ProgramError, TrainError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    # an optimizer other than the config's, or rank adaptation switched on: another run
    suffix = (f"-{a.optimizer}" if a.optimizer else "") + ("-rank" if a.rank_adaptation else "")
    out = Path(a.out or default_out(cfg, data.name, a.seed, a.sim, suffix, full_epochs))
    shortened = f" (EPOCHS={full_epochs} for the config's full run)" if epochs < full_epochs else ""
    print(
        f"seed {a.seed}  model {cfg.name}  dataset {data.name} ({len(data.train_y)} train / {len(data.test_y)} "
        f"test)  epochs {epochs}{shortened}  batch {cfg.train.batch}  device {a.sim}  check {a.check}  "
        f"lanes {a.lanes}  out {out}",
        flush=True,
    )
    try:
        with locked(out):
            if a.sim == "golden":
                report = Run(cfg, data, a.seed, out, cfg.train.epochs).run()
                print(summary(report, out, GOLDEN_ONLY))
                return 0
            # the run inside the simulator refuses such a checkpoint too, but only once the accelerator is built
            load_checkpoint(out / CHECKPOINT, cfg, data, a.seed, cfg.train.epochs, comp)
            return cosimulate(a, cfg, params, out, suffix)
    except TrainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def default_out(cfg, dataset: str, seed: int, sim: str, suffix: str, full_epochs: int) -> Path:
    """build/train/<model>-<dataset>-seed<seed>-<sim><suffix>, and -<n>epochs for a count other than the config's
    under a learning-rate schedule that spans the run: two such runs could not resume one another, so the short
    co-simulated default and EPOCHS=<the config's> each have their own directory."""
    spans = (
        f"-{cfg.train.epochs}epochs" if cfg.train.epochs != full_epochs and cfg.train.lr_schedule != "constant" else ""
    )
    return ROOT / "build" / "train" / f"{cfg.name}-{dataset}-seed{seed}-{sim}{suffix}{spans}"


def cosimulate(a: argparse.Namespace, cfg, params: P.AccelParams, out: Path, suffix: str) -> int:
    """Build the accelerator for `params` and run verif/top/tb_train.py's training in the simulator `a.sim`."""
    from verif.runner import BUILD, run_block
    from verif.top.accel_env import hdl_parameters, long_run_build_args
    from verif.top.test_tt_accel import SOURCES

    model = str(Path(a.model).resolve()) if Path(a.model).is_file() else a.model  # the simulator runs elsewhere
    os.environ.update(
        {
            "TRAIN_MODEL": model,
            "TRAIN_DATASET": a.dataset,
            "TRAIN_DATA_DIR": a.data_dir or "",
            "TRAIN_EPOCHS": str(cfg.train.epochs),
            "TRAIN_OPTIMIZER": cfg.train.optimizer,
            "TRAIN_RANK": "1" if cfg.train.rank.enabled else "",
            "TRAIN_SEED": str(a.seed),
            "TRAIN_CHECK": a.check,
            "TRAIN_OUT": str(out.resolve()),
            "TRAIN_INTERRUPT_AFTER": str(a.interrupt_after),
            "TRAIN_CHECKPOINT_EVERY": str(a.checkpoint_every),
        }
    )
    os.environ.setdefault("SEED", str(a.seed))
    # cocotb's start-up banner and per-test table are INFO; the run prints its own progress and summary
    os.environ.setdefault("COCOTB_LOG_LEVEL", "WARNING")
    os.environ.setdefault("GPI_LOG_LEVEL", "WARNING")
    # Ctrl-C reaches the simulator too, whose run saves a checkpoint and stops: wait for it instead of dying (and
    # killing it mid-save). A handler, not SIG_IGN, so that the simulator does not inherit the ignoring.
    interrupted = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
    (out / "sim" / INTERRUPTED).unlink(missing_ok=True)
    try:
        run_block(
            toplevel="tt_accel",
            sources=SOURCES,
            parameters=hdl_parameters(params),
            sim=a.sim,
            test_module="verif.top.tb_train",
            testcase="train",
            build_args=long_run_build_args(a.sim),
            build_dir=BUILD
            / "train"
            / f"{cfg.name}-lanes{a.lanes}x{a.buf_depth}-vec{params.vec}-drain{params.drain}{suffix}"
            / a.sim,
            test_dir=out / "sim",
        )
    except AssertionError as e:
        if interrupted:
            return 130  # the run said where its checkpoint is
        print(f"error: the co-simulated run failed (see {out / 'sim'}): {e}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, previous)
    if (out / "sim" / INTERRUPTED).exists():
        return 130  # the run said where its checkpoint is
    report = json.loads((out / "report.json").read_text())
    exact, verdict = bit_exact_verdict(out, a.check)
    print(summary(report, out, verdict))
    return 0 if exact else 1


def bit_exact_verdict(out: Path, check: str) -> tuple[bool, str]:
    """Whether the accelerator's final state, read back over its host bus (rtl_state.npz), equals the golden
    model's trained tensors (weights.npz), and the sentence that says so and what was checked during the run."""
    with np.load(out / "rtl_state.npz") as rtl, np.load(out / "weights.npz") as golden:
        names = sorted(set(rtl.files) & set(golden.files))
        differing = [n[len("mem/") :] for n in names if not np.array_equal(rtl[n], golden[n])]
    during = (
        "; the run was not checked in lock-step (CHECK=off)"
        if check == "off"
        else f"; every {'op' if check == 'every' else check} was checked in lock-step (CHECK={check})"
    )
    if not names or differing:
        return False, (
            f"NOT bit-exact: the accelerator's final {', '.join(differing) or 'state'} differs from the "
            f"golden model's{during}"
        )
    return True, (
        f"bit-exact: the accelerator's final weights, read back over AXI4-Lite, equal the golden "
        f"model's ({len(names)} tensors){during}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
