"""Training driver: data, mini-batches, epochs, the calibration, the prune phase (golden/prune_phase.py),
checkpoints that resume bit-exactly (golden/checkpoint.py), reports and plots (golden/run_report.py).

The device it drives is a golden/device.py Device: the golden model here (GoldenDevice); the co-simulated RTL uses
the same loop. The host's policy (mini-batches, calibration) is golden/device.py's, the same for both.

Nothing a run was given is trusted: `check_args` and `check_run` refuse settings that cannot train (before any file
is written) with a TrainError that names the setting and what to do; golden/checkpoint.py refuses a checkpoint or an
output directory the run cannot use. report.json, weights.npz and the checkpoint are replaced whole, so a failed run
leaves the last good ones.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from golden.checkpoint import (
    CHECKPOINT,
    TrainError,
    content_digest,
    load_checkpoint,
    locked,
    replace_file,
    replace_npz,
    run_identity,
)
from golden.compiler import compile_network
from golden.config import NetConfig
from golden.config_file import config_to_dict, load_config
from golden.datasets import Dataset, load_dataset
from golden.device import Device, GoldenDevice, calibrate, check_device, train_batch
from golden.float_tt import init_tt_cores
from golden.ir import Compiled
from golden.machine import Machine
from golden.memory import memory_report
from golden.prune_phase import PrunePhase
from golden.rank_schedule import RankBudget, RankSchedule
from golden.run_report import RunProgress, device_rate, plot_history, summary

CHECKPOINT_EVERY_S = 30.0
GOLDEN_ONLY = "bit-exact: not applicable, the golden model alone trained (no RTL)"
SEED_MAX = 2**32 - 1  # numpy's legacy seeding in the cocotb modules takes 32 bits


def init_float_params(cfg: NetConfig, rng: np.random.Generator):
    """The float initial parameters the float and fixed-point runs of one seed share."""
    cores = [init_tt_cores(layer, rng, dtype=np.float64) for layer in cfg.layers]
    biases = [np.zeros(layer.n_out) for layer in cfg.layers]
    return cores, biases


def check_args(epochs: int | None, seed: int) -> None:
    """The command line's --epochs (None: the config's) and --seed, which make passes as EPOCHS and SEED."""
    if epochs is not None and epochs < 1:
        raise TrainError(
            f"--epochs {epochs} (EPOCHS): a run trains at least 1 epoch; leave it out for the config's train.epochs"
        )
    if not 0 <= seed <= SEED_MAX:
        raise TrainError(f"--seed {seed} (SEED): must be in 0..{SEED_MAX}")


def check_compatible(cfg: NetConfig, data: Dataset) -> None:
    d = data.train_x.shape[1]
    if d != cfg.input_size:
        raise TrainError(f"dataset {data.name} has {d} inputs per image but model {cfg.name} expects {cfg.input_size}")
    if data.classes > cfg.classes:
        raise TrainError(f"dataset {data.name} has {data.classes} classes but model {cfg.name} has {cfg.classes}")


def check_run(cfg: NetConfig, data: Dataset, epochs: int) -> Compiled:
    """The compiled network of a run of `epochs` epochs of `cfg` on `data`, once it is sure to train: the data fits
    the model, a mini-batch fits the training set, and the learning rate gives the update a step the accelerator's
    step register holds and that is not zero. Raises TrainError (or the compiler's CompileError) otherwise."""
    check_compatible(cfg, data)
    comp = compile_network(cfg)
    tr, n = cfg.train, len(data.train_y)
    if n < tr.batch:
        raise TrainError(
            f"train.batch {tr.batch} is larger than the {n} training samples of {data.name}, so no "
            f"mini-batch would run; use a batch of at most {n}"
        )
    probe = Machine(comp, seed=0)
    probe.total_updates = epochs * (n // tr.batch)
    # the first update has the largest step of a decaying schedule, the last Adam's largest bias correction
    for update in sorted({0, probe.total_updates - 1}):
        probe.updates = update
        try:
            step = probe.host_step()[0]
        except ValueError:
            raise TrainError(
                f"train.lr {tr.lr:g}: update {update + 1}'s step is too large for the accelerator's "
                f"16-bit step register; use a smaller train.lr"
            ) from None
        if update == 0 and step == 0:
            raise TrainError(
                f"train.lr {tr.lr:g}: the first update's step rounds to zero in the accelerator's "
                f"16-bit step register, so no weight would ever change; use a larger train.lr"
            )
    return comp


class Run(PrunePhase):
    """One training run in an output directory; resumes from its checkpoint if one is there.

    The device is `make_device(machine)` for the golden Machine the run holds (verif/rtl_device.py: the RTL in
    lock-step with the machine; `executor` names it in the report), by default the machine itself (GoldenDevice).
    `run()` drives a golden run; a co-simulation awaits `arun()` inside the simulator."""

    def __init__(
        self,
        cfg: NetConfig,
        data: Dataset,
        seed: int,
        out: Path,
        epochs: int,
        make_device: Callable[[Machine], Device] = GoldenDevice,
        executor: str = "golden",
    ):
        self.cfg, self.data, self.seed, self.out, self.epochs = cfg, data, seed, out, epochs
        self.executor = executor
        self.make_device = make_device
        # the ranks train.rank.recompile recompiled the network at, once it has
        self.recompiled: list[list[int]] | None = None
        # the device's report of the programs it ran before the recompile
        self.device_before_recompile: dict | None = None
        comp = check_run(cfg, data, epochs)
        n_batches = len(data.train_y) // cfg.train.batch
        self.schedule = RankSchedule.of(
            cfg.train.rank, len(data.train_y), cfg.train.batch, n_batches, epochs * n_batches
        )
        # the prune phase's record (a checkpoint carries it): per bond the step each slice was pruned after, the
        # rank updates at a raised threshold, where it ended
        self.rank_log: dict[str, Any] = {
            "pruned": {},
            "raised_threshold_updates": 0,
            "ended_step": None,
            "budget_reached_step": None,
            "squeeze_rounds": 0,
        }
        resumed = load_checkpoint(out / CHECKPOINT, cfg, data, seed, epochs, comp)
        if resumed is None and cfg.train.rank.enabled:  # before any rank update: every tau is 0
            comp_machine = Machine(comp, seed)
            comp_machine.set_rank_constants(self.schedule.prior_per_update, cfg.train.rank.threshold)
            self._adopt(comp_machine)
        else:
            self._adopt(resumed[2] if resumed else Machine(comp, seed))
        self.rng = np.random.default_rng(seed)
        self.xq_train = self.golden.quantize_input(data.train_x)
        self.xq_test = self.golden.quantize_input(data.test_x)
        self.history: list[dict] = []
        self.epoch, self.batch_pos = 0, 0
        self.perm: Any = None  # this epoch's sample order, drawn when the epoch starts
        self.stats = self._fresh_stats()
        self.interrupted = False
        self.stop_after = 0  # tests: stop as on SIGINT once this object has trained this many mini-batches (0: never)
        self.checkpoint_every_s = CHECKPOINT_EVERY_S  # tests: 0 saves after every mini-batch
        # the run's progress while the loop runs: lines go through it, above the bar
        self.bar: RunProgress | None = None
        self.batches_trained = 0
        out.mkdir(parents=True, exist_ok=True)
        self.calibration_batch: np.ndarray | None = None
        self.budget = RankBudget(cfg)
        smallest = [[1] * len(layer.ranks) for layer in cfg.layers]
        if cfg.train.rank.enabled and self.budget.kind is not None and not self.budget.reached(smallest):
            print(
                f"warning: rank budget {self.budget.describe()} is below the smallest network rank adaptation can "
                f"leave ({self.budget.measure(smallest):,.0f} {self.budget.unit}, every bond at one slice); the run "
                f"ends at the closest result"
            )
        if resumed:
            self._resume(*resumed[:2])
        else:
            cores, biases = init_float_params(cfg, self.rng)
            self.golden.load_float_params(cores, biases)
            self.calibration_batch = self.rng.permutation(len(data.train_y))[: cfg.train.batch]

    def _adopt(self, golden: Machine) -> None:
        """Train `golden` (its compiled network) from here, on a device made for it."""
        golden.total_updates = self.epochs * (len(self.data.train_y) // self.cfg.train.batch)
        self.golden, self.comp = golden, golden.comp
        self.device = check_device(self.make_device(golden))

    # --- checkpoints --------------------------------------------------------------------------------------
    def save(self) -> None:
        st = self.golden.state_dict()
        arrays = {f"mem/{k}": v for k, v in st["mem"].items()}
        arrays["meta"] = np.array(
            json.dumps(
                {
                    "identity": run_identity(self.cfg, self.data, self.seed),
                    "data": {role: digest for role, (_, digest) in self.data.sources.items()},
                    "epochs": self.epochs,
                    "frac": st["frac"],
                    "maxabs": st["maxabs"],
                    "lfsr": st["lfsr"],
                    "drawn": st["drawn"],
                    "sat_total": st["sat_total"],
                    "sat_by_tensor": st["sat_by_tensor"],
                    "samples_seen": st["samples_seen"],
                    "updates": st["updates"],
                    "epoch": self.epoch,
                    "recompiled": self.recompiled,
                    "batch_pos": self.batch_pos,
                    "history": self.history,
                    "calibration_batch": None
                    if self.calibration_batch is None
                    else [int(i) for i in self.calibration_batch],
                    "rng": self.rng.bit_generator.state,
                    "stats": self.stats,
                    "rank_constants": st["rank_constants"],
                    "rank_log": self.rank_log,
                }
            )
        )
        arrays["perm"] = self.perm if self.perm is not None else np.zeros(0, dtype=np.int64)
        replace_npz(self.out / CHECKPOINT, **arrays, digest=np.array(content_digest(arrays)))

    def _resume(self, meta: dict, perm: np.ndarray) -> None:
        """Go on from a checkpoint load_checkpoint accepted (the machine, already adopted, holds its state)."""
        self.recompiled = meta.get("recompiled")
        self.epoch, self.batch_pos, self.history = meta["epoch"], meta["batch_pos"], meta["history"]
        self.stats = meta["stats"]
        if meta.get("calibration_batch") is not None:  # saved before the calibration ran
            self.calibration_batch = np.array(meta["calibration_batch"], dtype=np.int64)
        self.rng.bit_generator.state = meta["rng"]
        self.perm = perm if perm.size else None
        self.rank_log = meta["rank_log"]
        print(f"resuming from {self.out / CHECKPOINT}: epoch {self.epoch + 1}, batch {self.batch_pos}")

    # --- the loop -----------------------------------------------------------------------------------------
    def _on_signal(self, signum, frame):
        self.interrupted = True

    def run(self) -> dict:
        return asyncio.run(self.arun())

    async def arun(self) -> dict:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        await self.device.upload()  # the device starts from the machine's (initial or resumed) state
        if self.calibration_batch is not None:
            first = self.calibration_batch
            rounds = await calibrate(self.device, self.golden, self.xq_train[first], self.data.train_y[first])
            self.calibration_batch = None
            print(f"calibrated adaptive formats in {rounds} rounds on one batch")
        b = self.cfg.train.batch
        n_batches = len(self.data.train_y) // b  # a last partial batch is dropped: the program's lr is per B
        rank = self.cfg.train.rank
        last_save = time.time()
        # one bar for the whole run, so that its rate and ETA are the run's, evaluations included
        self.bar = bar = RunProgress(self.epochs, n_batches * b, initial=(self.epoch * n_batches + self.batch_pos) * b)
        while self.epoch < self.epochs and not self.interrupted:
            if self.perm is None:
                self.perm = self.rng.permutation(len(self.data.train_y))
                self.batch_pos, self.stats = 0, self._fresh_stats()
            stats = self.stats
            stats["t0"] = time.time() - stats["elapsed"]
            bar.epoch(self.epoch + 1, self.batch_pos * b)
            while self.batch_pos < n_batches and not self.interrupted:
                step = self.epoch * n_batches + self.batch_pos
                if rank.enabled and self.rank_log["ended_step"] is None and self.schedule.phase(step) == "finetune":
                    await self._end_prune_phase(step)
                idx = self.perm[self.batch_pos * b : (self.batch_pos + 1) * b]
                cycles0 = self.device.sim_cycles
                res = await train_batch(self.device, self.golden, self.xq_train[idx], self.data.train_y[idx])
                cycles = self.device.sim_cycles
                if cycles0 is not None and cycles is not None:  # a device that counts cycles
                    stats["sim_cycles"] = stats.get("sim_cycles", 0) + cycles - cycles0
                if (
                    rank.enabled
                    and self.rank_log["ended_step"] is None
                    and self.schedule.update_due(step)
                    and not self.within_budget()
                ):
                    await self._scheduled_rank_update(step)
                stats["loss"] += float(res["loss"].sum())
                stats["correct"] += int((res["pred"] == self.data.train_y[idx]).sum())
                stats["n"] += len(idx)
                stats["elapsed"] = time.time() - stats["t0"]
                self.batch_pos += 1
                self.batches_trained += 1
                if self.batches_trained == self.stop_after:
                    self.interrupted = True
                rate = device_rate(stats)
                bar.note(
                    f"loss {stats['loss'] / stats['n']:.3f}" + ("" if rate is None else f", {rate:.0f} sim cycles/s")
                )
                bar.update(len(idx))
                if time.time() - last_save >= self.checkpoint_every_s:
                    self.save()
                    last_save = time.time()
            if self.interrupted:
                break
            await self._end_epoch(stats)
            self.epoch += 1
            self.perm = None
            self.save()
            last_save = time.time()
        if rank.enabled and not self.interrupted and self.rank_log["ended_step"] is None and self.budget.kind:
            # the run ended inside the prune phase: its end is the step limit
            await self._end_prune_phase(self.epochs * n_batches, recompile=False)
        bar.close()
        self.bar = None
        if self.interrupted:
            self.save()
            print(f"interrupted: checkpoint saved in {self.out}; run the same command again to resume")
            raise SystemExit(130)
        return self.finish()

    def say(self, line: str) -> None:
        """Print a line, above the progress bar while there is one."""
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def _fresh_stats(self) -> dict:
        return {"loss": 0.0, "correct": 0, "n": 0, "elapsed": 0.0, "sat0": self.golden.sat_total}

    async def _end_epoch(self, stats: dict) -> None:
        test_acc = await self.evaluate()
        dt = max(stats["elapsed"], 1e-9)
        rec = {
            "epoch": self.epoch + 1,
            "train_loss": stats["loss"] / max(stats["n"], 1),
            "train_acc": stats["correct"] / max(stats["n"], 1),
            "test_acc": test_acc,
            "saturations": self.golden.sat_total - stats["sat0"],
            "samples_per_s": stats["n"] / dt,
            "ranks": self.golden.live_ranks(),
            "live_core_params": self.golden.live_core_params(),
        }
        rate = device_rate(stats)
        if rate is not None:  # the epoch's training loop, host and lock-step checks included
            rec["sim_cycles_per_s"] = rate
        self.history.append(rec)
        self.say(
            f"epoch {rec['epoch']:3d}  loss {rec['train_loss']:.4f}  train acc {rec['train_acc']:.4f}  "
            f"test acc {test_acc:.4f}  ranks {rec['ranks']}  saturations {rec['saturations']}  "
            f"{rec['samples_per_s']:.0f} samples/s" + ("" if rate is None else f"  {rate:.0f} sim cycles/s")
        )

    async def evaluate(self) -> float:
        preds = np.concatenate(
            [await self.device.infer(self.xq_test[i : i + 512]) for i in range(0, len(self.xq_test), 512)]
        )
        return float((preds == self.data.test_y).mean())

    def finish(self) -> dict:
        report: dict[str, Any] = {
            "model": self.cfg.name,
            "dataset": self.data.name,
            "seed": self.seed,
            "executor": self.executor,
            "epochs": self.epoch,
            "test_acc": self.history[-1]["test_acc"] if self.history else None,
            "recompiled_ranks": self.recompiled,
            "history": self.history,
            "macs_per_sample": {p: self.comp.macs(p) for p in ("train_sample", "infer")},
            "formats": {k: v for k, v in self.golden.frac.items() if self.comp.tensors[k].adaptive},
            "saturations_total": self.golden.sat_total,
            "saturations_by_tensor": {k: v for k, v in self.golden.sat_by_tensor.items() if v},
            "lfsr_draws": self.golden.stream.drawn,
            "memory": memory_report(self.comp, self.golden.live_core_params()),
            "config": config_to_dict(self.cfg),
        }
        if self.cfg.train.rank.enabled:
            report["rank_schedule"] = self.rank_report()
        device = self.device.device_report()
        if device is not None:
            report["device"] = device
            if self.device_before_recompile is not None:
                report["device"]["before_recompile"] = self.device_before_recompile
        replace_file(self.out / "report.json", json.dumps(report, indent=1))
        self.save_weights()
        plot_history(self.history, self.out, report.get("rank_schedule"))
        return report

    def save_weights(self) -> None:
        cores, biases = self.golden.float_params()
        arrays = {f"mem/{k}": v for k, v in self.golden.mem.items() if not k.startswith(("d", "V"))}
        replace_npz(
            self.out / "weights.npz",
            **arrays,
            frac=json.dumps(self.golden.frac),
            config=json.dumps(config_to_dict(self.cfg)),
        )


def main_train(args) -> int:
    check_args(args.epochs, args.seed)
    cfg = load_config(args.model)
    if args.epochs is not None:
        cfg = replace(cfg, train=replace(cfg.train, epochs=args.epochs))
    data = load_dataset(args.dataset, args.data_dir)
    check_run(cfg, data, cfg.train.epochs)  # before the lock makes OUT
    print(
        f"seed {args.seed}  model {cfg.name}  dataset {data.name} ({len(data.train_y)} train / "
        f"{len(data.test_y)} test)  epochs {cfg.train.epochs}  batch {cfg.train.batch}  out {args.out}"
    )
    with locked(Path(args.out)):
        report = Run(cfg, data, args.seed, Path(args.out), cfg.train.epochs).run()
    print(summary(report, Path(args.out), GOLDEN_ONLY))
    return 0
