"""Tests of the training driver (golden/train.py) and the command line (golden/__main__.py): bit-exact resume, the
rank schedule's end and budget, recompiling, data set / model checks, the outputs of `train`, the `memory` report and
the progress lines. What a run refuses: golden/tests/test_train_refusals.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from golden.__main__ import main
from golden.checkpoint import CHECKPOINT, TrainError
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.train import Run

ROOT = Path(__file__).resolve().parents[2]


def _cfg(rank: bool = False, epochs: int = 2):
    d = config_to_dict(load_config("tiny"))
    d["train"]["epochs"] = epochs
    if rank:
        d["train"]["rank"] = {"enabled": True, "prior": 1e-2, "warmup_epochs": 1, "every": 3}
    return config_from_dict(d)


def _weights(path: Path) -> dict:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


STABLE_KEYS = ("epoch", "train_loss", "train_acc", "test_acc", "saturations", "ranks", "live_core_params")


def _assert_same_outcome(a: Path, b: Path) -> None:
    wa, wb = _weights(a / "weights.npz"), _weights(b / "weights.npz")
    assert wa.keys() == wb.keys()
    for k in wa:
        assert np.array_equal(wa[k], wb[k]), f"weights.npz[{k}] differs"
    ra, rb = (json.loads((p / "report.json").read_text()) for p in (a, b))
    assert ra["test_acc"] == rb["test_acc"]
    assert [{k: h[k] for k in STABLE_KEYS} for h in ra["history"]] == [
        {k: h[k] for k in STABLE_KEYS} for h in rb["history"]
    ]
    for k in ("formats", "saturations_total", "lfsr_draws", "epochs", "macs_per_sample", "memory"):
        assert ra[k] == rb[k], k


@pytest.mark.parametrize(
    "rank,stops",
    [(False, [37]), (False, [64, 20]), (True, [10, 70])],
    ids=["mid-epoch-1", "epoch-boundary-then-mid-epoch-2", "rank-adaptation"],
)
def test_resume_is_bit_identical(tmp_path, tiny_data, no_plots, rank, stops):
    cfg = _cfg(rank)
    ref = Run(cfg, tiny_data, 5, tmp_path / "ref", cfg.train.epochs).run()
    out = tmp_path / "interrupted"
    for calls in stops:
        run = Run(cfg, tiny_data, 5, out, cfg.train.epochs)
        run.stop_after = calls
        with pytest.raises(SystemExit) as e:
            run.run()
        assert e.value.code == 130
        assert (out / CHECKPOINT).exists() and not (out / "report.json").exists()
    report = Run(cfg, tiny_data, 5, out, cfg.train.epochs).run()
    assert report["test_acc"] == ref["test_acc"] and len(report["history"]) == cfg.train.epochs
    _assert_same_outcome(tmp_path / "ref", out)


def _rank_state(out: Path) -> dict:
    """The rank memories (LAM, TAU, MASK) and the master cores of a run's checkpoint."""
    with np.load(out / CHECKPOINT) as z:
        return {k[4:]: z[k] for k in z.files if k.startswith(("mem/LAM", "mem/TAU", "mem/MASK", "mem/W"))}


