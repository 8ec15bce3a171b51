"""Tests of what a training run refuses (golden/train.py, golden/checkpoint.py, golden/__main__.py): damaged, foreign
or mismatched checkpoints, other data under the same name, epoch counts, batches and learning rates that cannot train,
invalid configs and seeds, a second run on an OUT in use; each with one line, exit status 2 and the last good outputs
kept."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from golden.__main__ import main
from golden.checkpoint import CHECKPOINT, LOCK, TrainError, content_digest, locked
from golden.compiler import CompileError
from golden.config import NetConfig
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.datasets import load_dataset
from golden.tests.test_train import ROOT, _cfg
from golden.train import Run, check_run

# --- refused inputs: one line, exit 2, and the last good outputs kept ------------------------------------------

OUTPUTS = ("report.json", "weights.npz", CHECKPOINT)


def _outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUTS if (out / name).exists()}


def _train_cli(out: Path, *extra: str) -> list[str]:
    """`python -m golden train` of tiny on tiny for one epoch, seed 1, into `out` (as _finished below)."""
    return ["train", "--model", "tiny", "--dataset", "tiny", "--epochs", "1", "--seed", "1", "--out", str(out), *extra]


@pytest.fixture
def finished(tmp_path, tiny_data, no_plots) -> Path:
    """The OUT of a finished one-epoch run, as `_train_cli(out)` writes it."""
    out = tmp_path / "finished"
    Run(_cfg(epochs=1), tiny_data, 1, out, 1).run()
    assert set(_outputs(out)) == set(OUTPUTS)
    return out


def _rewrite(path: Path, change, fix_digest: bool = False) -> None:
    """The checkpoint's entries changed by `change(arrays)` and saved again with np.savez; with `fix_digest` the
    stored digest is recomputed, so only the checks against the network can see the damage."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    if fix_digest:
        arrays["digest"] = np.array(content_digest({k: v for k, v in arrays.items() if k != "digest"}))
    np.savez(path, **arrays)


def _set(key, value):
    return lambda arrays: arrays.__setitem__(key, value)


DAMAGES = {  # name -> (damage the checkpoint file, the problem the error names)
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:1000]), "is damaged: not a readable .npz archive"),
    "random-bytes": (
        lambda p: p.write_bytes(np.random.default_rng(0).bytes(5000)),
        "is damaged: not a readable .npz archive",
    ),
    "empty": (lambda p: p.write_bytes(b""), "is damaged: not a readable .npz archive"),
    "one-array": (lambda p: np.save(p.open("wb"), np.zeros(3)), "is damaged: not a readable .npz archive"),
    "no-meta": (lambda p: _rewrite(p, lambda a: a.pop("meta")), "is damaged: it has no meta entry"),
    "meta-not-json": (
        lambda p: _rewrite(p, _set("meta", np.array("{'epoch': 1"))),
        "is damaged: its meta entry is not JSON",
    ),
    "short-array": (
        lambda p: _rewrite(p, lambda a: a.__setitem__("mem/G0.0", a["mem/G0.0"][:1])),
        "is damaged: its content does not match the digest stored with it",
    ),
    "no-digest": (
        lambda p: _rewrite(p, lambda a: a.pop("digest")),
        "is damaged: its content does not match the digest stored with it",
    ),
    # with the digest recomputed: the checks against the compiled network
    "short-array-digested": (
        lambda p: _rewrite(p, lambda a: a.__setitem__("mem/G0.0", a["mem/G0.0"][:1]), True),
        r"is damaged: G0\.0 is int64 \(1,\), the network's is int64 \(32,\)",
    ),
    "float-array-digested": (
        lambda p: _rewrite(p, lambda a: a.__setitem__("mem/W0.0", a["mem/W0.0"] * 1.0), True),
        r"is damaged: W0\.0 is float64 \(32,\), the network's is int64 \(32,\)",
    ),
    "out-of-range-digested": (
        lambda p: _rewrite(p, lambda a: a["mem/W0.0"].__setitem__(0, 128), True),
        "is damaged: W0.0 holds values outside its 8-bit format",
    ),
    "missing-tensor-digested": (
        lambda p: _rewrite(p, lambda a: a.pop("mem/B1"), True),
        r"does not hold the network's tensors \(missing \['B1'\], unexpected none\)",
    ),
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_damaged_checkpoint_is_refused_and_keeps_the_outputs(finished, capsys, damage):
    """A damaged checkpoint in a finished run's OUT: one line naming the file, the damage and what to do, exit 2,
    and the report, weights and checkpoint as they were (the run used to rewrite weights.npz from the damage)."""
    path = finished / CHECKPOINT
    make_damage, problem = DAMAGES[damage]
    make_damage(path)
    before = _outputs(finished)
    assert main(_train_cli(finished)) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        re.escape(f"error: {path} ") + problem + r".*; use another OUT directory, or delete it to "
        r"start this run afresh\n",
        err,
    ), err
    assert _outputs(finished) == before


