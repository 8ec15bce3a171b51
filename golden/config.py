"""Network configurations: shapes, ranks, number formats, optimizer and rank-adaptation settings.

A config is a JSON file (or one of the built-in names `tiny`, `digits`, `paper`, stored in golden/models/).
`load_config(name_or_path)` returns a validated `NetConfig`; anything invalid raises `ConfigError` naming the
field and the problem.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from golden.fxp import Fmt

MODELS_DIR = Path(__file__).resolve().parent / "models"
MAX_RANK = 64
MAX_CORES = 6


class ConfigError(ValueError):
    """A network config that cannot be built, with the offending field named."""


@dataclass(frozen=True)
class LayerCfg:
    """A TT-matrix layer: weight (prod(out_shape) x prod(in_shape)) as cores (r_{k-1}, m_k, n_k, r_k).

    A dense layer is the one-core case: in_shape=(N,), out_shape=(M,), ranks=()."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    ranks: tuple[int, ...]  # inner ranks r_1..r_{d-1}
    relu: bool

    @property
    def d(self) -> int:
        return len(self.in_shape)

    @property
    def n_in(self) -> int:
        return math.prod(self.in_shape)

    @property
    def n_out(self) -> int:
        return math.prod(self.out_shape)

    @property
    def full_ranks(self) -> tuple[int, ...]:
        return (1, *self.ranks, 1)

    def core_shape(self, k: int) -> tuple[int, int, int, int]:
        r = self.full_ranks
        return (r[k], self.out_shape[k], self.in_shape[k], r[k + 1])

    @property
    def n_core_params(self) -> int:
        return sum(math.prod(self.core_shape(k)) for k in range(self.d))


@dataclass(frozen=True)
class Formats:
    core: Fmt = Fmt(4, 3)
    master: Fmt = Fmt(8, 7)
    bias: Fmt = Fmt(16, 12)
    input: Fmt = Fmt(16, 7)
    act: Fmt = Fmt(16, 8)  # initial format of activations and forward intermediates (adapts)
    err: Fmt = Fmt(16, 14)  # output error of the softmax cross-entropy (fixed)
    bwd: Fmt = Fmt(16, 12)  # initial format of back-propagated errors and their intermediates (adapts)
    grad: Fmt = Fmt(16, 12)  # initial format of gradient buffers (adapts)
    momentum: Fmt = Fmt(16, 12)
    frac_min: int = -8  # bounds of every adaptive fraction
    frac_max: int = 30


@dataclass(frozen=True)
class RankCfg:
    enabled: bool = False
    prior: float = 5e-5  # weight of the MAP penalty sum ||slice||^2 / lambda
    threshold: float = 1e-3  # prune a slice whose lambda falls below this
    every: int = 1  # rank update every this many mini-batches
    warmup_epochs: int = 1  # no penalty and no pruning before this epoch


@dataclass(frozen=True)
class TrainCfg:
    optimizer: str = "sgd"  # "sgd" (with momentum) or "adam"
    lr: float = 0.05
    momentum: float = 0.9
    batch: int = 16
    epochs: int = 10
    rank: RankCfg = field(default_factory=RankCfg)


@dataclass(frozen=True)
class NetConfig:
    name: str
    input_size: int  # flattened image size before padding (e.g. 784)
    classes: int  # classes used; the last layer may have more (padded) outputs
    layers: tuple[LayerCfg, ...]
    formats: Formats = field(default_factory=Formats)
    train: TrainCfg = field(default_factory=TrainCfg)

    @property
    def padded_input(self) -> int:
        return self.layers[0].n_in

    @property
    def n_params(self) -> int:
        return sum(l.n_core_params + l.n_out for l in self.layers)