@pytest.mark.parametrize("end_epoch", [None, 2])
def test_rank_end_epoch_freezes_ranks_and_turns_the_penalty_off(tmp_path, tiny_data, no_plots, end_epoch):
    """SPEC 5.6 phases: with end_epoch 2, epoch 3 (index 2) runs no rank update (lambda and masks stay) and every
    tau is 0 (penalty off), while training goes on; without end_epoch the prune phase runs to the end."""
    d = config_to_dict(_cfg(epochs=3))
    d["train"]["rank"] = {"enabled": True, "prior": 1e-2, "warmup_epochs": 1, "every": 3, "end_epoch": end_epoch}
    cfg = config_from_dict(d)
    out = tmp_path / "run"
    Run(cfg, tiny_data, 5, out, 2).run()  # warm-up and prune phase
    before = _rank_state(out)
    assert any(before[k].any() for k in before if k.startswith("TAU")), "the prune phase set no tau"
    report = Run(cfg, tiny_data, 5, out, 3).run()  # the same run extended by the third epoch
    after = _rank_state(out)
    lam_same = all(np.array_equal(before[k], after[k]) for k in before if k.startswith("LAM"))
    assert any(not np.array_equal(before[k], after[k]) for k in before if k.startswith("W")), "no training"
    if end_epoch is None:
        assert not lam_same
        assert any(after[k].any() for k in after if k.startswith("TAU"))
    else:
        assert lam_same
        assert all(np.array_equal(before[k], after[k]) for k in before if k.startswith("MASK"))
        assert not any(after[k].any() for k in after if k.startswith("TAU"))
        assert report["history"][-1]["ranks"] == report["history"][-2]["ranks"]


def _budget_cfg(budget):
    """tiny at rank 4 with a prior that prunes it to rank 1 within three epochs when nothing stops it."""
    d = config_to_dict(_cfg(epochs=3))
    d["layers"][0]["ranks"] = [4]
    d["train"]["rank"] = {
        "enabled": True,
        "prior": 3e-2,
        "threshold": 0.05,
        "warmup_epochs": 1,
        "every": 3,
        "budget": budget,
    }
    return config_from_dict(d)


def test_rank_budget_ends_the_prune_phase(tmp_path, tiny_data, no_plots):
    """SPEC 5.6: with budget 0.7 the prune phase stops after the rank update that leaves <= 0.7 of the 128 full
    core parameters (rank 2: 80), turns the penalty off and keeps the ranks; without it the same run prunes on."""
    free = Run(_budget_cfg(None), tiny_data, 5, tmp_path / "free", 3).run()
    assert free["history"][-1]["ranks"] == [[1], []], "the recipe no longer prunes past the budget"
    capped = Run(_budget_cfg(0.7), tiny_data, 5, tmp_path / "capped", 3).run()
    params = [h["live_core_params"] for h in capped["history"]]
    assert params[-1] <= 0.7 * 128 < params[0] and params[-1] > free["history"][-1]["live_core_params"]
    state = _rank_state(tmp_path / "capped")
    assert not any(state[k].any() for k in state if k.startswith("TAU"))
    first = params.index(params[-1])  # the epoch the budget was reached in: no rank change after it
    assert all(p == params[-1] for p in params[first:])


def _recompile_cfg(budget=0.7):
    """_budget_cfg with train.rank.recompile: the run recompiles at its live ranks where the budget is reached."""
    d = config_to_dict(_budget_cfg(budget))
    d["train"]["rank"]["recompile"] = True
    return config_from_dict(d)


@pytest.mark.parametrize("recompile", [False, True])
def test_rank_budget_resume_is_bit_identical(tmp_path, tiny_data, no_plots, recompile):
    """The budget decision reads only the masks: a run stopped before and after the budget is reached (tiny has 64
    mini-batches an epoch; the budget falls in the second) ends as the uninterrupted one; with train.rank.recompile,
    the second stop comes after the recompile, so the last run resumes the recompiled network."""
    cfg = _recompile_cfg() if recompile else _budget_cfg(0.7)
    Run(cfg, tiny_data, 5, tmp_path / "ref", 3).run()
    out = tmp_path / "interrupted"
    for calls in (70, 60):
        run = Run(cfg, tiny_data, 5, out, 3)
        run.stop_after = calls
        with pytest.raises(SystemExit):
            run.run()
    with np.load(out / CHECKPOINT) as z:
        assert (json.loads(str(z["meta"]))["recompiled"] is not None) == recompile
    Run(cfg, tiny_data, 5, out, 3).run()
    _assert_same_outcome(tmp_path / "ref", out)


