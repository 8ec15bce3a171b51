"""Tests of rank adaptation (SPEC 5.6) in the bit-exact machine (golden/machine.py) on a synthetic problem with a
low-rank teacher, and of recompiling a pruned machine at smaller ranks (golden/compact.py): the same network, the
formats a new contraction order needs calibrated, ranks outside the live and the built ones refused."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from golden.compact import compact, kept_slices
from golden.compiler import core_name
from golden.config import LayerCfg
from golden.config_file import load_config
from golden.device import calibrate_machine
from golden.float_tt import tt_to_dense
from golden.machine import Machine
from golden.tests.test_machine import _cfg, _init_machine, _layer, _run_infer

# ---------------------------------------------------------------------------------------------------------
# (5) rank adaptation on a synthetic problem with a low-rank teacher


def _teacher_data(rng, w_t, n, margin=0.5):
    """Inputs uniform in [0, 1]^16, label = argmax of the teacher on the centred input, kept only with a
    clear margin so that the problem is learnable to high accuracy."""
    x = rng.random((4 * n, w_t.shape[1]))
    z = (x - 0.5) @ w_t.T
    zs = np.sort(z, axis=1)
    keep = np.flatnonzero(zs[:, -1] - zs[:, -2] > margin * np.abs(z).mean())[:n]
    assert len(keep) == n
    return x[keep], np.argmax(z[keep], axis=1)


def _rank_setup(prior, d_layer):
    layer = _layer(*d_layer, False)
    cfg = _cfg(
        [layer],
        classes=4,
        train={
            "lr": 0.05,
            "momentum": 0.9,
            "batch": 16,
            "epochs": 5,
            "rank": {"enabled": True, "prior": prior, "threshold": 1e-3, "every": 1, "warmup_epochs": 1},
        },
    )
    return cfg


def _bond_masks(m: Machine) -> dict:
    """(layer, bond) -> mask tensor, read from the rank_update program (ins: w_left, w_right, tau, mask)."""
    out = {}
    for op in m.comp.rank_update:
        w_left, w_right, _, mask = op.ins
        l, k = (int(s) for s in w_left[1:].split("."))
        out[(l, k)] = mask
    return out


def _check_pruned_slices_zero(m: Machine):
    masters, _ = m.float_params()
    live = m.live_ranks()
    pruned = {}
    for (l, k), mask in _bond_masks(m).items():
        layer = m.cfg.layers[l]
        bits = m.mem[mask]
        assert set(np.unique(bits)) <= {0, 1}
        assert int(bits.sum()) == live[l][k] >= 1, "a bond never reaches rank 0"
        gl = m.mem[core_name(l, k)].reshape(layer.core_shape(k))
        gr = m.mem[core_name(l, k + 1)].reshape(layer.core_shape(k + 1))
        for r in np.flatnonzero(bits == 0):
            assert not masters[l][k][..., r].any() and not masters[l][k + 1][r].any(), f"master slice {r}"
            assert not gl[..., r].any() and not gr[r].any(), f"compute slice {r}"
        pruned[(l, k)] = set(np.flatnonzero(bits == 0).tolist())
    return pruned


def _train_epochs(m, rng, x, y, epochs, warmup, pruned_log=None):
    """Train; with `pruned_log`, check after every update and every rank update that each pruned slice is zero
    (the update must not regrow it, the rank update must zero it at once) and log the pruned sets per epoch."""
    B = m.cfg.train.batch
    for ep in range(epochs):
        perm = rng.permutation(len(y))
        for b in range(len(y) // B):
            idx = perm[b * B : (b + 1) * B]
            m.train_batch(x[idx], y[idx])
            if pruned_log is not None:
                _check_pruned_slices_zero(m)
            if ep >= warmup:
                m.rank_update()
                if pruned_log is not None:
                    _check_pruned_slices_zero(m)
        if pruned_log is not None:
            pruned_log.append(_check_pruned_slices_zero(m))


def test_rank_adaptation_prunes_a_low_rank_teacher():
    rng = np.random.default_rng(0)
    shape = ([4, 4], [2, 2], [6])
    teacher = LayerCfg((4, 4), (2, 2), (1,), False)
    w_t = tt_to_dense([rng.standard_normal(teacher.core_shape(k)) for k in range(2)])
    x_train, y_train = _teacher_data(rng, w_t, 1024)
    x_test, y_test = _teacher_data(rng, w_t, 512)
    cfg = _rank_setup(1e-2, shape)
    m = _init_machine(cfg, seed=1, init_seed=5)
    xq, xq_test = m.quantize_input(x_train), m.quantize_input(x_test)
    calibrate_machine(m, xq[:16], y_train[:16])
    _train_epochs(m, rng, xq, y_train, 1, warmup=1)
    acc_warm = (m.infer(xq_test) == y_test).mean()
    assert m.live_ranks() == [[6]]
    log = []
    _train_epochs(m, rng, xq, y_train, 4, warmup=0, pruned_log=log)
    acc = (m.infer(xq_test) == y_test).mean()
    assert 1 <= m.live_ranks()[0][0] <= 3, m.live_ranks()
    assert acc >= 0.8 and acc >= acc_warm - 0.1, (acc_warm, acc)
    for before, after in zip(log, log[1:]):  # pruned for good
        assert all(before[b] <= after[b] for b in before)


def test_strong_prior_keeps_one_slice_per_bond():
    rng = np.random.default_rng(1)
    cfg = _rank_setup(1.0, ([2, 4, 2], [2, 2, 1], [4, 5]))
    m = _init_machine(cfg, seed=2, init_seed=2)
    x = m.quantize_input(rng.random((512, 16)))
    y = rng.integers(0, 4, size=512)
    log = []
    _train_epochs(m, rng, x, y, 3, warmup=0, pruned_log=log)
    assert m.live_ranks() == [[1, 1]]
    pruned = _check_pruned_slices_zero(m)
    assert [len(pruned[b]) for b in sorted(pruned)] == [3, 4]


# ---------------------------------------------------------------------------------------------------------
# recompiling a pruned machine at smaller ranks (golden/compact.py)


def _hand_pruned(pruned: dict) -> tuple[Machine, np.ndarray, np.ndarray]:
    """A rank-adapted machine after a few mini-batches, with the slices `pruned` ((layer, bond) -> slice indices)
    pruned by hand (their masks cleared, then the rank_prune program) and a few more mini-batches; its data."""
    rng = np.random.default_rng(3)
    m = _init_machine(_rank_setup(1e-3, ([2, 4, 2], [2, 2, 1], [4, 5])), seed=2, init_seed=2)
    x = m.quantize_input(rng.random((128, 16)))
    y = rng.integers(0, 4, size=128)
    calibrate_machine(m, x[:16], y[:16])
    _train_epochs(m, rng, x[:64], y[:64], 1, warmup=1)
    masks = _bond_masks(m)
    for bond, slices in pruned.items():
        m.mem[masks[bond]][slices] = 0
    m.run(m.comp.rank_prune, {}, None, observe=False)
    _train_epochs(m, rng, x[:64], y[:64], 1, warmup=1, pruned_log=[])
    return m, x, y


@pytest.mark.parametrize(
    "ranks, kept",
    [([[2, 2]], [[0, 2], [1, 3]]), ([[3, 4]], [[0, 1, 2], [0, 1, 2, 3]]), ([[4, 5]], [[0, 1, 2, 3], [0, 1, 2, 3, 4]])],
)
def test_compacted_machine_is_the_same_network(ranks, kept):
    """golden/compact.py: a pruned network recompiled at its live ranks ([[2, 2]]), at ranks that keep some pruned
    slices ([[3, 4]]) and at its own ranks ([[4, 5]]): the same logits bit for bit (inference rounds NEAREST), the
    live slices' words carried over in order, the kept pruned slices zero and masked; and training goes on with them
    zero. `kept`: the slices each bond keeps, by hand (the live ones, then the first pruned ones)."""

    m, x, y = _hand_pruned({(0, 0): [1, 3], (0, 1): [0, 2, 4]})
    assert m.live_ranks() == [[2, 2]]
    small = compact(m, ranks)
    assert [list(layer.ranks) for layer in small.cfg.layers] == ranks and small.live_ranks() == [[2, 2]]
    assert np.array_equal(_run_infer(small, x), _run_infer(m, x))
    keep = kept_slices(m, ranks)
    assert keep == [kept]
    w_old = m.mem["W0.1"].reshape(m.comp.tensors["W0.1"].shape)
    assert np.array_equal(
        small.mem["W0.1"].reshape(small.comp.tensors["W0.1"].shape), w_old[keep[0][0]][..., keep[0][1]]
    )
    assert small.stream.state == m.stream.state and small.frac == {n: f for n, f in m.frac.items() if n in small.frac}
    _check_pruned_slices_zero(small)
    # The same training too: with every draw 0 (rounding down) the draws' positions do not matter, and after a
    # mini-batch on both the logits, a core's live slices, the formats and the saturation counts are equal.
    big = copy.deepcopy(m)
    for machine in (big, small):
        machine.stream.take = lambda n: np.zeros(n, dtype=np.int64)
        machine.train_batch(x[64:80], y[64:80])
    assert np.array_equal(_run_infer(small, x), _run_infer(big, x))
    w_big = big.mem["W0.1"].reshape(big.comp.tensors["W0.1"].shape)
    assert np.array_equal(small.mem["W0.1"].reshape(small.comp.tensors["W0.1"].shape), w_big[kept[0]][..., kept[1]])
    assert small.frac == {n: big.frac[n] for n in small.frac} and small.sat_total == big.sat_total
    rng = np.random.default_rng(4)
    _train_epochs(small, rng, x, y, 1, warmup=1, pruned_log=[])
    assert small.live_ranks() == [[2, 2]]


def test_compact_calibrates_the_intermediates_of_a_new_contraction_order():
    """digits pruned to [[4, 3]]: its backward pass takes another order there, with an intermediate the full network
    has not. compact wants a calibration batch for its format, settles that format alone and puts every other part
    of the state back; inference is unchanged and training goes on."""

    cfg = load_config("digits")
    cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
    m = _init_machine(cfg, seed=3, init_seed=3)
    rng = np.random.default_rng(5)
    x = m.quantize_input(rng.random((64, 64)))
    y = rng.integers(0, 10, size=64)
    calibrate_machine(m, x[:32], y[:32])
    masks = _bond_masks(m)
    m.mem[masks[(0, 0)]][4:] = 0
    m.mem[masks[(0, 1)]][3:] = 0
    m.run(m.comp.rank_prune, {}, None, observe=False)
    with pytest.raises(ValueError, match=r"D0\.1\[EX1\+G0\.2\].*need a calibration batch"):
        compact(m, [[4, 3], []])
    small = compact(m, [[4, 3], []], calibration=(x[:32], y[:32]))
    new = sorted(set(small.frac) - set(m.frac))
    assert new == ["D0.1[EX1+G0.2]"]
    assert {n: f for n, f in small.frac.items() if n not in new} == {n: f for n, f in m.frac.items() if n in small.frac}
    assert small.stream.state == m.stream.state and small.samples_seen == m.samples_seen
    assert small.maxabs == {n: m.maxabs.get(n, 0) for n in small.maxabs}
    assert small.sat_by_tensor == {n: m.sat_by_tensor.get(n, 0) for n in small.sat_by_tensor}
    w_old = m.mem["W0.1"].reshape(m.comp.tensors["W0.1"].shape)
    assert np.array_equal(small.mem["W0.1"].reshape(small.comp.tensors["W0.1"].shape), w_old[:4][..., :3])
    assert all(not small.mem[n].any() for n in small.mem if n.startswith("d"))
    assert np.array_equal(_run_infer(small, x), _run_infer(m, x))
    small.train_batch(x[32:48], y[32:48])
    assert small.live_ranks() == [[4, 3], []]


def test_compact_refuses_ranks_below_the_live_ones_or_above_the_built():

    m, _, _ = _hand_pruned({(0, 0): [1, 3]})
    for bad, why in (
        ([[1, 5]], r"bond 0 of layer 0 at 1, outside 2 \(its live slices\) .. 4"),
        ([[2, 6]], "bond 1 of layer 0 at 6"),
        ([[2]], "layer 0 has 2 bonds"),
        ([[2, 2], []], "one list of inner ranks per layer"),
    ):
        with pytest.raises(ValueError, match=why):
            compact(m, bad)
