"""Training driver: data, mini-batches, epochs, checkpoints that resume bit-exactly, reports and plots.

The device it drives is anything with the Machine interface (`train_batch`, `infer`, `calibrate`,
`state_dict`/`load_state_dict`): the golden model here; the co-simulated RTL uses the same loop.

Nothing a run was given is trusted: `check_args` and `check_run` refuse settings that cannot train (before any file
is written), `load_checkpoint` a checkpoint that is damaged, belongs to another run or data, or does not fit the
network, and `locked` a second run on an OUT directory in use, each with a TrainError that names the file or
setting and what to do. A checkpoint holds a SHA-256 of its content and of the data set's sources; report.json,
weights.npz and the checkpoint are replaced whole, so a failed run leaves the last good ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import inspect
import json
import os
import signal
import sys
import time
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from golden.compact import compact
from golden.compiler import compile_network
from golden.config import NetConfig, config_to_dict, load_config, with_ranks
from golden.cost import fit_ranks
from golden.datasets import Dataset, load_dataset
from golden.float_model import init_tt_cores
from golden.ir import Compiled
from golden.machine import Machine
from golden.memory import memory_report
from golden.rank_schedule import SQUEEZE_ROUNDS, RankBudget, RankSchedule, squeeze_cut
from golden.semantics import LAMBDA_FMT

CHECKPOINT = "checkpoint.npz"
CHECKPOINT_EVERY_S = 30.0
LOCK = "lock"
GOLDEN_ONLY = "bit-exact: not applicable, the golden model alone trained (no RTL)"
SEED_MAX = 2**32 - 1  # numpy's legacy seeding in the cocotb modules takes 32 bits


class TrainError(ValueError):
    """A run that cannot start or go on as asked; the message names the setting or file and what to do."""


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


@contextlib.contextmanager
def locked(out: Path):
    """OUT/lock, holding this process's pid, for as long as a run writes to `out` (made if missing): a second run on
    it is refused while the first is alive. The lock is an flock on that file, which the kernel drops when its
    process dies, so a lock file left by a dead run is taken over."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise TrainError(
                f"{out} is in use by another run (pid {holder}, see {path}); wait for it to end or "
                f"use another OUT directory"
            ) from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file between our open and our lock: lock the one there now
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


def run_identity(cfg: NetConfig, data: Dataset, seed: int) -> dict:
    """What a checkpoint must match to be resumed; the epoch count may grow (to extend a run, load_checkpoint)."""
    config = config_to_dict(cfg)
    del config["train"]["epochs"]
    return {"config": config, "dataset": data.name, "seed": seed, "golden": golden_version()}


def content_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of a checkpoint's entries: names, dtypes, shapes and bytes."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _unusable(path: Path, problem: str) -> TrainError:
    return TrainError(f"{path} {problem}; use another OUT directory, or delete it to start this run afresh")


def read_checkpoint(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """The meta and the arrays of a checkpoint file whose content matches its digest (TrainError otherwise)."""
    unreadable = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error)  # np.load's, and its members'
    try:
        archive = np.load(path, allow_pickle=False)
    except unreadable as e:
        raise _unusable(path, f"is damaged: not a readable .npz archive ({e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise _unusable(path, "is damaged: not a readable .npz archive (it holds one .npy array)")
    try:
        with archive:
            arrays = {k: archive[k] for k in archive.files}
    except unreadable as e:
        raise _unusable(path, f"is damaged: not a readable .npz archive ({e})") from None
    if "meta" not in arrays:
        raise _unusable(path, "is damaged: it has no meta entry")
    try:
        meta = json.loads(str(arrays["meta"]))
    except json.JSONDecodeError:
        raise _unusable(path, "is damaged: its meta entry is not JSON") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("identity"), dict):
        raise _unusable(path, "is damaged: its meta entry is not a checkpoint's")
    if meta["identity"].get("golden") != golden_version():
        raise _unusable(
            path,
            "was written by another version of the golden model (golden/*.py changed since), whose numbers may differ",
        )
    stored = arrays.pop("digest", None)
    if stored is None or str(stored) != content_digest(arrays):
        raise _unusable(path, "is damaged: its content does not match the digest stored with it")
    return meta, arrays