def test_save_and_new_run_on_same_directory_resumes(tmp_path, tiny_data, no_plots):
    """A checkpoint written by save() after construction is resumed as is: no second calibration."""
    cfg = _cfg(epochs=1)
    ref = Run(cfg, tiny_data, 8, tmp_path / "ref", 1).run()
    first = Run(cfg, tiny_data, 8, tmp_path / "b", 1)
    first.save()
    again = Run(cfg, tiny_data, 8, tmp_path / "b", 1)
    s1, s2 = first.golden.state_dict(), again.golden.state_dict()
    assert all(np.array_equal(s1["mem"][k], s2["mem"][k]) for k in s1["mem"])
    assert (s1["frac"], s1["lfsr"], s1["drawn"]) == (s2["frac"], s2["lfsr"], s2["drawn"])
    assert again.run()["test_acc"] == ref["test_acc"]
    _assert_same_outcome(tmp_path / "ref", tmp_path / "b")


@pytest.mark.parametrize("change", ["seed", "config"])
def test_foreign_checkpoint_is_refused(tmp_path, tiny_data, change):
    cfg = _cfg()
    Run(cfg, tiny_data, 1, tmp_path, cfg.train.epochs).save()
    before = (tmp_path / CHECKPOINT).read_bytes()
    seed, other = 1, cfg
    if change == "seed":
        seed = 2
    else:
        d = config_to_dict(cfg)
        d["train"]["lr"] = 0.2
        other = config_from_dict(d)
    with pytest.raises(TrainError) as e:
        Run(other, tiny_data, seed, tmp_path, cfg.train.epochs)
    assert str(e.value) == (
        f"{tmp_path / CHECKPOINT} belongs to another run (config, dataset or seed differ); use "
        f"another OUT directory, or delete it to start this run afresh"
    )
    assert (tmp_path / CHECKPOINT).read_bytes() == before


def test_checkpoint_of_another_golden_version_is_refused(tmp_path, tiny_data, monkeypatch):
    """Changed arithmetic (an edit of any module of the package, golden/isa/ too) must not silently continue an old
    run."""
    from golden import checkpoint

    cfg = _cfg()
    Run(cfg, tiny_data, 1, tmp_path, cfg.train.epochs).save()
    before = (tmp_path / CHECKPOINT).read_bytes()
    monkeypatch.setattr(checkpoint, "golden_version", lambda: "0" * 16)
    with pytest.raises(TrainError, match="was written by another version of the golden model"):
        Run(cfg, tiny_data, 1, tmp_path, cfg.train.epochs)
    assert (tmp_path / CHECKPOINT).read_bytes() == before


