"""`make train`'s command (verif/train.py): what it refuses before any simulation starts, each with one line and
exit 2, and the engine it builds from make's defaults. The simulation itself is replaced by a stand-in that records
its call (the co-simulated runs: verif/top/test_train_resume.py)."""

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from golden.checkpoint import CHECKPOINT, locked
from golden.config_file import config_to_dict, load_config
from golden.program import AccelParams
from verif import train

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--model", "tiny", "--dataset", "tiny", "--epochs", "1", "--seed", "1"]


@pytest.fixture
def simulations(monkeypatch) -> list[tuple[AccelParams, Path]]:
    """The (accelerator parameters, OUT) of every co-simulation verif/train.py would have started."""
    started: list[tuple[AccelParams, Path]] = []

    def cosimulate(a: argparse.Namespace, cfg, params: AccelParams, out: Path, suffix: str) -> int:
        started.append((params, out))
        return 0

    monkeypatch.setattr(train, "cosimulate", cosimulate)
    return started


def _config(tmp_path: Path, **changes) -> str:
    d = config_to_dict(load_config("tiny"))
    d.update(changes)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(d))
    return str(path)


def test_a_config_name_that_leaves_build_is_refused(tmp_path, capsys, simulations):
    """The default OUT is build/train/<name>-...: a name '../../escape' put it at the repository's root."""
    model = _config(tmp_path, name="../../escape")
    assert train.main(["--model", model, "--dataset", "tiny", "--sim", "golden"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {model}: name: '../../escape' is part of the output paths")
    assert not list(ROOT.glob("escape*")) and not simulations


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--epochs", "0"],
            ("--epochs 0 (EPOCHS): a run trains at least 1 epoch; leave it out for the config's train.epochs"),
        ),
        (["--seed", "-1"], "--seed -1 (SEED): must be in 0..4294967295"),
    ],
    ids=["epochs-0", "seed-negative"],
)
def test_bad_arguments_are_refused(tmp_path, capsys, simulations, args, message):
    out = tmp_path / "out"
    assert train.main(["--model", "tiny", "--dataset", "tiny", "--out", str(out), *args]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not out.exists() and not simulations


def test_a_run_that_trains_nothing_is_refused_before_the_build(tmp_path, capsys, simulations):
    model = _config(tmp_path, train={**config_to_dict(load_config("tiny"))["train"], "lr": 1e-30})
    assert train.main(["--model", model, "--dataset", "tiny", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("error: train.lr 1e-30: the first update's step rounds to zero")
    assert not simulations


def test_a_damaged_checkpoint_is_refused_before_the_build(tmp_path, capsys, simulations):
    """The run inside the simulator would refuse it too, but only after building the accelerator."""
    out = tmp_path / "out"
    assert train.main([*TINY, "--sim", "golden", "--out", str(out)]) == 0
    path = out / CHECKPOINT
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["mem/G0.0"] = arrays["mem/G0.0"][:1]
    np.savez(path, **arrays)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    assert train.main([*TINY, "--sim", "verilator", "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path} is damaged: its content does not match the digest")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before and not simulations


def test_an_out_in_use_is_refused(tmp_path, capsys, simulations):
    out = tmp_path / "out"
    with locked(out):
        assert train.main([*TINY, "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {out} is in use by another run")
    assert not simulations


def test_make_defaults_build_an_engine_for_any_lanes(tmp_path, simulations):
    """make passes VEC=8 DRAIN=8 whatever LANES is: at 3 lanes the engine loads and drains 2 words."""
    out = tmp_path / "out"
    assert train.main([*TINY, "--out", str(out), "--lanes", "3", "--vec", "8", "--drain", "8"]) == 0
    [(params, where)] = simulations
    assert (params.lanes, params.vec, params.drain, where) == (3, 2, 2, out)
    assert not (out / "lock").exists()


def test_cosimulated_runs_default_to_a_short_run_in_a_directory_of_their_own(tmp_path, monkeypatch):
    """A co-simulated digits epoch takes minutes: without EPOCHS the run trains COSIM_EPOCHS epochs. digits' cosine
    schedule spans the run, so the short run and the config's full run (EPOCHS=20) could not resume one another and
    get default directories of their own; the golden model trains the config's epochs."""
    epochs = []
    monkeypatch.setattr(train, "cosimulate", lambda a, cfg, params, out, suffix: epochs.append(cfg.train.epochs) or 0)
    assert train.main(["--model", "digits", "--dataset", "digits", "--out", str(tmp_path / "short")]) == 0
    assert (
        train.main(["--model", "digits", "--dataset", "digits", "--epochs", "20", "--out", str(tmp_path / "full")]) == 0
    )
    assert epochs == [train.COSIM_EPOCHS, 20] and train.COSIM_EPOCHS < 20
    cfg = load_config("digits")
    short = replace(cfg, train=replace(cfg.train, epochs=train.COSIM_EPOCHS))
    assert (
        train.default_out(short, "digits", 1, "verilator", "", 20).name
        == f"digits-digits-seed1-verilator-{train.COSIM_EPOCHS}epochs"
    )
    assert train.default_out(cfg, "digits", 1, "verilator", "", 20).name == "digits-digits-seed1-verilator"
    # a constant schedule extends a finished run in place (EPOCHS larger): the same directory
    tiny = load_config("tiny")
    assert tiny.train.lr_schedule == "constant"
    longer = replace(tiny, train=replace(tiny.train, epochs=tiny.train.epochs + 3))
    assert train.default_out(longer, "tiny", 1, "verilator", "", tiny.train.epochs).name == "tiny-tiny-seed1-verilator"


def test_the_summary_says_whether_the_accelerator_ended_with_the_golden_weights(tmp_path):
    golden = {"mem/G0.0": np.arange(6), "mem/b0": np.zeros(3, dtype=np.int64)}
    np.savez(tmp_path / "weights.npz", **golden, frac="{}")
    np.savez(tmp_path / "rtl_state.npz", **golden, **{"mem/V0.0": np.ones(6)})  # the state has momenta too
    exact, verdict = train.bit_exact_verdict(tmp_path, "sample")
    assert exact and verdict.startswith("bit-exact: ") and "(2 tensors)" in verdict and "CHECK=sample" in verdict
    np.savez(tmp_path / "rtl_state.npz", **{**golden, "mem/b0": np.array([0, 1, 0])})
    exact, verdict = train.bit_exact_verdict(tmp_path, "off")
    assert (
        not exact and verdict.startswith("NOT bit-exact: the accelerator's final b0 differs") and "CHECK=off" in verdict
    )
