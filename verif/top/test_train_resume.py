"""`make train` on the co-simulated accelerator: a run stopped like Ctrl-C, or whose simulator is killed (SIGKILL)
in the middle of an epoch, and started again ends with the same weights, bit for bit, as the golden model's
uninterrupted run of the same seed."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from golden.checkpoint import CHECKPOINT, read_checkpoint
from verif import train
from verif.runner import SIMS

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--model", "tiny", "--dataset", "tiny", "--epochs", "2", "--seed", "3"]
BATCHES_PER_EPOCH = 64  # tiny: 512 training samples, mini-batches of 8


@pytest.fixture(scope="module")
def golden_weights(tmp_path_factory) -> dict:
    """The trained tensors of the golden model's uninterrupted run of TINY."""
    out = tmp_path_factory.mktemp("golden")
    assert train.main(TINY + ["--sim", "golden", "--out", str(out)]) == 0
    with np.load(out / "weights.npz") as z:
        mem = {k: z[k] for k in z.files if k.startswith("mem/")}
    assert mem
    return mem


def assert_weights(out: Path, want: dict) -> None:
    with np.load(out / "weights.npz") as got:
        assert all(np.array_equal(want[k], got[k]) for k in want)


@pytest.mark.skipif("verilator" not in SIMS, reason="the co-simulated run uses Verilator (Icarus is too slow)")
def test_interrupted_cosim_run_resumes_to_the_golden_weights(tmp_path, golden_weights):
    out = str(tmp_path / "rtl")
    assert train.main(TINY + ["--sim", "verilator", "--out", out, "--interrupt-after", "40"]) == 130
    assert (tmp_path / "rtl" / "checkpoint.npz").exists() and not (tmp_path / "rtl" / "report.json").exists()
    assert train.main(TINY + ["--sim", "verilator", "--out", out]) == 0
    assert_weights(tmp_path / "rtl", golden_weights)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


@pytest.mark.skipif("verilator" not in SIMS, reason="the co-simulated run uses Verilator (Icarus is too slow)")
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the simulator process through /proc")
def test_cosim_run_whose_simulator_is_killed_mid_epoch_resumes_to_the_golden_weights(tmp_path, golden_weights, capfd):
    """The simulator gets no chance to save: the run resumes from its last periodic checkpoint (here one a
    mini-batch), in the middle of the second epoch, and still ends with the uninterrupted run's weights."""
    out = tmp_path / "rtl"
    command = [sys.executable, "-m", "verif.train", *TINY, "--sim", "verilator", "--out", str(out)]
    with open(tmp_path / "killed.log", "w") as log:
        run = subprocess.Popen(
            command + ["--checkpoint-every", "0"],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            deadline, killed = time.time() + 600, None
            while killed is None and run.poll() is None and time.time() < deadline:
                time.sleep(0.1)
                if not (out / CHECKPOINT).exists():
                    continue
                meta, arrays = read_checkpoint(out / CHECKPOINT)
                if meta["epoch"] == 1 and meta["batch_pos"] >= 8 and arrays["perm"].size:  # inside the second epoch
                    [simulator] = _children(run.pid)
                    os.kill(simulator, signal.SIGKILL)
                    killed = meta["batch_pos"]
            assert run.wait(timeout=60) == 1, (tmp_path / "killed.log").read_text()
        finally:
            if run.poll() is None:
                run.kill()
    assert killed is not None, f"the run ended before the second epoch's 8th mini-batch: {out}"
    assert "error: the co-simulated run failed" in (tmp_path / "killed.log").read_text()
    assert not (out / "report.json").exists()
    meta, arrays = read_checkpoint(out / CHECKPOINT)
    assert meta["epoch"] == 1 and killed <= meta["batch_pos"] < BATCHES_PER_EPOCH and arrays["perm"].size
    capfd.readouterr()
    assert train.main(TINY + ["--sim", "verilator", "--out", str(out)]) == 0  # the simulator prints to the fd
    assert f"resuming from {out / CHECKPOINT}: epoch 2, batch {meta['batch_pos']}" in capfd.readouterr().out
    assert_weights(out, golden_weights)


@pytest.mark.skipif("verilator" not in SIMS, reason="the co-simulated run uses Verilator (Icarus is too slow)")
def test_cosim_run_recompiles_when_the_prune_phase_ends(tmp_path):
    """train.rank.recompile on the co-simulated accelerator: the rank budget ends the prune phase in the second epoch,
    the run recompiles at the ranks fit_ranks picks for the build's engine (for tiny, the live ones, as the golden
    run without an engine picks), uploads the compacted state and fine-tunes bit-exactly: the golden model's weights.
    The report keeps the device's counts from before the recompile beside those after it."""
    import json

    from golden.compiler import compile_network
    from golden.config_file import config_from_dict, config_to_dict, load_config

    cfg = config_to_dict(load_config("tiny"))
    cfg["layers"][0]["ranks"] = [4]
    cfg["train"]["rank"] = {
        "enabled": True,
        "prior": 3e-2,
        "threshold": 0.05,
        "warmup_epochs": 1,
        "every": 3,
        "budget": 0.7,
        "recompile": True,
    }
    (tmp_path / "tiny.json").write_text(json.dumps(cfg))
    args = ["--model", str(tmp_path / "tiny.json"), "--dataset", "tiny", "--epochs", "3", "--seed", "3"]
    assert train.main(args + ["--sim", "golden", "--out", str(tmp_path / "golden")]) == 0
    assert train.main(args + ["--sim", "verilator", "--out", str(tmp_path / "rtl")]) == 0
    reports = [json.loads((tmp_path / run / "report.json").read_text()) for run in ("golden", "rtl")]
    assert reports[0]["recompiled_ranks"] == reports[1]["recompiled_ranks"] == reports[1]["history"][-1]["ranks"]
    built = compile_network(config_from_dict(cfg)).macs("train_sample")
    assert reports[1]["macs_per_sample"]["train_sample"] < built
    # the device's counters: the programs of the built network, then those of the recompiled one
    after = reports[1]["device"]
    before = after["before_recompile"]
    assert before["ranks"] == [layer["ranks"] for layer in cfg["layers"]]
    assert before["macs_per_sample"]["train_sample"] == built
    assert after["macs_per_sample"] == reports[1]["macs_per_sample"]
    assert before["program_runs"]["train_sample"] > 0 and after["program_runs"]["train_sample"] > 0
    ref, got = np.load(tmp_path / "golden" / "weights.npz"), np.load(tmp_path / "rtl" / "weights.npz")
    mem = [k for k in ref.files if k.startswith("mem/")]
    assert mem and all(np.array_equal(ref[k], got[k]) for k in mem)