def load_checkpoint(
    path: Path, cfg: NetConfig, data: Dataset, seed: int, epochs: int, comp: Compiled
) -> tuple[dict, np.ndarray, Machine] | None:
    """The checkpoint at `path` (None if there is none) checked against the run that resumes it: its meta, its
    permutation of the epoch in progress (empty between epochs) and a Machine of its network (`comp`, or `cfg`
    recompiled at the ranks it was recompiled at) holding its state. A TrainError says what does not match: the
    file (read_checkpoint), the run (config, dataset name, seed), the data set's sources (their digests), the epochs
    (fewer than it trained, or another count under a schedule that spans the run) or the network (the names,
    dtypes, shapes and value ranges of its tensors, its formats)."""
    if not path.exists():
        return None
    meta, arrays = read_checkpoint(path)
    if meta["identity"] != run_identity(cfg, data, seed):
        raise _unusable(path, "belongs to another run (config, dataset or seed differ)")
    for role, (where, digest) in data.sources.items():
        if meta.get("data", {}).get(role) != digest:
            raise TrainError(
                f"{path} was trained on other data than {where} ({role} differs); resume it with the "
                f"data it started with (the same DATA_DIR), or use another OUT directory"
            )
    perm = arrays.get("perm", np.zeros(0, dtype=np.int64))
    started = meta["epoch"] + (perm.size > 0)  # the epochs it trained, the one in progress included
    if started > epochs:
        raise TrainError(
            f"{path} holds a run that has trained {started} epochs, more than the {epochs} asked for, "
            f"and a shorter run is not refused silently; ask for at least {started} epochs (EPOCHS) to "
            f"go on with it, or use another OUT directory"
        )
    if epochs != meta["epochs"] and cfg.train.lr_schedule != "constant":
        raise TrainError(
            f"{path} holds a run of {meta['epochs']} epochs whose {cfg.train.lr_schedule} learning-rate "
            f"schedule spans the whole run, so it resumes only with {meta['epochs']} epochs (EPOCHS); "
            f"use another OUT directory for {epochs}"
        )
    if meta.get("recompiled") is not None:  # saved after train.rank.recompile
        comp = compile_network(with_ranks(cfg, meta["recompiled"]))
    golden = Machine(comp, seed)
    mem = {k[4:]: a for k, a in arrays.items() if k.startswith("mem/")}
    _check_state(path, meta, mem, golden)
    golden.load_state_dict({**meta, "mem": mem})
    return meta, perm, golden


def _check_state(path: Path, meta: dict, mem: dict[str, np.ndarray], golden: Machine) -> None:
    """The checkpoint's tensors and formats are those of `golden`'s network: the same names, int64 of the same
    shapes, every value within its tensor's width; the same fraction-bit entries, the adaptive ones within
    frac_min..frac_max."""
    expected = golden.mem
    if mem.keys() != expected.keys():
        missing, extra = sorted(expected.keys() - mem.keys()), sorted(mem.keys() - expected.keys())
        raise _unusable(
            path, f"does not hold the network's tensors (missing {missing or 'none'}, unexpected {extra or 'none'})"
        )
    for name, a in mem.items():
        if a.dtype != np.int64 or a.shape != expected[name].shape:
            raise _unusable(
                path, f"is damaged: {name} is {a.dtype} {a.shape}, the network's is int64 {expected[name].shape}"
            )
        fmt = golden.fmt(name)
        if a.size and (a.min() < fmt.qmin or a.max() > fmt.qmax):
            raise _unusable(path, f"is damaged: {name} holds values outside its {fmt.width}-bit format")
    frac = meta.get("frac")
    if (
        not isinstance(frac, dict)
        or frac.keys() != golden.frac.keys()
        or not all(isinstance(f, int) and not isinstance(f, bool) for f in frac.values())
    ):
        raise _unusable(path, "is damaged: its formats are not the network's")
    formats = golden.cfg.formats
    for name, tensor in golden.comp.tensors.items():
        if tensor.adaptive and not formats.frac_min <= frac[name] <= formats.frac_max:
            raise _unusable(
                path,
                f"is damaged: {name}'s fraction bits {frac[name]} are outside frac_min..frac_max "
                f"({formats.frac_min}..{formats.frac_max})",
            )


async def settle(x):
    """The result of a device call: awaited when the device is the co-simulated RTL (async), as is otherwise."""
    return await x if inspect.isawaitable(x) else x


