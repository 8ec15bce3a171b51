"""Network configs: the built-in models, the JSON round trip, and one rejection per validation rule."""

import json
import re

import pytest

from golden.config import MAX_CORES, MAX_RANK, ConfigError, Formats, NetConfig
from golden.config_file import builtin_configs, config_from_dict, config_to_dict, load_config
from golden.fxp import Fmt


def test_builtins_are_tiny_digits_paper():
    assert builtin_configs() == ("digits", "paper", "tiny")


@pytest.mark.parametrize("name", ["tiny", "digits", "paper"])
def test_builtin_loads_with_its_name(name):
    cfg = load_config(name)
    assert isinstance(cfg, NetConfig) and cfg.name == name
    assert cfg.formats == Formats()


def test_tiny_shapes_and_training():
    cfg = load_config("tiny")
    assert (cfg.input_size, cfg.classes, cfg.padded_input) == (16, 4, 16)
    tt, dense = cfg.layers
    assert (tt.in_shape, tt.out_shape, tt.ranks, tt.relu) == ((4, 4), (4, 2), (2,), True)
    assert (dense.in_shape, dense.out_shape, dense.ranks, dense.relu) == ((8,), (4,), (), False)
    t = cfg.train
    assert (t.optimizer, t.lr, t.momentum, t.batch, t.epochs) == ("sgd", 0.05, 0.9, 8, 5)


def test_digits_shapes_and_training():
    cfg = load_config("digits")
    assert (cfg.input_size, cfg.classes) == (64, 10)
    tt, dense = cfg.layers
    assert (tt.in_shape, tt.out_shape, tt.ranks, tt.relu) == ((4, 4, 4), (4, 4, 4), (8, 8), True)
    assert (dense.in_shape, dense.out_shape, dense.ranks, dense.relu) == ((64,), (10,), (), False)
    t = cfg.train
    assert (t.optimizer, t.lr, t.momentum, t.batch, t.epochs, t.rank.enabled) == ("sgd", 0.02, 0.9, 16, 20, False)


def test_paper_matches_the_published_parameter_counts():
    """PAPER.md: 9,664 + 4,608 core parameters and 528 biases; input 784 padded to 896, 16 outputs."""
    cfg = load_config("paper")
    fc1, fc2 = cfg.layers
    assert (fc1.in_shape, fc1.out_shape, fc1.ranks, fc1.relu) == ((7, 4, 2, 16), (4, 4, 2, 16), (16, 16, 16), True)
    assert (fc2.in_shape, fc2.out_shape, fc2.ranks, fc2.relu) == ((32, 16), (1, 16), (16,), False)
    assert [l.n_core_params for l in cfg.layers] == [9664, 4608]
    assert sum(l.n_out for l in cfg.layers) == 528
    assert (cfg.input_size, cfg.padded_input, fc2.n_out, cfg.classes) == (784, 896, 16, 10)
    t = cfg.train
    assert (t.optimizer, t.lr, t.momentum, t.batch, t.epochs) == ("sgd", 0.02, 0.9, 64, 10)


@pytest.mark.parametrize("name", ["tiny", "digits", "paper"])
def test_round_trip_through_a_json_file(name, tmp_path):
    cfg = load_config(name)
    path = tmp_path / "run_config.json"
    path.write_text(json.dumps(config_to_dict(cfg), indent=2))
    assert load_config(str(path)) == cfg


def test_round_trip_keeps_non_default_formats_and_rank_settings():
    data = config_to_dict(load_config("digits"))
    data["formats"].update(core=[3, 2], act=[12, 6], frac_min=-4, frac_max=20)
    data["train"].update(optimizer="adam", lr=0.001, momentum=0)
    data["train"]["rank"].update(
        enabled=True, prior=1e-4, threshold=0.01, every=4, warmup_epochs=3, end_epoch=6, budget=0.75, recompile=True
    )
    cfg = config_from_dict(data)
    assert cfg.formats.core == Fmt(3, 2) and cfg.formats.frac_max == 20
    assert cfg.train.rank.every == 4 and cfg.train.rank.end_epoch == 6 and cfg.train.momentum == 0.0
    assert cfg.train.rank.budget == 0.75 and cfg.train.rank.recompile
    assert config_to_dict(cfg) == data
    assert config_from_dict(json.loads(json.dumps(config_to_dict(cfg)))) == cfg


def test_formats_and_train_are_optional():
    data = config_to_dict(load_config("tiny"))
    del data["formats"], data["train"]
    cfg = config_from_dict(data)
    assert cfg.formats == Formats() and cfg.train == type(cfg.train)()


def _base() -> dict:
    return config_to_dict(load_config("tiny"))


def _set(path: str, value):
    """A mutation of the tiny config: set the value at a dotted path (list indices as integers)."""

    def mutate(data):
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(path: str):
    def mutate(data):
        *parents, last = path.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        del node[last]

    return mutate


