"""The JSON form of a network config (golden/config.py): shapes, ranks, number formats, optimizer and rank-adaptation
settings.

A config is a JSON file (or one of the built-in names `tiny`, `digits`, `paper`, stored in golden/models/).
`load_config(name_or_path)` returns a validated `NetConfig`; anything invalid raises `ConfigError` naming the
field and the problem. `config_to_dict(cfg)` gives the JSON form back, so a run can store the exact config it
used and `load_config` can read it again.

JSON schema (pure JSON: no comments, no extra keys; every object rejects keys it does not know):

    {
      "name": str,                     # letters, digits, '.', '_', '-' (not first '.'): it names output files
      "input_size": int >= 1,          # flattened image size; zero-padded to prod(layers[0].in_shape)
      "classes": int >= 2,             # classes used; the last layer may have more (padded) outputs
      "layers": [                      # at least one; layer i's prod(out_shape) == layer i+1's prod(in_shape)
        {"in_shape": [n1, .., nd],     # d = 1..MAX_CORES cores, every factor >= 1
         "out_shape": [m1, .., md],    # same d; a dense layer is d = 1 with "ranks": []
         "ranks": [r1, .., r(d-1)],    # inner TT ranks, each 1..MAX_RANK
         "relu": bool}                 # must be false for the last layer (its outputs are the logits)
      ],
      "formats": {                     # optional, and so is every key in it (defaults: `Formats`)
        "core": [W, F], "master": [W, F], "bias": [W, F], "input": [W, F], "act": [W, F],
        "err": [W, F], "bwd": [W, F], "grad": [W, F], "momentum": [W, F], "adam_m": [W, F],
        "adam_v": [W, F],
        "frac_min": int, "frac_max": int
      },
      "train": {                       # optional, and so is every key in it (defaults: `TrainCfg`)
        "optimizer": "sgd" | "adam", "lr": number > 0, "momentum": 0 <= number < 1 (Adam: beta1),
        "beta2": 0 < number < 1, "eps": number > 0,
        "batch": int >= 1, "epochs": int >= 1, "reuse_forward": bool, "lr_schedule": "constant" | "cosine",
        "rank": {"enabled": bool, "prior": number >= 0, "threshold": number > 0,
                 "prior_scaling": "per_sample" | "map", "every": int >= 1,
                 "warmup_epochs": int >= 0, "end_epoch": null | int > warmup_epochs,
                 "warmup_steps": null | int >= 0, "end_step": null | int > warmup_steps,
                 "warmup_samples": null | int >= 0, "end_sample": null | int > warmup_samples,
                 "budget": null | 0 < number < 1, "budget_cycles": null | int >= 1,
                 "budget_engine": {"lanes": int >= 1, "buf_depth": int >= 1, "vec": int >= 1, "drain": int >= 1},
                 "budget_target": bool, "recompile": bool}
      }
    }

Rank adaptation (SPEC 5.6) runs in the prune phase, from the warm-up's end to the prune end (golden/rank_schedule.py
turns both into optimizer steps, the mini-batches of the run counted from 0): the penalty is on and every `every`
mini-batches the lambdas update and slices are pruned. After it the ranks stay as pruned, the penalty is off (every
tau 0) and the rest of the run fine-tunes the live slices. The phases are counted in one unit, the config's choice:
epochs (warmup_epochs, end_epoch; 0-based, the default form), optimizer steps (warmup_steps, end_step) or training
samples (warmup_samples, end_sample: the phase starts with the first mini-batch that starts at or after that sample);
an end of null prunes to the end of the run. Steps and samples do not change with the training set's size, epochs do.
`prior_scaling`: "per_sample" (default) pulls `prior` per training sample, so an epoch pulls prior * N; "map"
scales it as the MAP objective (the data set's summed loss + prior * sum ||slice||^2 / lambda) does, batch / N per
mini-batch, so an epoch pulls `prior` whatever N and the batch (prior 2.4 under "map" is 4e-5 "per_sample" at
N = 60,000). `budget` ends the prune phase early, after the rank update that brings the live TT core parameters to
at most that fraction of the full count (e.g. 0.72: at least 28 % fewer). `budget_cycles` instead of `budget`: the
budget is a training sample's accelerator cycles with its share of the update on `budget_engine` (default the
engine `make train` builds: 8 lanes, 512-word buffers, vector loads and drains of 8), at the ranks golden/cost.py
fit_ranks picks for the live ones ("this network in at most N cycles a sample"). With `budget_target` (default
false) the budget is a target: where the prior prunes more slowly than a straight path to the budget over three
quarters of the prune phase, the rank updates run at a threshold raised just above the smallest lambdas (the RANK
ops prune), and a budget still unmet at the prune end is squeezed there or ends with a message and the closest
result (a bond keeps one slice). `recompile` (default false): when the prune phase
ends, the network is recompiled at smaller ranks and fine-tunes with the smaller programs, its state carried over
(golden/compact.py): at the live ranks, or on the accelerator at the ranks golden/cost.py fit_ranks finds fastest
on its engine.

Integers must be JSON integers (16.0 is rejected); numbers may be written either way.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, NoReturn

from golden.config import (
    ADAPTIVE_FORMATS,
    LR_SCHEDULES,
    MAX_CORES,
    MAX_RANK,
    MODELS_DIR,
    NAME_PATTERN,
    OPTIMIZERS,
    PRIOR_SCALINGS,
    ConfigError,
    EngineCfg,
    Formats,
    LayerCfg,
    NetConfig,
    RankCfg,
    TrainCfg,
)
from golden.fxp import SHIFT_MAX, SHIFT_MIN, Fmt


def builtin_configs() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in MODELS_DIR.glob("*.json")))


def load_config(name_or_path: str) -> NetConfig:
    """A built-in config by name (golden/models/<name>.json) or a user's JSON file, validated."""
    builtins = builtin_configs()
    path = MODELS_DIR / f"{name_or_path}.json" if name_or_path in builtins else Path(name_or_path)
    if not path.is_file():
        raise ConfigError(f"{name_or_path}: not a built-in config ({', '.join(builtins)}) and no such file")
    try:
        data = json.loads(path.read_text(), object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    except (ConfigError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {e}") from None
    try:
        return config_from_dict(data)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """json silently keeps the last of two equal keys; in a config that hides a typo, so refuse it."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"duplicate key {key!r}")
        out[key] = value
    return out


def config_from_dict(data: object) -> NetConfig:
    """Validate the JSON form (see the module docstring) and build the config."""
    top = _object(data, "", required=("name", "input_size", "classes", "layers"), optional=("formats", "train"))
    name = _str(top["name"], "name")
    if not NAME_PATTERN.fullmatch(name):
        _fail(
            "name",
            f"{name!r} is part of the output paths (build/train/<name>-...): use letters, digits, '.', "
            f"'_' and '-' only, not starting with '.'",
        )
    input_size = _int(top["input_size"], "input_size", lo=1)
    classes = _int(top["classes"], "classes", lo=2)
    layers = _layers(top["layers"], input_size, classes)
    formats = _formats(top.get("formats", {}))
    train = _train(top.get("train", {}))
    return NetConfig(name=name, input_size=input_size, classes=classes, layers=layers, formats=formats, train=train)


def config_to_dict(cfg: NetConfig) -> dict:
    """The JSON form of a config, complete (every default written out); `config_from_dict` inverts it."""
    formats = {}
    for f in dataclasses.fields(Formats):
        value = getattr(cfg.formats, f.name)
        formats[f.name] = [value.width, value.frac] if isinstance(value, Fmt) else value
    return {
        "name": cfg.name,
        "input_size": cfg.input_size,
        "classes": cfg.classes,
        "layers": [
            {"in_shape": list(l.in_shape), "out_shape": list(l.out_shape), "ranks": list(l.ranks), "relu": l.relu}
            for l in cfg.layers
        ],
        "formats": formats,
        "train": dataclasses.asdict(cfg.train),
    }


def with_ranks(cfg: NetConfig, ranks) -> NetConfig:
    """`cfg` with other inner TT ranks per layer (e.g. a pruned network recompiled at its live ranks), checked like
    a config file (ConfigError names what is wrong)."""
    if not isinstance(ranks, (list, tuple)) or len(ranks) != len(cfg.layers):
        raise ConfigError(f"ranks: expected one list of inner ranks per layer ({len(cfg.layers)}), got {ranks!r}")
    data = config_to_dict(cfg)
    for layer, r in zip(data["layers"], ranks):
        layer["ranks"] = list(r) if isinstance(r, (list, tuple)) else r
    return config_from_dict(data)


def _layers(value: object, input_size: int, classes: int) -> tuple[LayerCfg, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"layers: expected a non-empty list of layers, got {_kind(value)}")
    layers = tuple(_layer(item, f"layers[{i}]") for i, item in enumerate(value))
    if layers[0].n_in < input_size:
        raise ConfigError(
            f"layers[0].in_shape: product {layers[0].n_in} < input_size {input_size} "
            "(the input is zero-padded to the product, never cut)"
        )
    for i in range(1, len(layers)):
        if layers[i].n_in != layers[i - 1].n_out:
            raise ConfigError(
                f"layers[{i}].in_shape: product {layers[i].n_in} != product of "
                f"layers[{i - 1}].out_shape {layers[i - 1].n_out}"
            )
    last = len(layers) - 1
    if layers[last].n_out < classes:
        raise ConfigError(f"layers[{last}].out_shape: product {layers[last].n_out} < classes {classes}")
    if layers[last].relu:
        raise ConfigError(f"layers[{last}].relu: must be false for the last layer (its outputs are the logits)")
    return layers


def _layer(value: object, where: str) -> LayerCfg:
    obj = _object(value, where, required=("in_shape", "out_shape", "ranks", "relu"))
    in_shape = _int_list(obj["in_shape"], f"{where}.in_shape", lo=1)
    out_shape = _int_list(obj["out_shape"], f"{where}.out_shape", lo=1)
    ranks = _int_list(obj["ranks"], f"{where}.ranks", lo=1, hi=MAX_RANK)
    relu = _bool(obj["relu"], f"{where}.relu")
    d = len(in_shape)
    if not 1 <= d <= MAX_CORES:
        raise ConfigError(f"{where}.in_shape: expected 1..{MAX_CORES} factors (one per core), got {d}")
    if len(out_shape) != d:
        raise ConfigError(f"{where}.out_shape: expected {d} factors like in_shape, got {len(out_shape)}")
    if len(ranks) != d - 1:
        raise ConfigError(f"{where}.ranks: expected {_count(d - 1, 'rank')} for {_count(d, 'core')}, got {len(ranks)}")
    return LayerCfg(in_shape=in_shape, out_shape=out_shape, ranks=ranks, relu=relu)


def _formats(value: object) -> Formats:
    names = tuple(f.name for f in dataclasses.fields(Formats))
    obj = _object(value, "formats", optional=names)
    kwargs: dict[str, Any] = {}
    for key, item in obj.items():
        where = f"formats.{key}"
        if key in ("frac_min", "frac_max"):
            kwargs[key] = _int(item, where)
            continue
        if not (isinstance(item, list) and len(item) == 2):
            _fail(where, f"expected [width, frac], got {item!r}")
        width, frac = _int_list(item, where)
        try:
            kwargs[key] = Fmt(width, frac)
        except ValueError as e:
            raise ConfigError(f"{where}: {e}") from None
    formats = Formats(**kwargs)
    if formats.core.width > formats.master.width:
        raise ConfigError(
            f"formats.core: width {formats.core.width} exceeds the master width "
            f"{formats.master.width} (compute cores are derived from the master copy)"
        )
    derive_shift = formats.master.frac - formats.core.frac  # the compute cores are requantised from the master
    if not SHIFT_MIN <= derive_shift <= SHIFT_MAX:
        raise ConfigError(
            f"formats.master: {formats.master.frac} fraction bits against the core's "
            f"{formats.core.frac} make the compute cores' requantisation shift {derive_shift}, outside "
            f"the accelerator's {SHIFT_MIN}..{SHIFT_MAX}; use master fraction bits in "
            f"{formats.core.frac + SHIFT_MIN}..{formats.core.frac + SHIFT_MAX}"
        )
    if formats.frac_min >= formats.frac_max:
        raise ConfigError(f"formats.frac_min: {formats.frac_min} must be < frac_max {formats.frac_max}")
    for key in ADAPTIVE_FORMATS:
        frac = getattr(formats, key).frac
        if not formats.frac_min <= frac <= formats.frac_max:
            raise ConfigError(
                f"formats.{key}: initial fraction bits {frac} outside "
                f"frac_min..frac_max ({formats.frac_min}..{formats.frac_max})"
            )
    return formats


def _train(value: object) -> TrainCfg:
    obj = _object(value, "train", optional=tuple(f.name for f in dataclasses.fields(TrainCfg)))
    kwargs: dict[str, Any] = {}
    if "optimizer" in obj:
        kwargs["optimizer"] = _str(obj["optimizer"], "train.optimizer")
        if kwargs["optimizer"] not in OPTIMIZERS:
            raise ConfigError(
                f"train.optimizer: unknown optimizer {kwargs['optimizer']!r}; known: {', '.join(OPTIMIZERS)}"
            )
    if "lr" in obj:
        kwargs["lr"] = _number(obj["lr"], "train.lr", lo=0.0, lo_open=True)
    if "momentum" in obj:
        kwargs["momentum"] = _number(obj["momentum"], "train.momentum", lo=0.0, hi=1.0)
    if "beta2" in obj:
        kwargs["beta2"] = _number(obj["beta2"], "train.beta2", lo=0.0, hi=1.0, lo_open=True)
    if "eps" in obj:
        kwargs["eps"] = _number(obj["eps"], "train.eps", lo=0.0, lo_open=True)
    if "batch" in obj:
        kwargs["batch"] = _int(obj["batch"], "train.batch", lo=1)
    if "epochs" in obj:
        kwargs["epochs"] = _int(obj["epochs"], "train.epochs", lo=1)
    if "lr_schedule" in obj:
        kwargs["lr_schedule"] = _str(obj["lr_schedule"], "train.lr_schedule")
        if kwargs["lr_schedule"] not in LR_SCHEDULES:
            raise ConfigError(
                f"train.lr_schedule: unknown schedule {kwargs['lr_schedule']!r}; known: {', '.join(LR_SCHEDULES)}"
            )
    if "reuse_forward" in obj:
        kwargs["reuse_forward"] = _bool(obj["reuse_forward"], "train.reuse_forward")
    if "rank" in obj:
        kwargs["rank"] = _rank(obj["rank"])
    return TrainCfg(**kwargs)


def _rank(value: object) -> RankCfg:
    obj = _object(value, "train.rank", optional=tuple(f.name for f in dataclasses.fields(RankCfg)))
    kwargs: dict[str, Any] = {}
    if "enabled" in obj:
        kwargs["enabled"] = _bool(obj["enabled"], "train.rank.enabled")
    if "prior" in obj:
        kwargs["prior"] = _number(obj["prior"], "train.rank.prior", lo=0.0)
    if "threshold" in obj:
        kwargs["threshold"] = _number(obj["threshold"], "train.rank.threshold", lo=0.0, lo_open=True)
    if "every" in obj:
        kwargs["every"] = _int(obj["every"], "train.rank.every", lo=1)
    if "warmup_epochs" in obj:
        kwargs["warmup_epochs"] = _int(obj["warmup_epochs"], "train.rank.warmup_epochs", lo=0)
    if obj.get("end_epoch") is not None:
        warmup = kwargs.get("warmup_epochs", RankCfg.warmup_epochs)
        kwargs["end_epoch"] = _int(obj["end_epoch"], "train.rank.end_epoch", lo=1)
        if kwargs["end_epoch"] <= warmup:
            _fail(
                "train.rank.end_epoch",
                f"must be > warmup_epochs ({warmup}), or null for no end; got "
                f"{kwargs['end_epoch']} (the prune phase is the epochs warmup_epochs..end_epoch - 1)",
            )
    if obj.get("budget") is not None:
        kwargs["budget"] = _number(obj["budget"], "train.rank.budget", lo=0.0, hi=1.0, lo_open=True)
    if "recompile" in obj:
        kwargs["recompile"] = _bool(obj["recompile"], "train.rank.recompile")
    if "prior_scaling" in obj:
        kwargs["prior_scaling"] = _str(obj["prior_scaling"], "train.rank.prior_scaling")
        if kwargs["prior_scaling"] not in PRIOR_SCALINGS:
            _fail(
                "train.rank.prior_scaling",
                f"unknown scaling {kwargs['prior_scaling']!r}; known: {', '.join(PRIOR_SCALINGS)}",
            )
    for unit, warmup_key, end_key in (
        ("steps", "warmup_steps", "end_step"),
        ("samples", "warmup_samples", "end_sample"),
    ):
        kwargs.update(_phases_in(obj, unit, warmup_key, end_key))
    if kwargs.get("warmup_steps") is not None and kwargs.get("warmup_samples") is not None:
        _fail("train.rank.warmup_samples", "the phases are counted in one unit: give steps or samples, not both")
    if obj.get("budget_cycles") is not None:
        kwargs["budget_cycles"] = _int(obj["budget_cycles"], "train.rank.budget_cycles", lo=1)
        if kwargs.get("budget") is not None:
            _fail("train.rank.budget_cycles", "give the budget in parameters (budget) or in cycles, not both")
    if "budget_engine" in obj:
        engine = _object(
            obj["budget_engine"], "train.rank.budget_engine", optional=("lanes", "buf_depth", "vec", "drain")
        )
        kwargs["budget_engine"] = EngineCfg(
            **{k: _int(v, f"train.rank.budget_engine.{k}", lo=1) for k, v in engine.items()}
        )
    if "budget_target" in obj:
        kwargs["budget_target"] = _bool(obj["budget_target"], "train.rank.budget_target")
        if kwargs["budget_target"] and kwargs.get("budget") is None and kwargs.get("budget_cycles") is None:
            _fail("train.rank.budget_target", "needs a budget (train.rank.budget or budget_cycles) to reach")
    return RankCfg(**kwargs)


def _phases_in(obj: dict, unit: str, warmup_key: str, end_key: str) -> dict[str, Any]:
    """The phases of a rank config counted in `unit` (steps or samples), if it gives them: the warm-up's end is
    required, and the epoch form must be left at its defaults (warmup_epochs 1, end_epoch null), since a config
    written back by config_to_dict carries those."""
    warmup, end = obj.get(warmup_key), obj.get(end_key)
    if warmup is None and end is None:
        return {}
    if warmup is None:
        _fail(f"train.rank.{end_key}", f"give {warmup_key} too (0 for no warm-up): the phases are counted in one unit")
    if obj.get("warmup_epochs", RankCfg.warmup_epochs) != RankCfg.warmup_epochs or obj.get("end_epoch") is not None:
        _fail(
            f"train.rank.{warmup_key}",
            f"the phases are counted in one unit: drop warmup_epochs and end_epoch when giving {unit}",
        )
    out = {warmup_key: _int(warmup, f"train.rank.{warmup_key}", lo=0)}
    if end is not None:
        out[end_key] = _int(end, f"train.rank.{end_key}", lo=1)
        if out[end_key] <= out[warmup_key]:
            _fail(f"train.rank.{end_key}", f"must be > {warmup_key} ({out[warmup_key]}), or null for no end")
    return out


# --- typed field readers: each names the field it rejects ------------------------------------------------


def _fail(where: str, problem: str) -> NoReturn:
    raise ConfigError(f"{where}: {problem}")


def _kind(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _object(value: object, where: str, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()) -> dict:
    label = where or "config"
    if not isinstance(value, dict):
        _fail(label, f"expected an object, got {_kind(value)}")
    prefix = f"{where}." if where else ""
    allowed = required + optional
    for key in value:
        if key not in allowed:
            _fail(f"{prefix}{key}", f"unknown key; allowed: {', '.join(allowed)}")
    for key in required:
        if key not in value:
            _fail(f"{prefix}{key}", "missing")
    return value


def _str(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        _fail(where, f"expected a non-empty string, got {value!r}")
    return value


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        _fail(where, f"expected true or false, got {_kind(value)} {value!r}")
    return value


def _int(value: object, where: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"expected an integer, got {_kind(value)} {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        _fail(where, f"must be {bounds}, got {value}")
    return value


def _int_list(value: object, where: str, lo: int | None = None, hi: int | None = None) -> tuple[int, ...]:
    if not isinstance(value, list):
        _fail(where, f"expected a list of integers, got {_kind(value)}")
    return tuple(_int(item, f"{where}[{i}]", lo, hi) for i, item in enumerate(value))


def _number(value: object, where: str, lo: float, hi: float | None = None, lo_open: bool = False) -> float:
    """A finite number with lo <= value (or lo < value if lo_open) and value < hi."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(where, f"expected a finite number, got {_kind(value)} {value!r}")
    if value < lo or (lo_open and value == lo) or (hi is not None and value >= hi):
        low = f"> {lo}" if lo_open else f">= {lo}"
        _fail(where, f"must be {low}" + (f" and < {hi}" if hi is not None else "") + f", got {value}")
    return float(value)