def _cli(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "golden", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_dataset_model_mismatch_exits_before_training(tmp_path):
    out = tmp_path / "out"
    r = _cli("train", "--model", "digits", "--dataset", "tiny", "--out", str(out))
    assert r.returncode != 0
    err = r.stderr
    assert err.startswith("error:") and all(w in err for w in ("tiny", "digits", "16", "64")), err
    assert "Traceback" not in r.stderr
    assert not out.exists(), "nothing is written before the check"


def test_dataset_with_more_classes_than_the_model_is_refused(tmp_path, capsys):
    d = config_to_dict(load_config("tiny"))
    d["classes"] = 3
    cfg_file = tmp_path / "three.json"
    cfg_file.write_text(json.dumps(d))
    assert main(["train", "--model", str(cfg_file), "--dataset", "tiny", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "error: dataset tiny has 4 classes but model tiny has 3\n"
    assert not (tmp_path / "out").exists()


def test_cli_train_writes_report_weights_and_plots(tmp_path):
    out = tmp_path / "run"
    r = _cli("train", "--model", "tiny", "--dataset", "tiny", "--epochs", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    assert 0.0 <= report["test_acc"] <= 1.0
    assert len(report["history"]) == 1 and report["history"][0]["test_acc"] == report["test_acc"]
    assert report["memory"]["accelerator_total_bytes"] > 0
    assert report["macs_per_sample"]["infer"] > 0
    with np.load(out / "weights.npz") as z:
        assert any(k.startswith("mem/") for k in z.files) and "frac" in z.files
    for png in ("training.png", "ranks.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
    assert "test accuracy" in r.stdout


@pytest.mark.parametrize(
    "content",
    ['{"name": "x"', '{"name": "x", "input_size": 16, "classes": 4, "layers": [], "bogus": 1}'],
    ids=["bad-json", "bad-field"],
)
def test_cli_invalid_config_exits_2(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    r = _cli("train", "--model", str(bad), "--dataset", "tiny", "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.startswith("error:") and str(bad) in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_memory_report_of_paper():
    r = _cli("memory", "--model", "paper")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    cfg = load_config("paper")
    sizes = [cfg.input_size] + [layer.n_out for layer in cfg.layers[:-1]] + [cfg.classes]
    dense_weights = sum(a * b for a, b in zip(sizes, sizes[1:]))
    core_params = sum(layer.n_core_params for layer in cfg.layers)
    assert isinstance(rep["accelerator_total_bytes"], int)
    # at least the master and compute copies of every core are on chip
    assert rep["accelerator_total_bytes"] >= core_params * (cfg.formats.master.width + cfg.formats.core.width) / 8
    assert rep["parameter_only_ratio"] == pytest.approx(dense_weights * 32 / (core_params * cfg.formats.core.width))
    assert rep["parameter_only_ratio"] > 100


def test_rank_recompile_fine_tunes_the_smaller_network(tmp_path, tiny_data, no_plots, capsys):
    """train.rank.recompile: once the budget ends the prune phase, the run goes on with the network recompiled at its
    live ranks (golden/compact.py): the ranks the run without the recompile ends with, fewer MACs per sample and a
    smaller training state, the compacted cores in the checkpoint, and training that still learns (tiny reaches
    over 0.9 either way; resuming it: test_rank_budget_resume_is_bit_identical)."""
    masked = Run(_budget_cfg(0.7), tiny_data, 5, tmp_path / "masked", 3).run()
    small = Run(_recompile_cfg(), tiny_data, 5, tmp_path / "small", 3).run()
    live = small["history"][-1]["ranks"]
    assert small["recompiled_ranks"] == live == masked["history"][-1]["ranks"] != [[4], []]
    assert "recompiled at ranks" in capsys.readouterr().out
    assert small["macs_per_sample"]["train_sample"] < masked["macs_per_sample"]["train_sample"]
    assert small["memory"]["accelerator_total_bytes"] < masked["memory"]["accelerator_total_bytes"]
    with np.load(tmp_path / "small" / CHECKPOINT) as z:
        assert z["mem/W0.0"].size == 4 * 4 * live[0][0] < 4 * 4 * 4  # the compacted master core (1, 4, 4, r)
    assert small["history"][-1]["test_acc"] > 0.9 and masked["history"][-1]["test_acc"] > 0.9


def test_progress_in_a_log_gives_the_whole_runs_rate_and_eta(monkeypatch, capsys):
    """Not a terminal (capsys): a line every `every` seconds whose ETA is the rest of the run, not of the epoch."""
    from golden import run_report as T

    now = [1000.0]
    monkeypatch.setattr(T.time, "time", lambda: now[0])
    bar = T.RunProgress(epochs=3, epoch_samples=100, initial=100, every=10)  # resumed in epoch 2
    assert bar.bar is None
    bar.epoch(2, 0)
    bar.note("loss 0.500")
    now[0] += 10
    bar.update(50)
    assert capsys.readouterr().out == (
        "epoch 2/3: 150/300 samples of the run, 5.0 samples/s, run ETA 0:30, loss 0.500\n"
    )
    now[0] += 5
    bar.update(10)  # within `every` of the last line: quiet
    assert capsys.readouterr().out == ""