def _two_tt_layers(data):
    """A valid starting point for layer-shape cases: 16 -> (4,4)x(4,4) -> 16 -> (4,4)x(2,2) -> 4."""
    data["layers"] = [
        {"in_shape": [4, 4], "out_shape": [4, 4], "ranks": [2], "relu": True},
        {"in_shape": [4, 4], "out_shape": [2, 2], "ranks": [2], "relu": False},
    ]


def _then(*mutations):
    def mutate(data):
        for m in mutations:
            m(data)

    return mutate


INVALID = [
    # unknown and missing keys, at every level
    (_set("_doc", "notes"), r"^_doc: unknown key"),
    (_set("layers.0.bias", True), r"^layers\[0\]\.bias: unknown key"),
    (_set("formats.accumulator", [48, 0]), r"^formats\.accumulator: unknown key"),
    (_set("train.weight_decay", 0.1), r"^train\.weight_decay: unknown key"),
    (_set("train.rank.lambda", 1.0), r"^train\.rank\.lambda: unknown key"),
    (_delete("classes"), r"^classes: missing"),
    (_delete("layers.1.relu"), r"^layers\[1\]\.relu: missing"),
    # wrong types
    (_set("name", 3), r"^name: expected a non-empty string"),
    (_set("input_size", 16.0), r"^input_size: expected an integer"),
    (_set("classes", True), r"^classes: expected an integer"),
    (_set("layers", {}), r"^layers: expected a non-empty list"),
    (_set("layers", []), r"^layers: expected a non-empty list"),
    (_set("layers.0", [4, 4]), r"^layers\[0\]: expected an object"),
    (_set("layers.0.in_shape", "4x4"), r"^layers\[0\]\.in_shape: expected a list of integers"),
    (_set("layers.0.ranks", [2.5]), r"^layers\[0\]\.ranks\[0\]: expected an integer"),
    (_set("layers.0.relu", 1), r"^layers\[0\]\.relu: expected true or false"),
    (_set("formats", [4, 3]), r"^formats: expected an object"),
    (_set("formats.core", 4), r"^formats\.core: expected \[width, frac\]"),
    (_set("formats.core", [4, 3, 1]), r"^formats\.core: expected \[width, frac\]"),
    (_set("formats.core", [4, "3"]), r"^formats\.core\[1\]: expected an integer"),
    (_set("formats.frac_min", -8.0), r"^formats\.frac_min: expected an integer"),
    (_set("train", None), r"^train: expected an object"),
    (_set("train.lr", "0.1"), r"^train\.lr: expected a finite number"),
    (_set("train.lr", float("nan")), r"^train\.lr: expected a finite number"),
    (_set("train.rank", True), r"^train\.rank: expected an object"),
    (_set("train.rank.enabled", "yes"), r"^train\.rank\.enabled: expected true or false"),
    (_set("train.rank.recompile", 1), r"^train\.rank\.recompile: expected true or false"),
    # core counts, factors and ranks
    (_set("layers.0.in_shape", []), rf"^layers\[0\]\.in_shape: expected 1\.\.{MAX_CORES} factors"),
    (_set("layers.0.in_shape", [1] * (MAX_CORES + 1)), rf"^layers\[0\]\.in_shape: expected 1\.\.{MAX_CORES} factors"),
    (_set("layers.0.out_shape", [8]), r"^layers\[0\]\.out_shape: expected 2 factors like in_shape, got 1"),
    (_set("layers.0.in_shape", [16, 0]), r"^layers\[0\]\.in_shape\[1\]: must be >= 1, got 0"),
    (_set("layers.1.out_shape", [-4]), r"^layers\[1\]\.out_shape\[0\]: must be >= 1, got -4"),
    (
        _then(_two_tt_layers, _set("layers.1.ranks", [2, 2, 2])),
        r"^layers\[1\]\.ranks: expected 1 rank for 2 cores, got 3",
    ),
    (_set("layers.0.ranks", []), r"^layers\[0\]\.ranks: expected 1 rank for 2 cores, got 0"),
    (_set("layers.1.ranks", [4]), r"^layers\[1\]\.ranks: expected 0 ranks for 1 core, got 1"),
    (_set("layers.0.ranks", [0]), rf"^layers\[0\]\.ranks\[0\]: must be in 1\.\.{MAX_RANK}, got 0"),
    (_set("layers.0.ranks", [MAX_RANK + 1]), rf"^layers\[0\]\.ranks\[0\]: must be in 1\.\.{MAX_RANK}"),
    # chaining, padding, logits
    (_set("layers.1.in_shape", [6]), r"^layers\[1\]\.in_shape: product 6 != product of layers\[0\]\.out_shape 8"),
    (_set("input_size", 17), r"^layers\[0\]\.in_shape: product 16 < input_size 17"),
    (_set("input_size", 0), r"^input_size: must be >= 1, got 0"),
    (_set("classes", 5), r"^layers\[1\]\.out_shape: product 4 < classes 5"),
    (_set("classes", 1), r"^classes: must be >= 2, got 1"),
    (_set("layers.1.relu", True), r"^layers\[1\]\.relu: must be false for the last layer"),
    # formats
    (_set("formats.core", [1, 0]), r"^formats\.core: format width 1 out of range"),
    (_set("formats.grad", [16, 48]), r"^formats\.grad: format fraction bits 48 out of range"),
    (_set("formats.core", [10, 3]), r"^formats\.core: width 10 exceeds the master width 8"),
    (_set("formats.frac_min", 30), r"^formats\.frac_min: 30 must be < frac_max 30"),
    (_set("formats.act", [16, 31]), r"^formats\.act: initial fraction bits 31 outside frac_min\.\.frac_max"),
    # the compute cores are derived from the master by a shift of master.frac - core.frac (here 3)
    (
        _set("formats.master", [8, -20]),
        (
            r"^formats\.master: -20 fraction bits against the core's 3 make the compute "
            r"cores' requantisation shift -23, outside the accelerator's -16\.\.47; use "
            r"master fraction bits in -13\.\.50$"
        ),
    ),
    # the name is part of output paths
    (_set("name", "../../escape"), r"^name: '\.\./\.\./escape' is part of the output paths"),
    (_set("name", "a/b"), r"^name: 'a/b' is part of the output paths"),
    (_set("name", ".hidden"), r"^name: '\.hidden' is part of the output paths"),
    # training
    (_set("train.optimizer", "rmsprop"), r"^train\.optimizer: unknown optimizer 'rmsprop'; known: sgd, adam"),
    (_set("train.lr", 0), r"^train\.lr: must be > 0"),
    (_set("train.lr", -0.1), r"^train\.lr: must be > 0"),
    (_set("train.momentum", 1.0), r"^train\.momentum: must be >= 0\.0 and < 1\.0, got 1\.0"),
    (_set("train.momentum", -0.5), r"^train\.momentum: must be >= 0\.0 and < 1\.0"),
    (_set("train.batch", 0), r"^train\.batch: must be >= 1, got 0"),
    (_set("train.epochs", 0), r"^train\.epochs: must be >= 1, got 0"),
    (_set("train.rank.threshold", 0.0), r"^train\.rank\.threshold: must be > 0"),
    (_set("train.rank.every", 0), r"^train\.rank\.every: must be >= 1, got 0"),
    (_set("train.rank.prior", -1e-5), r"^train\.rank\.prior: must be >= 0"),
    (_set("train.rank.warmup_epochs", -1), r"^train\.rank\.warmup_epochs: must be >= 0"),
    (_set("train.rank.end_epoch", 0), r"^train\.rank\.end_epoch: must be >= 1, got 0"),
    (_set("train.rank.end_epoch", 1.5), r"^train\.rank\.end_epoch: expected an integer"),
    (_set("train.rank.end_epoch", 1), r"^train\.rank\.end_epoch: must be > warmup_epochs \(1\)"),
    (_set("train.rank.budget", 0), r"^train\.rank\.budget: must be > 0\.0 and < 1\.0, got 0"),
    (_set("train.rank.budget", 1.0), r"^train\.rank\.budget: must be > 0\.0 and < 1\.0, got 1\.0"),
    (_set("train.rank.budget", "half"), r"^train\.rank\.budget: expected a finite number"),
]


