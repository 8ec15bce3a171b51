"""Constrained-random networks for the top-level tests: shapes that factor, ranks, depths, class counts, batch
sizes and learning rates, drawn from a seed, each one compiled and checked to fit a fixed accelerator build."""
from __future__ import annotations

import math

import numpy as np

from golden import program as P
from golden.compiler import compile_network
from golden.config import config_from_dict

# The one accelerator build every random network must fit (a new network is a new program, not new RTL).
PARAMS = P.AccelParams(bank_shift=11, bank_depth=(2048, 1024, 1024, 2048), bank_width=(16, 4, 8, 16), prog_depth=2048)


def _factors(n: int, d: int, rng: np.random.Generator) -> list[int]:
    """n as a product of d factors >= 1 in random order (n is built from them, so it always factors)."""
    out = [1] * d
    for p in _primes(n):
        out[int(rng.integers(d))] *= p
    return out


def _primes(n: int) -> list[int]:
    out, k = [], 2
    while n > 1:
        while n % k == 0:
            out.append(k)
            n //= k
        k += 1
    return out


def random_config(rng: np.random.Generator, index: int):
    """A random TT network that compiles and fits PARAMS (redrawn until it does)."""
    while True:
        d = int(rng.integers(1, 4))
        n_in = int(rng.choice([8, 12, 16, 18, 24, 27, 32]))
        hidden = int(rng.choice([4, 6, 8, 12, 16]))
        classes = int(rng.integers(2, 7))
        n_out = classes + int(rng.integers(0, 3))  # padded outputs beyond the classes
        layers = []
        for k, (i, o, relu) in enumerate(((n_in, hidden, True), (hidden, n_out, False))):
            dd = d if k == 0 else int(rng.integers(1, 3))
            layers.append({"in_shape": _factors(i, dd, rng), "out_shape": _factors(o, dd, rng),
                           "ranks": [int(rng.integers(1, 5)) for _ in range(dd - 1)], "relu": relu})
        data = {"name": f"random{index}", "input_size": n_in - int(rng.integers(0, 3)), "classes": classes,
                "layers": layers,
                "train": {"optimizer": "sgd", "lr": float(rng.choice([0.01, 0.05, 0.2])), "momentum": 0.9,
                          "batch": int(rng.integers(1, 5)), "epochs": 1}}
        cfg = config_from_dict(data)
        if fits(cfg):
            return cfg


def fits(cfg) -> bool:
    """Does the network's program image fit PARAMS (banks and program memory)."""
    comp = compile_network(cfg)
    try:
        P.check_fits(comp, PARAMS)
        P.assemble(comp, PARAMS, {n: t.fmt.frac for n, t in comp.tensors.items()}, host_step=(1, 0))
    except P.ProgramError:
        return False
    return True


def shape_class(cfg) -> str:
    return f"{len(cfg.layers[0].in_shape)} cores, {math.prod(cfg.layers[0].in_shape)} inputs"
