"""Constrained-random networks for the top-level tests: shapes that factor, ranks, depths, class counts, batch
sizes and learning rates, drawn from a seed, each one compiled and checked to fit a fixed accelerator build."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from golden import program as P
from golden.arch import KIND_CONTRACT
from golden.compiler import compile_network
from golden.config_file import config_from_dict
from golden.ir import OpKind

# The one accelerator build every random network must fit (a new network is a new program, not new RTL).
# with the rank unit: half of the networks with a bond adapt their ranks (tb_tt_accel.random_networks)
PARAMS = P.AccelParams(
    bank_shift=11, bank_depth=(2048, 1024, 1024, 2048), bank_width=(16, 4, 8, 16), prog_depth=2048, rank=True
)
# the same build with MAC lanes: lane forms, vector loads and wide drains (every bank in rows of 4 words), preloads
LANE_PARAMS = replace(PARAMS, lanes=4, buf_depth=64, vec=4, bank_vec=(True,) * len(PARAMS.bank_depth), drain=4)


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


def random_config(rng: np.random.Generator, index: int, params: P.AccelParams = PARAMS, preload: bool = False):
    """A random TT network that compiles and fits `params` (redrawn until it does; with `preload`, also until a
    contraction of its programs is preloaded, golden/program.py link_preloads)."""
    while True:
        d = int(rng.integers(1, 4))
        n_in = int(rng.choice([8, 12, 16, 18, 24, 27, 32]))
        hidden = int(rng.choice([4, 6, 8, 12, 16]))
        classes = int(rng.integers(2, 7))
        n_out = classes + int(rng.integers(0, 3))  # padded outputs beyond the classes
        layers = []
        for k, (i, o, relu) in enumerate(((n_in, hidden, True), (hidden, n_out, False))):
            dd = d if k == 0 else int(rng.integers(1, 3))
            layers.append(
                {
                    "in_shape": _factors(i, dd, rng),
                    "out_shape": _factors(o, dd, rng),
                    "ranks": [int(rng.integers(1, 5)) for _ in range(dd - 1)],
                    "relu": relu,
                }
            )
        data = {
            "name": f"random{index}",
            "input_size": n_in - int(rng.integers(0, 3)),
            "classes": classes,
            "layers": layers,
            "train": {
                "optimizer": "sgd",
                "lr": float(rng.choice([0.01, 0.05, 0.2])),
                "momentum": 0.9,
                "batch": int(rng.integers(1, 5)),
                "epochs": 1,
            },
        }
        cfg = config_from_dict(data)
        image = assembled(cfg, params)
        if image and (not preload or any(r.kind == KIND_CONTRACT and r.desc.preloaded for r in image.records)):
            return cfg


def assembled(cfg, params: P.AccelParams = PARAMS) -> P.Image | None:
    """The network's program image for `params`, or None where it does not fit (banks and program memory)."""
    comp = compile_network(cfg)
    try:
        P.check_fits(comp, params)
        return P.assemble(comp, params, {n: t.fmt.frac for n, t in comp.tensors.items()}, host_step=(1, 0))
    except P.ProgramError:
        return None


def run_row_neighbours(cfg, params: P.AccelParams = LANE_PARAMS) -> list[str]:
    """The contractions of train_sample that read runs of their a (lane sums, rows) from a bank row they also write
    (a's words and the output's share the row): what the regression network row_shared is kept to test."""
    comp = compile_network(cfg)
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}

    def rows(name: str) -> set[int]:
        base, size = comp.layout[name][1], comp.tensors[name].size
        return set(range(base // params.vec, (base + size - 1) // params.vec + 1))

    found = []
    for op in comp.train_sample:
        if op.kind != OpKind.CONTRACT:
            continue
        d = P.contract_desc(comp, params, op, frac)
        if not (d.lane_sum or d.rows) or d.banks[0] != d.banks[2]:
            continue
        if rows(d.names[0]) & rows(d.names[2]):
            found.append(op.spec)
    return found


def ragged_rows(cfg, params: P.AccelParams = LANE_PARAMS) -> list[str]:
    """The contractions of train_sample in rows whose last chunk has idle rows and whose a is read in runs off their
    alignment to R (golden/isa/contract.py rows; with a stride of 3 some of them cross into the next bank row): what the
    regression network idle_rows is kept to test."""
    comp = compile_network(cfg)
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    found = []
    for op in comp.train_sample:
        if op.kind != OpKind.CONTRACT:
            continue
        d = P.contract_desc(comp, params, op, frac)
        r = d.row_lanes
        if d.rows and d.idle_rows and (d.a_base % r or any(lp.sa % r for lp in d.out_loops[:-2] + d.red_loops)):
            found.append(op.spec)
    return found


# Networks that once broke the RTL, run by the build with lanes after its first (random) network. Each comes with its
# story and a check that the network, as the test runs it (rank adaptation may be added), still has the property
# that made it fail: a compiler change could otherwise take the test's point away silently.
REGRESSION_NETWORKS = [
    # On LANE_PARAMS, train_sample's second contraction `cae,eda->cd` (a lane sum of R = 2 over its a at
    # act 18..29, output at act 30..41) read a's last run (words 28..29) as the whole bank row 28..31 while its drain
    # wrote word 31: tt_bank's no_rw_check checker stopped the run. A read takes only its run's columns.
    (
        {
            "name": "row_shared",
            "input_size": 16,
            "classes": 6,
            "layers": [
                {"in_shape": [2, 9], "out_shape": [4, 3], "ranks": [2], "relu": True},
                {"in_shape": [12], "out_shape": [6], "ranks": [], "relu": False},
            ],
            "train": {"optimizer": "sgd", "lr": 0.01, "momentum": 0.9, "batch": 2, "epochs": 1},
        },
        lambda cfg, params: bool(run_row_neighbours(cfg, params)),
    ),
    # Rows over counts R does not divide (idle rows in the last chunk) over runs of a that start anywhere in
    # a bank row (tt_bank reads the columns before the run's first one a row further on). Kept to test both in the
    # whole accelerator: `cae,ab->ebc` takes rows of 2 over b = 3 (one idle row) of the input X0, whose a steps by 3;
    # `hfj,fg->hjg` rows of 4 over the rank j = 2 (two idle rows, one chunk) of the core G1.0, whose f steps by 2.
    (
        {
            "name": "idle_rows",
            "input_size": 24,
            "classes": 3,
            "layers": [
                {"in_shape": [8, 3], "out_shape": [2, 4], "ranks": [1], "relu": True},
                {"in_shape": [8, 1], "out_shape": [3, 1], "ranks": [2], "relu": False},
            ],
            "train": {"optimizer": "sgd", "lr": 0.01, "momentum": 0.9, "batch": 2, "epochs": 1},
        },
        lambda cfg, params: bool(ragged_rows(cfg, params)),
    ),
]


def fits(cfg, params: P.AccelParams = PARAMS) -> bool:
    """Does the network's program image fit `params`."""
    return assembled(cfg, params) is not None


def shape_class(cfg) -> str:
    return f"{len(cfg.layers[0].in_shape)} cores, {math.prod(cfg.layers[0].in_shape)} inputs"
