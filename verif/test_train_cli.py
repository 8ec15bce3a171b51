"""`make train`'s command (verif/train.py): what it refuses before any simulation starts, each with one line and
exit 2, and the engine it builds from make's defaults. The simulation itself is replaced by a stand-in that records
its call (the co-simulated runs: verif/top/test_train_resume.py)."""
import json
from pathlib import Path

import numpy as np
import pytest

from golden.config import config_to_dict, load_config
from golden.train import CHECKPOINT, locked
from verif import train

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--model", "tiny", "--dataset", "tiny", "--epochs", "1", "--seed", "1"]


@pytest.fixture
def simulations(monkeypatch) -> list:
    """The (accelerator parameters, OUT) of every co-simulation verif/train.py would have started."""
    started = []
    monkeypatch.setattr(train, "cosimulate", lambda a, cfg, params, out, suffix: started.append((params, out)) or 0)
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


@pytest.mark.parametrize("args, message", [
    (["--epochs", "0"], ("--epochs 0 (EPOCHS): a run trains at least 1 epoch; leave it out for the config's "
                         "train.epochs")),
    (["--seed", "-1"], "--seed -1 (SEED): must be in 0..4294967295"),
], ids=["epochs-0", "seed-negative"])
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