@pytest.mark.parametrize("mutate, match", INVALID, ids=[m for _, m in INVALID])
def test_invalid_config_names_the_field(mutate, match):
    data = _base()
    mutate(data)
    with pytest.raises(ConfigError, match=match):
        config_from_dict(data)


def test_two_tt_layer_base_is_valid():
    """The base the rank-count case mutates must itself be valid, or that case proves nothing."""
    data = _base()
    _two_tt_layers(data)
    assert config_from_dict(data).layers[1].ranks == (2,)


def test_top_level_must_be_an_object():
    with pytest.raises(ConfigError, match=r"^config: expected an object, got a list"):
        config_from_dict([1, 2])


def test_file_errors_name_the_file(tmp_path):
    data = _base()
    data["layers"][1]["relu"] = True
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: layers\[1\]\.relu: must be false"):
        load_config(str(path))


def test_malformed_json_names_file_and_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "name": "x",\n  "classes": 4,,\n}\n')
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: line 3 column \d+: invalid JSON"):
        load_config(str(path))


def test_duplicate_key_is_rejected(tmp_path):
    data = json.dumps(_base())
    path = tmp_path / "dup.json"
    path.write_text(data[:-1] + ', "classes": 3}')
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: duplicate key 'classes'"):
        load_config(str(path))


def test_unknown_name_lists_the_builtins():
    with pytest.raises(ConfigError, match=r"^nosuch: not a built-in config \(digits, paper, tiny\) and no such file"):
        load_config("nosuch")