def test_damaged_mid_run_checkpoint_is_refused(tmp_path, tiny_data, no_plots):
    """The same damage in a checkpoint saved mid-epoch (it used to end in a broadcast traceback)."""
    out = tmp_path / "run"
    run = Run(_cfg(), tiny_data, 1, out, 2)
    run.stop_after = 20
    with pytest.raises(SystemExit):
        run.run()
    DAMAGES["short-array-digested"][0](out / CHECKPOINT)
    with pytest.raises(TrainError, match=r"is damaged: G0\.0 is int64 \(1,\)"):
        Run(_cfg(), tiny_data, 1, out, 2)
    assert _outputs(out).keys() == {CHECKPOINT}


def _idx_set(directory: Path, images: np.ndarray, labels: np.ndarray, test: int) -> None:
    """MNIST-format files of 4x4 images: the first `test` samples are the test split, the rest the training one."""
    from golden.datasets import IDX_NAMES, IMAGES_MAGIC, LABELS_MAGIC

    directory.mkdir()
    for split, sel in (("test", slice(0, test)), ("train", slice(test, None))):
        images_name, labels_name = IDX_NAMES[split]
        n = len(labels[sel])
        (directory / images_name).write_bytes(struct.pack(">IIII", IMAGES_MAGIC, n, 4, 4) + images[sel].tobytes())
        (directory / labels_name).write_bytes(struct.pack(">II", LABELS_MAGIC, n) + labels[sel].tobytes())


def test_resume_on_other_data_under_the_same_name_is_refused(tmp_path, no_plots):
    """A run interrupted on the IDX files of directory A, started again on B (other images, same name `mnist`): the
    checkpoint's digests of A's files refuse it, naming B's first file that differs; the same files elsewhere
    resume."""
    d = config_to_dict(_cfg())
    d["classes"] = 10
    d["layers"][1]["out_shape"] = [10]
    cfg = config_from_dict(d)
    rng = np.random.default_rng(3)
    images, labels = rng.integers(0, 256, (96, 4, 4), dtype=np.uint8), (np.arange(96) % 10).astype(np.uint8)
    _idx_set(tmp_path / "a", images, labels, test=32)
    _idx_set(tmp_path / "b", 255 - images, labels, test=32)
    _idx_set(tmp_path / "copy-of-a", images, labels, test=32)
    out = tmp_path / "run"
    run = Run(cfg, load_dataset("mnist", str(tmp_path / "a")), 1, out, 2)
    run.stop_after = 3
    with pytest.raises(SystemExit):
        run.run()
    before = _outputs(out)
    with pytest.raises(TrainError) as e:
        Run(cfg, load_dataset("mnist", str(tmp_path / "b")), 1, out, 2)
    b_images = tmp_path / "b" / "train-images-idx3-ubyte"
    assert str(e.value) == (
        f"{out / CHECKPOINT} was trained on other data than {b_images} (train-images-idx3-ubyte "
        f"differs); resume it with the data it started with (the same DATA_DIR), or use another "
        f"OUT directory"
    )
    assert _outputs(out) == before
    report = Run(cfg, load_dataset("mnist", str(tmp_path / "copy-of-a")), 1, out, 2).run()
    assert len(report["history"]) == 2


