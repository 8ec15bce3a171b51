"""Network configurations: shapes, ranks, number formats, optimizer and rank-adaptation settings, as frozen
dataclasses with their defaults. golden/config_file.py reads and writes their JSON form (the schema, the built-in
configs in golden/models/, ConfigError naming the field that is wrong).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from golden.fxp import Fmt

MODELS_DIR = Path(__file__).resolve().parent / "models"
MAX_RANK = 64
MAX_CORES = 6
OPTIMIZERS = ("sgd", "adam")
LR_SCHEDULES = ("constant", "cosine")
PRIOR_SCALINGS = ("per_sample", "map")
ADAPTIVE_FORMATS = ("act", "bwd", "grad")  # formats whose fraction bits move within [frac_min, frac_max]
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")  # a config's name is part of output paths: no / or ..


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
    adam_m: Fmt = Fmt(16, 8)  # Adam first moment of the batch-summed gradient
    adam_v: Fmt = Fmt(32, 16)  # Adam second moment
    frac_min: int = -8  # bounds of every adaptive fraction
    frac_max: int = 30


@dataclass(frozen=True)
class EngineCfg:
    """The contraction engine a cycles budget is costed on (golden/cost.py): as make's LANES, BUF_DEPTH, VEC, DRAIN."""

    lanes: int = 8
    buf_depth: int = 512
    vec: int = 8
    drain: int = 8


@dataclass(frozen=True)
class RankCfg:
    enabled: bool = False
    prior: float = 5e-5  # weight of the MAP penalty sum ||slice||^2 / lambda
    threshold: float = 1e-3  # prune a slice whose lambda falls below this
    every: int = 1  # rank update every this many mini-batches
    warmup_epochs: int = 1  # no penalty and no pruning before this epoch
    end_epoch: int | None = None  # from this epoch on: no penalty, no pruning, fine-tune at fixed ranks (None: never)
    budget: float | None = None  # the prune phase also ends once live core params <= budget * full (None: never)
    recompile: bool = False  # at the end of the prune phase: recompile at smaller ranks (golden/compact.py)
    prior_scaling: str = "per_sample"  # "per_sample": prior per training sample; "map": per data set (batch / N)
    warmup_steps: int | None = None  # the phases in optimizer steps instead of epochs
    end_step: int | None = None
    warmup_samples: int | None = None  # the phases in training samples instead of epochs
    end_sample: int | None = None
    budget_target: bool = False  # the budget is a target: prune by lambda where the prior lags (module docstring)
    budget_cycles: int | None = None  # the budget in cycles a training sample on budget_engine instead of budget
    budget_engine: EngineCfg = field(default_factory=EngineCfg)

    @property
    def phase_unit(self) -> str:
        """The unit the phases are counted in: "epochs", "steps" or "samples"."""
        if self.warmup_steps is not None:
            return "steps"
        if self.warmup_samples is not None:
            return "samples"
        return "epochs"

    def phases(self) -> tuple[int, int | None]:
        """(the warm-up's end, the prune end or None) in `phase_unit`."""
        if self.phase_unit == "steps":
            assert self.warmup_steps is not None
            return self.warmup_steps, self.end_step
        if self.phase_unit == "samples":
            assert self.warmup_samples is not None
            return self.warmup_samples, self.end_sample
        return self.warmup_epochs, self.end_epoch


@dataclass(frozen=True)
class TrainCfg:
    optimizer: str = "sgd"  # "sgd" (with momentum) or "adam"
    lr: float = 0.05
    momentum: float = 0.9  # SGD momentum, and Adam's beta1
    beta2: float = 0.999  # Adam's second-moment decay
    eps: float = 1e-8  # Adam's epsilon (on the batch-mean gradient)
    batch: int = 16
    epochs: int = 10
    reuse_forward: bool = True  # keep forward partial products for the backward pass (fewer MACs, more memory)
    lr_schedule: str = "constant"  # "constant" or "cosine" (decay to 0 over the run)
    rank: RankCfg = field(default_factory=RankCfg)

    def lr_at(self, update: int, total: int) -> float:
        """Learning rate of update `update` (0-based) of `total`; the host writes it before each update."""
        if self.lr_schedule == "cosine" and total > 0:
            return self.lr * 0.5 * (1.0 + math.cos(math.pi * min(update, total) / total))
        return self.lr


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


# --- loading ---------------------------------------------------------------------------------------------


def core_params_at(layers, ranks: list[list[int]]) -> int:
    """The TT core parameters of `layers` (LayerCfg) at inner ranks `ranks`, one list per layer."""
    total = 0
    for layer, inner in zip(layers, ranks):
        r = (1, *inner, 1)
        total += sum(r[k] * layer.out_shape[k] * layer.in_shape[k] * r[k + 1] for k in range(layer.d))
    return total
