"""`make train` inside the simulator: golden/train.py's Run with the co-simulated accelerator as its device.

verif/train.py (the command) checks the inputs, builds the accelerator for the model and passes the run's
settings in the environment: TRAIN_MODEL, TRAIN_DATASET, TRAIN_DATA_DIR, TRAIN_EPOCHS, TRAIN_OPTIMIZER, TRAIN_SEED,
TRAIN_RANK (1: rank adaptation on), TRAIN_CHECK, TRAIN_OUT, TRAIN_CHECKPOINT_EVERY (seconds between checkpoints
within an epoch), and for the resume tests TRAIN_INTERRUPT_AFTER=n: stop as Ctrl-C would after n batches.
A finished run also writes rtl_state.npz: every persistent tensor read back from the RTL over the host bus, which
verif/train.py compares with the golden model's weights.npz.
"""

import os
import sys
from dataclasses import replace
from pathlib import Path

import cocotb
import numpy as np

from golden.checkpoint import replace_npz
from golden.config_file import load_config
from golden.datasets import load_dataset
from golden.train import Run
from verif.top.accel_env import open_accel
from verif.train import INTERRUPTED


@cocotb.test()
async def train(dut):
    env = os.environ
    cfg = load_config(env["TRAIN_MODEL"])
    if env.get("TRAIN_EPOCHS"):
        cfg = replace(cfg, train=replace(cfg.train, epochs=int(env["TRAIN_EPOCHS"])))
    if env.get("TRAIN_OPTIMIZER"):
        cfg = replace(cfg, train=replace(cfg.train, optimizer=env["TRAIN_OPTIMIZER"]))
    if env.get("TRAIN_RANK"):
        cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
    data = load_dataset(env["TRAIN_DATASET"], env.get("TRAIN_DATA_DIR") or None)
    make_device = await open_accel(dut, env.get("TRAIN_CHECK", "sample"), fast_bus=True)
    sim = cocotb.SIM_NAME.lower()
    run = Run(
        cfg,
        data,
        int(env["TRAIN_SEED"]),
        Path(env["TRAIN_OUT"]),
        cfg.train.epochs,
        make_device=make_device,
        executor=f"rtl ({sim})",
    )
    run.stop_after = int(env.get("TRAIN_INTERRUPT_AFTER") or 0)  # tests: behave as if Ctrl-C came after n batches
    if env.get("TRAIN_CHECKPOINT_EVERY"):
        run.checkpoint_every_s = float(env["TRAIN_CHECKPOINT_EVERY"])
    try:
        await run.arun()
    except SystemExit:  # an interrupted run, once its checkpoint is saved and it said so: not a failure
        if not run.interrupted:
            raise
        (Path(env["TRAIN_OUT"]) / "sim" / INTERRUPTED).touch()
    else:
        await save_rtl_state(run.device, Path(env["TRAIN_OUT"]) / "rtl_state.npz")
    # The run's output ends here: Verilator's "$finish" line as cocotb ends the simulation would come between the
    # last epoch and the summary verif/train.py prints. A failure raises above and keeps the output.
    sys.stdout.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


async def save_rtl_state(dev, path: Path) -> None:
    """Every persistent tensor as the RTL holds it, read through the host's bank windows (not the golden copy):
    what a user of the hardware would get back, for comparison with the golden run's weights.npz."""
    arrays = {}
    for name in dev.persistent:
        bank, base = dev.comp.layout[name]
        arrays[f"mem/{name}"] = np.array(
            await dev.host.read_bank(bank, base, dev.golden.mem[name].size), dtype=np.int64
        )
    replace_npz(path, **arrays)