@pytest.mark.parametrize("epochs", ["0", "-1"])
def test_epochs_below_one_are_refused(tmp_path, capsys, epochs):
    """EPOCHS=0 used to run the config's epochs, EPOCHS=-1 to write untrained weights and crash."""
    out = tmp_path / "out"
    assert main(["train", "--model", "tiny", "--dataset", "tiny", "--epochs", epochs, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --epochs {epochs} (EPOCHS): a run trains at least 1 epoch; leave it "
        f"out for the config's train.epochs\n"
    )
    assert not out.exists()


def test_fewer_epochs_than_a_finished_run_are_refused_and_more_extend_it(tmp_path, tiny_data, no_plots, capsys):
    """A finished 2-epoch OUT run again with 1 epoch is refused, outputs kept (its report used to say 1 epoch in its
    config and hold 2 in its history); with 3 it goes on to a report of 3 epochs, config and history alike."""
    out = tmp_path / "run"
    cli = ["train", "--model", "tiny", "--dataset", "tiny", "--seed", "1", "--out", str(out), "--epochs"]
    assert main(cli + ["2"]) == 0
    before = _outputs(out)
    capsys.readouterr()
    assert main(cli + ["1"]) == 2
    assert capsys.readouterr().err == (
        f"error: {out / CHECKPOINT} holds a run that has trained 2 epochs, more than the 1 asked for, and a shorter "
        f"run is not refused silently; ask for at least 2 epochs (EPOCHS) to go on with it, or use another OUT "
        f"directory\n"
    )
    assert _outputs(out) == before
    assert main(cli + ["3"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["train"]["epochs"] == report["epochs"] == len(report["history"]) == 3


def test_another_epoch_count_under_a_cosine_schedule_is_refused(tmp_path, tiny_data, no_plots):
    """A cosine schedule spans the run's epochs: resumed with another count, its learning rates would be neither
    run's."""
    d = config_to_dict(_cfg())
    d["train"]["lr_schedule"] = "cosine"
    cfg = config_from_dict(d)
    run = Run(cfg, tiny_data, 1, tmp_path, 2)
    run.stop_after = 10
    with pytest.raises(SystemExit):
        run.run()
    with pytest.raises(
        TrainError,
        match=r"holds a run of 2 epochs whose cosine learning-rate schedule spans the "
        r"whole run, so it resumes only with 2 epochs \(EPOCHS\); use another OUT "
        r"directory for 3$",
    ):
        Run(cfg, tiny_data, 1, tmp_path, 3)


def _tiny_with(**train) -> NetConfig:
    d = config_to_dict(_cfg())
    d["train"].update(train)
    return config_from_dict(d)


def test_a_batch_larger_than_the_training_set_is_refused(tmp_path, tiny_data):
    """tiny has 512 training samples: a batch of 513 trains nothing (it used to report loss 0 and exit 0)."""
    with pytest.raises(TrainError) as e:
        Run(_tiny_with(batch=513), tiny_data, 1, tmp_path / "out", 2)
    assert str(e.value) == (
        "train.batch 513 is larger than the 512 training samples of tiny, so no mini-batch would "
        "run; use a batch of at most 512"
    )
    assert not (tmp_path / "out").exists()
    check_run(_tiny_with(batch=512), tiny_data, 2)


def test_an_lr_whose_step_rounds_to_zero_is_refused(tiny_data):
    """The SGD step is -lr / batch in at most 30 fraction bits: with batch 8 it rounds to zero below lr = 8 * 2^-31
    (half an LSB); 0.4 LSB is refused, 0.6 LSB trains."""
    lsb_lr = 8 * 2.0**-30
    with pytest.raises(
        TrainError,
        match=r"^train\.lr 2\.98023e-09: the first update's step rounds to zero in the "
        r"accelerator's 16-bit step register, so no weight would ever change; use a "
        r"larger train\.lr$",
    ):
        check_run(_tiny_with(lr=0.4 * lsb_lr), tiny_data, 1)
    with pytest.raises(TrainError, match="rounds to zero"):
        check_run(_tiny_with(lr=1e-30), tiny_data, 1)
    check_run(_tiny_with(lr=0.6 * lsb_lr), tiny_data, 1)


def test_an_lr_too_large_for_the_step_register_is_refused(tiny_data):
    """The 16-bit step register holds at most 32767 * 2^16 (2.1e9). The program's SGD step lr / batch is compiled in,
    so the compiler refuses it; Adam's bias-corrected step (lr sqrt(1 - beta2^t) / (1 - beta1^t), 0.316 lr at t = 1)
    is written by the host, so the run refuses lr 1e10 (1.25e9 / batch 8 compiles, 3.2e9 does not fit)."""
    with pytest.raises(
        CompileError,
        match=r"^train\.lr 1e\+30: the step lr / batch is too large for the "
        r"accelerator's 16-bit step register; use a smaller train\.lr$",
    ):
        check_run(_tiny_with(lr=1e30), tiny_data, 1)
    with pytest.raises(
        TrainError,
        match=r"^train\.lr 1e\+10: update 1's step is too large for the accelerator's "
        r"16-bit step register; use a smaller train\.lr$",
    ):
        check_run(_tiny_with(lr=1e10, optimizer="adam"), tiny_data, 1)


HUGE_LAYERS = [
    {"in_shape": [64, 64, 64, 4], "out_shape": [64, 64, 64, 1], "ranks": [64, 64, 64], "relu": True},
    {"in_shape": [64**3], "out_shape": [4], "ranks": [], "relu": False},
]
CLI_REFUSALS = {  # a config that looks valid -> the start of the one line the command prints
    "master-shift": ({"formats": {"master": [8, -20]}}, "error: {path}: formats.master: -20 fraction bits"),
    "descriptor-field": ({"layers": HUGE_LAYERS}, "error: the network does not fit the accelerator's op descriptors"),
    "accumulator": (
        {"formats": {"input": [32, 20]}},  # 4 * 2^31 * 2^15 needs 50 bits
        (
            "error: contraction dG0.1 <- X0 x D0.1[EX1+G0.0] sums 4 products of 32- and 16-bit values: the "
            "worst case needs more than the 48-bit accumulator"
        ),
    ),
    "lr-1e30": ({"train": {"lr": 1e30}}, "error: train.lr 1e+30: the step lr / batch is too large"),
}


@pytest.mark.parametrize("command", ["train", "memory"])
@pytest.mark.parametrize("refusal", CLI_REFUSALS, ids=list(CLI_REFUSALS))
def test_cli_refuses_valid_looking_configs_with_one_line(tmp_path, capsys, refusal, command):
    """Configs that pass the schema but no network or run can be made of: one line, exit 2 (they were tracebacks
    from the compiler, the first training step or the step register)."""
    changes, start = CLI_REFUSALS[refusal]
    d = config_to_dict(load_config("tiny"))
    for key, value in changes.items():
        d[key] = {**d[key], **value} if isinstance(value, dict) else value
    path = tmp_path / "model.json"
    path.write_text(json.dumps(d))
    args = [command, "--model", str(path)] + (
        ["--dataset", "tiny", "--out", str(tmp_path / "out")] if command == "train" else []
    )
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(start.format(path=path)) and captured.err.count("\n") == 1, captured.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_seed_outside_32_bits_names_the_seed(tmp_path, capsys, seed):
    assert main(["train", "--model", "tiny", "--dataset", "tiny", "--seed", seed, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"error: --seed {seed} (SEED): must be in 0..4294967295\n"


def test_a_second_run_on_an_out_in_use_is_refused_and_a_dead_ones_lock_taken_over(tmp_path, finished, capsys):
    """OUT/lock holds the pid of the run writing there: another run on OUT is refused while that process lives,
    naming it, and the outputs stay; once it is dead (killed: its lock file left behind) the next run goes on."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from pathlib import Path; from golden.checkpoint import locked\n"
                "with locked(Path(sys.argv[1])):\n    print('locked', flush=True); time.sleep(120)"
            ),
            str(finished),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        assert (finished / LOCK).read_text() == f"{holder.pid}\n"
        before = _outputs(finished)
        assert main(_train_cli(finished)) == 2
        assert capsys.readouterr().err == (
            f"error: {finished} is in use by another run (pid {holder.pid}, see "
            f"{finished / LOCK}); wait for it to end or use another OUT directory\n"
        )
        assert _outputs(finished) == before
    finally:
        holder.kill()
        holder.wait()
    assert (finished / LOCK).read_text() == f"{holder.pid}\n", "a killed run leaves its lock file"
    with locked(finished):
        assert (finished / LOCK).read_text() == f"{os.getpid()}\n"
    assert not (finished / LOCK).exists()
    assert main(_train_cli(finished)) == 0