class Run:
    """One training run in an output directory; resumes from its checkpoint if one is there.

    The device is the golden Machine, or `device(machine)` wrapped around it (verif/rtl_device.py: the RTL in
    lock-step with the machine, async methods; `executor` names it in the report). `run()` drives a golden
    run; a co-simulation awaits `arun()` inside the simulator."""

    def __init__(
        self, cfg: NetConfig, data: Dataset, seed: int, out: Path, epochs: int, device=None, executor: str = "golden"
    ):
        self.cfg, self.data, self.seed, self.out, self.epochs = cfg, data, seed, out, epochs
        self.executor = executor
        self.device = device
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
        """Train `golden` (its compiled network) from here, on the device if there is one."""
        golden.total_updates = self.epochs * (len(self.data.train_y) // self.cfg.train.batch)
        self.golden, self.comp = golden, golden.comp
        # the golden Machine or a device that runs the same calls (co-simulated RTL); no common type yet
        self.machine: Any = self.device(golden) if self.device else golden

    async def _recompile(self, say) -> None:
        """train.rank.recompile, once the prune phase is over: the network recompiled at smaller ranks, its state
        carried over (golden/compact.py): the live ranks (those fit_ranks picks on a cycles budget's engine), or on
        an accelerator (a device with build parameters) the ranks fit_ranks finds fastest on its engine. The formats
        a new contraction order needs are calibrated on the epoch's first mini-batch."""
        if not self.cfg.train.rank.recompile or self.recompiled is not None:
            return
        live = self.golden.live_ranks()
        engine = getattr(self.machine, "params", None)
        fit = self.budget.fit(live) if engine is None else None  # a cycles budget's engine, without a device
        ranks = (
            (live if fit is None else fit["ranks"])
            if engine is None
            else fit_ranks(
                self.cfg, live, engine.lanes, engine.buf_depth, vec=engine.vec, drain=engine.drain, log=sys.stdout
            )["ranks"]
        )
        first = self.perm[: self.cfg.train.batch]
        macs = self.comp.macs("train_sample")
        if hasattr(self.machine, "device_report"):  # the recompiled network runs on a new device, counting afresh
            self.device_before_recompile = {
                "ranks": [list(layer.ranks) for layer in self.comp.cfg.layers],
                **self.machine.device_report(),
            }
        self._adopt(compact(self.golden, ranks, calibration=(self.xq_train[first], self.data.train_y[first])))
        self.recompiled = ranks
        if self.device:
            await settle(self.machine.upload())
        say(
            f"recompiled at ranks {ranks} (live {live}): {macs} -> {self.comp.macs('train_sample')} MACs per "
            f"training sample"
        )

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
        if self.machine is not self.golden:
            await settle(self.machine.upload())  # the device starts from the machine's (initial or resumed) state
        if self.calibration_batch is not None:
            first = self.calibration_batch
            rounds = await settle(self.machine.calibrate(self.xq_train[first], self.data.train_y[first]))
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
                cycles0 = getattr(self.machine, "sim_cycles", None)  # a co-simulated device's
                res = await settle(self.machine.train_batch(self.xq_train[idx], self.data.train_y[idx]))
                if cycles0 is not None:
                    stats["sim_cycles"] = stats.get("sim_cycles", 0) + self.machine.sim_cycles - cycles0
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

    async def _scheduled_rank_update(self, step: int) -> None:
        """The rank update after mini-batch `step`; under budget_target at a raised threshold when the live core
        parameters lag the path to the budget (rank_schedule.budget_path). The prune phase ends here if the budget
        is reached (penalty off, ranks fixed)."""
        rank = self.cfg.train.rank
        threshold = rank.threshold
        if rank.budget_target:
            cut = self._lambda_cut(self.schedule.budget_path(step, self.budget.full, self.budget.target))
            if cut is not None:
                threshold = max(threshold, (cut + 1) / 2**LAMBDA_FMT.frac)
                self.rank_log["raised_threshold_updates"] += 1
        if self.golden.rank_constants[1] != threshold:
            self.golden.set_rank_constants(self.golden.rank_constants[0], threshold)
        await self._rank_update_logged(step)
        if self.within_budget():
            self.rank_log["budget_reached_step"] = step
            await self._end_prune_phase(step + 1)

    def _lambda_cut(self, allowed: float) -> float | None:
        """The lambda at or below which the live slices of smallest lambda go to bring the budget's cost to at most
        `allowed` (squeeze_cut), read from the state bank's LAM and MASK words; None if none need to."""
        if self.budget.cost(self.golden.live_ranks()) <= allowed:
            return None
        masks = self._masks()
        live_lambdas = [
            (lam, int(l), int(k), r)
            for op in self.comp.rank_update
            for l, k in [op.ins[3][len("MASK") :].split(".")]
            for r, lam in enumerate(self.golden.lambdas(op.out))
            if masks[f"{l}.{k}"][r]
        ]
        return squeeze_cut(self.budget.cost, self.golden.live_ranks(), live_lambdas, allowed)

    async def _rank_update_logged(self, step: int) -> bool:
        """One rank update (the RANK ops, then the pruning) after mini-batch `step`; records which slices it
        pruned. Whether it pruned any."""
        before = self._masks()
        await settle(self.machine.rank_update())
        pruned = False
        for bond, mask in self._masks().items():
            for r, (was, now) in enumerate(zip(before[bond], mask)):
                if was and not now:
                    self.rank_log["pruned"].setdefault(bond, {})[str(r)] = step
                    pruned = True
        return pruned

    def _masks(self) -> dict[str, list[int]]:
        """Per bond ("layer.bond"), which slices are live."""
        return {
            op.ins[3][len("MASK") :]: [int(w != 0) for w in self.golden.mem[op.ins[3]]] for op in self.comp.rank_update
        }

    async def _end_prune_phase(self, step: int, recompile: bool = True) -> None:
        """The prune phase ends before mini-batch `step`: under budget_target with the budget not reached, the
        slices of smallest lambda are pruned first (_squeeze); then the penalty goes off and the ranks stay
        (recompiled if the config asks, unless the run is over)."""
        rank = self.cfg.train.rank
        if rank.budget_target and not self.within_budget():
            await self._squeeze(step - 1)
        await settle(self.machine.rank_freeze())
        self.rank_log["ended_step"] = step
        ranks = self.golden.live_ranks()
        if self.budget.kind is not None and self.within_budget():
            self.say(
                f"rank budget {self.budget.describe()} reached after mini-batch {step - 1} of the run (epoch "
                f"{self.epoch + 1}, {step - self.schedule.prune_start} steps of pruning): "
                f"{self.budget.measure(ranks):,.0f} {self.budget.unit}, ranks {ranks}; fine-tuning from here"
            )
        elif self.budget.kind is not None:
            self.say(
                f"rank budget {self.budget.describe()} not reached: {self._budget_shortfall()}; fine-tuning the "
                f"closest result" + ("" if rank.budget_target else " (train.rank.budget_target true prunes on to it)")
            )
        if recompile:
            await self._recompile(self.say)

    def _budget_shortfall(self) -> str:
        b = self.budget
        live = b.measure(self.golden.live_ranks())
        return (
            f"{live:,.0f} {b.unit} ({100 * live / b.full:.1f} % of {b.full:,.0f}) against at most {b.target:,}, ranks "
            f"{self.golden.live_ranks()} after {self.rank_log['ended_step'] - self.schedule.prune_start} steps "
            f"of pruning (every bond keeps at least one slice)"
        )

    async def _squeeze(self, step: int) -> None:
        """budget_target at the prune end: rank updates at a threshold just above the lambdas of the slices to go
        (smallest lambda first, squeeze_cut), up to SQUEEZE_ROUNDS, since each update moves lambda on before it
        compares; the RANK ops prune, the host only picks the threshold from the lambdas in the state bank."""
        for _ in range(SQUEEZE_ROUNDS):
            cut = None if self.within_budget() else self._lambda_cut(self.budget.target)
            if cut is None:
                return
            self.golden.set_rank_constants(self.golden.rank_constants[0], (cut + 1) / 2**LAMBDA_FMT.frac)
            self.rank_log["squeeze_rounds"] += 1
            await self._rank_update_logged(step)

    def rank_report(self) -> dict:
        """The rank schedule's outcome for report.json: the phases in steps, the prior, per bond the step each
        slice was pruned after, and whether, where and after how many steps of pruning the budget was reached."""
        rank, log, sch = self.cfg.train.rank, self.rank_log, self.schedule
        full = sum(layer.n_core_params for layer in self.cfg.layers)
        b, live_ranks = self.budget, self.golden.live_ranks()
        reached = None if b.kind is None else self.within_budget()
        ended = log["ended_step"]
        fit = b.fit(live_ranks)
        return {
            "phase_unit": rank.phase_unit,
            "steps_per_epoch": sch.steps_per_epoch,
            "prune_start_step": sch.prune_start,
            "prune_end_step": sch.prune_end,
            "prune_ended_step": ended,
            "prune_steps": None if ended is None else ended - sch.prune_start,
            "prior_scaling": rank.prior_scaling,
            "prior_per_update": sch.prior_per_update,
            "ramp_end_step": sch.ramp_end if rank.budget_target else None,
            "raised_threshold_updates": log["raised_threshold_updates"],
            "squeeze_rounds": log["squeeze_rounds"],
            "budget": rank.budget,
            "budget_cycles": rank.budget_cycles,
            "budget_engine": None if b.kind != "cycles" else dataclasses.asdict(rank.budget_engine),
            "budget_unit": b.unit,
            "budget_text": None if b.kind is None else b.describe(),
            "budget_full": b.full,
            "budget_allowed": b.target,
            "budget_measured": None if b.kind is None else b.measure(live_ranks),
            "fitted_ranks": None if fit is None else fit["ranks"],
            "budget_target": rank.budget_target,
            "budget_reached": reached,
            "budget_reached_step": log["budget_reached_step"],
            "full_core_params": full,
            "live_core_params": self.golden.live_core_params(),
            "full_ranks": [list(layer.ranks) for layer in self.cfg.layers],
            "live_ranks": live_ranks,
            "pruned_at_step": log["pruned"],
            "pruned_in_epoch": {
                bond: {r: step // sch.steps_per_epoch + 1 for r, step in slices.items()}
                for bond, slices in log["pruned"].items()
            },
        }

    def within_budget(self) -> bool:
        """Whether the live ranks are within the rank budget (RankBudget: parameters or cycles): a function of the
        masks alone, so a resumed run decides as the uninterrupted one did."""
        return self.budget.reached(self.golden.live_ranks())

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
            [await settle(self.machine.infer(self.xq_test[i : i + 512])) for i in range(0, len(self.xq_test), 512)]
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
        if hasattr(self.machine, "device_report"):
            report["device"] = self.machine.device_report()
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


def replace_file(path: Path, text: str) -> None:
    """Write `path` whole or not at all: a run killed while writing leaves the previous file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def replace_npz(path: Path, **arrays) -> None:
    """np.savez to `path`, whole or not at all (replace_file)."""
    tmp = path.with_name(path.stem + ".tmp.npz")  # np.savez adds .npz to a name without it
    np.savez(tmp, **arrays)
    tmp.replace(path)


def golden_version() -> str:
    """A digest of the golden model's sources: a checkpoint resumes only under the arithmetic that wrote it."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def device_rate(stats: dict) -> float | None:
    """Simulated cycles per wall second of an epoch's training loop on a co-simulated device (else None)."""
    return stats["sim_cycles"] / max(stats["elapsed"], 1e-9) if "sim_cycles" in stats else None


def clock(seconds: float) -> str:
    """A duration as h:mm:ss or m:ss."""
    m, sec = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class RunProgress:
    """The progress of a whole run, epoch by epoch: a tqdm bar on a terminal, a line every `every` seconds in a log.
    Counts training samples over all epochs, so its rate and ETA are the run's; the rate is taken over the wall time
    since this process started training, so the test-set inference after each epoch is in it."""

    def __init__(self, epochs: int, epoch_samples: int, initial: int, every: float = 15.0):
        self.epochs, self.epoch_samples, self.every = epochs, epoch_samples, every
        self.total, self.n, self.start_n = epochs * epoch_samples, initial, initial
        self.t0 = self.last = time.time()
        self.postfix = ""
        self.desc = ""
        self.bar = (
            tqdm(
                total=self.total,
                initial=initial,
                unit=" samples",
                file=sys.stdout,
                leave=False,
                mininterval=1.0,
                smoothing=0,
                dynamic_ncols=True,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} samples "
                "[{elapsed}, run ETA {remaining}, {rate_fmt}{postfix}]",
            )
            if sys.stdout.isatty()
            else None
        )

    def epoch(self, epoch: int, done: int) -> None:
        """Epoch `epoch` (1-based) starts or resumes with `done` of its samples trained."""
        self.desc = f"epoch {epoch}/{self.epochs}"
        if self.bar is not None:
            self.bar.set_description_str(self.desc, refresh=False)

    def update(self, k: int) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.time()
        if now - self.last >= self.every:
            self.last = now
            rate = (self.n - self.start_n) / max(now - self.t0, 1e-9)
            eta = (self.total - self.n) / max(rate, 1e-9)
            print(
                f"{self.desc}: {self.n}/{self.total} samples of the run, {rate:.1f} samples/s, run ETA "
                f"{clock(eta)}{self.postfix}",
                flush=True,
            )

    def write(self, line: str) -> None:
        """A line between the progress lines (above the bar on a terminal)."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def note(self, text: str) -> None:
        """What follows the rate: the loss so far, a co-simulated device's speed."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
        self.postfix = f", {text}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def summary(report: dict, out: Path, verdict: str) -> str:
    """The lines a finished run ends with: its test accuracy, whether it is bit-exact (`verdict`), the files in
    `out`."""
    names = ("report.json", "weights.npz", "training.png", "ranks.png", CHECKPOINT, "rtl_state.npz")
    written = [n for n in names if (out / n).exists()]
    rs = report.get("rank_schedule") or {}
    budget = (
        ""
        if rs.get("budget_reached") is not False
        else f"  rank budget {rs['budget_text']} NOT reached: {rs['budget_measured']:,.0f} {rs['budget_unit']} against "
        f"at most {rs['budget_allowed']:,} (report.json rank_schedule)\n"
    )
    return (
        f"result: test accuracy {report['test_acc']:.4f} after {report['epochs']} epochs "
        f"({report['model']} on {report['dataset']}, seed {report['seed']}, {report['executor']})\n"
        f"  {verdict}\n" + budget + f"  files in {out}: {', '.join(written)}"
    )


def plot_history(history: list[dict], out: Path, rank_schedule: dict | None = None) -> None:
    if not history:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = [h["epoch"] for h in history]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot(ep, [h["train_loss"] for h in history], marker="o")
    ax[0].set(xlabel="epoch", ylabel="train loss", title="loss")
    ax[1].plot(ep, [h["train_acc"] for h in history], marker="o", label="train")
    ax[1].plot(ep, [h["test_acc"] for h in history], marker="o", label="test")
    ax[1].set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(out / "training.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    if rank_schedule is None:
        for li, ranks in enumerate(zip(*[[r for layer in h["ranks"] for r in layer] for h in history])):
            ax.plot(ep, ranks, marker="o", label=f"bond {li}")
        ax.set(xlabel="epoch", ylabel="live rank", title="ranks")
    else:
        plot_rank_steps(ax, rank_schedule, history)
    if history[0]["ranks"] and any(history[0]["ranks"]):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "ranks.png", dpi=100)
    plt.close(fig)


def plot_rank_steps(ax, rs: dict, history: list[dict]) -> None:
    """Every bond's live rank against the optimizer step, from the step each slice was pruned after, with the
    prune phase shaded, the step the budget was reached (or the prune phase ended short of it) marked and the test
    accuracy after each epoch on a second axis (what the pruning cost)."""
    last = len(history) * rs["steps_per_epoch"]
    for l, layer in enumerate(rs["full_ranks"]):
        for k, full in enumerate(layer):
            steps = sorted(rs["pruned_at_step"].get(f"{l}.{k}", {}).values())
            xs = [0, *[s + 1 for s in steps], last]
            ys = [full, *[full - i for i in range(1, len(steps) + 1)], full - len(steps)]
            ax.step(xs, ys, where="post", label=f"bond {l}.{k}")
    start, ended = rs["prune_start_step"], rs["prune_ended_step"]
    ax.axvspan(start, last if ended is None else ended, color="0.9", label="prune phase")
    if rs["budget_text"] is not None and ended is not None:
        ax.axvline(
            ended,
            color="green" if rs["budget_reached"] else "red",
            linestyle="--",
            label=f"budget {rs['budget_text']} " + ("reached" if rs["budget_reached"] else "not reached"),
        )
    title = f"live ranks: {rs['live_core_params']} of {rs['full_core_params']} core parameters"
    ax.set(xlabel=f"optimizer step ({rs['steps_per_epoch']} an epoch)", ylabel="live rank", title=title)
    acc = ax.twinx()
    acc.plot(
        [h["epoch"] * rs["steps_per_epoch"] for h in history],
        [100 * h["test_acc"] for h in history],
        color="black",
        marker="o",
        linestyle=":",
        label="test accuracy",
    )
    acc.set_ylabel("test accuracy after the epoch (%)")
    acc.legend(loc="lower left", fontsize=8)


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
