"""SPEC 5.2: an SGD step far below the master weights' LSB must leave them unchanged. With AXPBY's alignment
floored, every element whose step term was negative moved down with probability 1/256 per update (the 8-bit
stochastic rounding cannot resolve less), a drift no learning rate scaled."""

import copy

import numpy as np

from golden.compiler import compile_network
from golden.config_file import load_config
from golden.datasets import load_dataset
from golden.device import calibrate_machine
from golden.machine import Machine
from golden.train import init_float_params


def test_a_negligible_step_moves_no_master_weight():
    cfg = load_config("digits")
    comp = compile_network(cfg)
    data = load_dataset("digits")
    m = Machine(comp, 1)
    rng = np.random.default_rng(1)
    m.load_float_params(*init_float_params(cfg, rng))
    b = cfg.train.batch
    xq, y = m.quantize_input(data.train_x[: 4 * b]), data.train_y[: 4 * b]
    m.total_updates = 3
    calibrate_machine(m, xq[:b], y[:b])
    for u in range(1, 3):  # real updates first, so the momentum is non-zero with both signs
        m.train_batch(xq[u * b : (u + 1) * b], y[u * b : (u + 1) * b])
    masters = [n for n in m.mem if n.startswith("W")]
    assert any((m.mem["V" + n[1:]] < 0).any() and (m.mem["V" + n[1:]] > 0).any() for n in masters)
    tiny = copy.deepcopy(m)
    tiny.sgd_step = lambda: (1, 30)  # 2^-30 / B: about 10^-9 of an LSB per unit of momentum
    before = {n: tiny.mem[n].copy() for n in masters}
    tiny.train_batch(xq[3 * b :], y[3 * b :])
    moved = {n: int((tiny.mem[n] != before[n]).sum()) for n in masters}
    assert moved == {n: 0 for n in masters}
